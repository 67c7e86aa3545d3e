// The expected table of end-to-end guarantees (docs/guarantees.md: sources {not replayable, replayable} x
// sinks {any, idempotent, write-ahead log, two-phase commit}) and how a measured outcome maps onto it.
//
// A cell's outcome counts, over all its runs, the results lost (in the failure-free run's output, missing) and
// duplicated (present more often than in it). Its measured guarantee is the strongest one no run broke:
// exactly-once (nothing lost, nothing duplicated), at-least-once (nothing lost), else at-most-once - the
// polite name for "no guarantee": a run that lost results may also have duplicated some.
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::guarantees {

enum class SourceKind { kNotReplayable, kReplayable };
enum class SinkKind { kPlain, kIdempotent, kWriteAheadLog, kTwoPhaseCommit };
enum class Guarantee { kAtMostOnce, kAtLeastOnce, kExactlyOnce };

inline constexpr std::array<SourceKind, 2> kSourceKinds{SourceKind::kNotReplayable, SourceKind::kReplayable};
inline constexpr std::array<SinkKind, 4> kSinkKinds{SinkKind::kPlain, SinkKind::kIdempotent, SinkKind::kWriteAheadLog,
                                                   SinkKind::kTwoPhaseCommit};

const char* source_kind_name(SourceKind s);  // "not replayable", "replayable"
const char* sink_kind_name(SinkKind s);      // "plain", "idempotent", "write-ahead log", "two-phase commit"
const char* guarantee_name(Guarantee g);     // "at-most-once", "at-least-once", "exactly-once"

// The expected cell (docs/guarantees.md).
Guarantee expected_guarantee(SourceKind source, SinkKind sink);

struct CellOutcome {
  int64_t runs = 0;
  int64_t failures = 0;    // failures injected (and recovered from) over the runs
  int64_t expected = 0;    // results of the failure-free run, summed over the runs
  int64_t lost = 0;
  int64_t duplicated = 0;
};
Guarantee measured_guarantee(const CellOutcome& outcome);

struct Cell {
  SourceKind source;
  SinkKind sink;
  std::string target;    // where the sink wrote: "files", "SQLite", "PostgreSQL", "Kafka"
  std::string scenario;  // how the cell was tested (its failure points)
  CellOutcome outcome;
  std::string error;     // a run that could not be carried out (the cell is then a mismatch)
};

// The table as text: the expected cells and the measured ones side by side, one block per target, then a line per
// cell (runs, failures, lost, duplicated, scenario), then one line starting "MISMATCH" per cell whose measured
// guarantee differs from the expected one (or that failed to run). Returns the number of mismatches in *mismatches.
std::string format_table(const std::vector<Cell>& cells, int* mismatches);

}  // namespace sluice::guarantees
