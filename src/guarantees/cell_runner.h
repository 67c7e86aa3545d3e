// Runs one cell of the guarantee table: the keyed job of cell_job.h on a target, fed in phases from a RecordLog,
// with checkpoints triggered by the driver (no periodic ones), failures injected at chosen points, and the
// target's contents compared with the failure-free results.
//
//  - run_adversarial: the one deterministic failure point that breaks what the cell's weaker guarantee allows
//    (phase 1; checkpoint 1 completes; phase 2 enters the job; then):
//      not replayable, any sink: a task fails before any checkpoint covers phase 2: phase 2 was taken from the
//        log and cannot be read again - lost (at-most-once);
//      replayable, plain or idempotent: checkpoint 2's barrier makes the sink write phase 2 out, then a task fails
//        between its synchronous and asynchronous snapshot, so checkpoint 2 never completes and phase 2 is
//        replayed from checkpoint 1 - written twice by the plain sink, rewritten by the idempotent one;
//      replayable, write-ahead log: checkpoint 2 completes, the sink writes its batch and fails before the
//        marker - the restore writes the batch again;
//      replayable, two-phase commit: checkpoint 2 completes and the sink fails before committing it - the
//        restore commits it.
//    Then phase 3 and the end of input.
//  - run_seeded: 3 to 5 phases of seeded sizes, one or two failures of seeded classes (runtime::kFailureClasses:
//    source, keyed operator, sink pre-commit, between sync and async snapshot, between completion and commit) at
//    seeded phases, and seeded checkpoints in between.
// Each run uses its own folder under `work_dir` (removed afterwards unless keep) and its own job.
// Errors: a run that cannot be carried out (the job fails, a wait times out, the target cannot be read) returns
// the error; the caller marks the cell.
#pragma once

#include <cstdint>
#include <string>

#include "guarantees/cell_job.h"

namespace sluice::guarantees {

struct RunSettings {
  std::string work_dir;            // scratch folders of the runs are created here
  int64_t records_per_phase = 400;  // adversarial runs; seeded ones vary around it
  int32_t keys = 40;
  int64_t timeout_ms = 60'000;     // for every wait of a run
  bool keep = false;               // keep the run folders (debugging)
};

struct RunResult {
  int64_t expected = 0;  // results of the failure-free run
  int64_t lost = 0;
  int64_t duplicated = 0;
  int64_t failures = 0;  // injected and recovered from
};

Result<RunResult> run_adversarial(CellTarget& target, SourceKind source, SinkKind sink, const RunSettings& settings);
Result<RunResult> run_seeded(CellTarget& target, SourceKind source, SinkKind sink, uint64_t seed,
                             const RunSettings& settings);

// Compares a target's contents with the failure-free results of the records 0..records-1 (key = v % keys).
RunResult compare_with_failure_free(const TargetContents& got, int64_t records, int32_t keys);

// What run_adversarial does for a cell, in a few words (for the report).
std::string adversarial_scenario(SourceKind source, SinkKind sink);

}  // namespace sluice::guarantees
