// The Nexmark query registry: every query `sluice nexmark --query qN` and the engine benchmark can run, with a
// one-line description, the function that adds it to a job, and its reference check (docs/nexmark.md).
//
// Adding a query: its qN.{h,cc} (DataStream<reference::QNRow> qN(const DataStream<Event>&), public API only),
// one line in all_queries() (queries.cc), and the source file in CMakeLists.txt.
//
//   StreamExecutionEnvironment env;
//   auto events = nexmark_events(env, source_options);
//   std::unique_ptr<QueryRun> run = find_query("q5")->add(events, {OutputMode::kCollect, ""});
//   env.execute("q5");
//   Status s = run->verify(source_options.generator, num_events);
//
// Thread-safety: the registry is immutable; a QueryRun is read after the job finished (output_rows() any time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exactly_once_collect.h"
#include "file_rows.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/connectors/nexmark/reference/reference.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

// The name of the source operator (metrics scope "<job>.nexmark-source.<subtask>").
inline constexpr const char* kSourceName = "nexmark-source";

// The event stream every query reads: the Nexmark source with event time from each event's date_time and
// per-split watermarks that never make an event late (docs/nexmark.md, "Watermarks"): monotonous timestamps for
// the in-order generator; for out_of_order_group_size G > 1 a bounded out-of-orderness of the time G events
// take, rounded up to a whole ms, plus 1 ms. No idleness timeout.
DataStream<Event> nexmark_events(StreamExecutionEnvironment& env, const NexmarkSourceOptions& options);

enum class OutputMode : uint8_t {
  kDiscard,  // count the rows and drop them (benchmarks)
  kCollect,  // keep them, exactly once (ExactlyOnceCollectSink), for verify(); one process only
  kFiles,    // exactly-once part files in QueryOutput::dir (file_rows.h), for verify() from any process
};

struct QueryOutput {
  OutputMode mode = OutputMode::kDiscard;
  std::string dir;  // kFiles: the folder (local or shared; empty or missing at the start)
};

// One query added to a job.
class QueryRun {
 public:
  virtual ~QueryRun() = default;
  // Rows the query's sink received (kDiscard) or committed (kCollect: in this process; kFiles: in the folder, all
  // processes', read when asked).
  virtual int64_t output_rows() const = 0;
  // kCollect or kFiles, after the job finished: the committed rows against the reference over event numbers
  // [0, num_events) of `config`. FailedPrecondition naming the first differing row (or, for digests, the
  // differing digests and then the first differing row); FailedPrecondition too when the run was kDiscard; the
  // errors of read_row_files for kFiles.
  virtual Status verify(const GeneratorConfig& config, int64_t num_events) const = 0;
};

struct Query {
  std::string name;         // "q5"
  std::string description;  // one line
  std::function<std::unique_ptr<QueryRun>(const DataStream<Event>& events, const QueryOutput& output)> add;
};

// Every registered query, in the order of their names' numbers.
const std::vector<Query>& all_queries();
// nullptr if no query has this name.
const Query* find_query(std::string_view name);
// "q0, q1, ..." for messages.
std::string query_names();

// ---- building blocks for registry entries ------------------------------------------------------------------

// Checks a query's committed rows: Ok or FailedPrecondition naming the first difference.
template <class Row>
using RowCheck = std::function<Status(std::string_view query, const reference::EventInput& input, const std::vector<Row>& rows)>;

// Equality with reference_qN's rows, as multisets.
template <class Row>
RowCheck<Row> equals(std::vector<Row> (*reference_rows)(const reference::EventInput&)) {
  return [reference_rows](std::string_view query, const reference::EventInput& input, const std::vector<Row>& rows) {
    return reference::compare_multiset(query, reference_rows(input), rows);
  };
}
// The same through reference_digest_qN first (one row per bid: q0 - q2), and the row comparison only to name
// the first difference when the digests differ.
template <class Row>
RowCheck<Row> equals_by_digest(reference::MultisetDigest (*reference_digest)(const reference::EventInput&),
                               std::vector<Row> (*reference_rows)(const reference::EventInput&)) {
  return [reference_digest, reference_rows](std::string_view query, const reference::EventInput& input,
                                            const std::vector<Row>& rows) {
    const reference::MultisetDigest expected = reference_digest(input);
    const reference::MultisetDigest actual = reference::digest_of(rows);
    if (expected == actual) return Status::ok();
    Status detail = reference::compare_multiset(query, reference_rows(input), rows);
    return detail.is_ok() ? reference::compare_digests(query, expected, actual) : detail;
  };
}
// An invariant check over the rows (q12: reference::check_q12).
template <class Row>
RowCheck<Row> satisfies(Status (*check)(const reference::EventInput&, const std::vector<Row>&)) {
  return [check](std::string_view, const reference::EventInput& input, const std::vector<Row>& rows) {
    return check(input, rows);
  };
}

namespace detail {
template <class Row>
class TypedQueryRun final : public QueryRun {
 public:
  TypedQueryRun(std::string name, RowCheck<Row> check) : name_(std::move(name)), check_(std::move(check)) {}
  int64_t output_rows() const override {
    if (!files_dir_.empty()) {
      Result<std::vector<Row>> rows = read_row_files<Row>(files_dir_);
      return rows.is_ok() ? static_cast<int64_t>(rows->size()) : 0;
    }
    return collected_ ? collected_->size() : counted_->load();
  }
  Status verify(const GeneratorConfig& config, int64_t num_events) const override {
    if (!files_dir_.empty()) {
      SLUICE_ASSIGN_OR_RETURN(std::vector<Row> rows, read_row_files<Row>(files_dir_));
      return check_(name_, reference::EventInput(config, num_events), rows);
    }
    if (!collected_) {
      return Status::failed_precondition(name_ + ": verify() needs a run with OutputMode::kCollect or kFiles");
    }
    return check_(name_, reference::EventInput(config, num_events), collected_->rows());
  }
  std::shared_ptr<CommittedRows<Row>> collected_;
  std::string files_dir_;  // kFiles
  std::shared_ptr<std::atomic<int64_t>> counted_ = std::make_shared<std::atomic<int64_t>>(0);

 private:
  std::string name_;
  RowCheck<Row> check_;
};
}  // namespace detail

// A registry entry: `build` adds the query's operators, the sink goes after them.
template <class Row>
Query make_query(std::string name, std::string description, DataStream<Row> (*build)(const DataStream<Event>&),
                 RowCheck<Row> check) {
  Query q;
  q.name = name;
  q.description = std::move(description);
  q.add = [name, build, check](const DataStream<Event>& events, const QueryOutput& output) -> std::unique_ptr<QueryRun> {
    auto run = std::make_unique<detail::TypedQueryRun<Row>>(name, check);
    DataStream<Row> rows = build(events);
    if (output.mode == OutputMode::kFiles) {
      run->files_dir_ = output.dir;
      rows.sink_to(file::TransactionalFileSink<Row>(output.dir, append_row_line<Row>)).name(name + "-sink").uid(name + "-sink");
    } else if (output.mode == OutputMode::kCollect) {
      run->collected_ = std::make_shared<CommittedRows<Row>>();
      rows.sink_to(ExactlyOnceCollectSink<Row>(run->collected_)).name(name + "-sink").uid(name + "-sink");
    } else {
      rows.sink_to(CountingDiscardSink<Row>(run->counted_)).name(name + "-sink").uid(name + "-sink");
    }
    return run;
  };
  return q;
}

}  // namespace sluice::nexmark::queries
