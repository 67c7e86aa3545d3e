// StreamExecutionEnvironment: where a program is built and executed (Flink's class of the same name).
//
//   sluice::StreamExecutionEnvironment env;          // defaults; or env(config), or from_args(argc, argv)
//   env.set_parallelism(2);
//   env.from_source(src, "events").map(...).key_by(...).process(...).sink_to(sink);
//   auto result = env.execute("my-job");            // runs on the in-process MiniCluster
//
// Configuration keys follow Flink's names (docs/configuration.md); checkpointing is off unless enabled
// (docs/checkpoints.md). execute() blocks until the job ends; execute_async() returns a JobClient at once.
// Errors: an invalid program (bad parallelism, forward edge between different parallelisms, max
// parallelism out of range) returns kInvalidArgument from execute/execute_async before anything runs; a
// failing job returns a result whose status is FAILED and whose error names operator and subtask.
// Thread-safety: build and execute from one thread; the JobClient may be used from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/api/datastream.h"
#include "sluice/api/job_client.h"
#include "sluice/api/stream_graph.h"
#include "sluice/config/configuration.h"
#include "sluice/config/options.h"
#include "sluice/core/clock.h"
#include "sluice/core/name_source.h"
#include "sluice/operators/source_operator.h"
#include "sluice/source/generator_source.h"
#include "sluice/state/state_backend.h"

namespace sluice {

namespace fs {
class FileSystemRegistry;  // src/fs/file_system_registry.h
}

class StreamExecutionEnvironment {
 public:
  explicit StreamExecutionEnvironment(Configuration config = Configuration());

  // Sluice's command-line flags (sluice/api/program_args.h lists them): `--config FILE`, `-D key=value`, `--restore
  // PATH|latest`, `--claim-mode`, `--allow-non-restored-state`, `--rehash-key-groups`, `--summary-json FILE`, `--role
  // jobmanager|taskmanager` (docs/cluster.md), `--check-restore PATH` (execute() only checks whether the job would
  // restore PATH, prints the report, exits: 0 it would, 1 not; docs/savepoints.md); `--help` prints them, exits 0.
  // Any other argument is refused, so a mistyped --restore cannot start afresh (parse_program_args hands them to a
  // program with flags of its own). Errors (kInvalidArgument, kNotFound, kIoError) name the argument or the file.
  static Result<StreamExecutionEnvironment> from_args(int argc, const char* const* argv);

  // Default parallelism of operators that set none (parallelism.default).
  StreamExecutionEnvironment& set_parallelism(int32_t parallelism);
  int32_t parallelism() const;
  // Checkpoints every interval_ms milliseconds in `mode` (Flink's enableCheckpointing): sets
  // execution.checkpointing.interval and execution.checkpointing.mode, as -D would (docs/checkpoints.md lists the
  // other execution.checkpointing.* keys, e.g. state.checkpoints.dir). Throws std::invalid_argument naming the key
  // when interval_ms is not positive.
  StreamExecutionEnvironment& enable_checkpointing(int64_t interval_ms,
                                                   CheckpointingMode mode = CheckpointingMode::kExactlyOnce);
  // Number of key groups (pipeline.max-parallelism); -1 derives it from the parallelism.
  StreamExecutionEnvironment& set_max_parallelism(int32_t max_parallelism);
  int32_t max_parallelism() const;
  // Job properties: facts about the job that decide what its state means (e.g. the demo's seed and event
  // count). Recorded in every checkpoint's _metadata; a restore (execution.state-recovery.path) refuses a
  // checkpoint whose recorded properties differ from these, naming each differing key with both values.
  StreamExecutionEnvironment& set_job_property(std::string key, std::string value);
  const std::map<std::string, std::string>& job_properties() const { return job_properties_; }
  Configuration& configuration() { return config_; }
  const Configuration& configuration() const { return config_; }
  // Processing-time source for every task of jobs executed from here (default: the system clock).
  void set_clock(std::shared_ptr<Clock> clock) { clock_ = std::move(clock); }
  // The RocksDB options factory of jobs executed from here (state.backend.type: rocksdb); null: none. Defined
  // in sluice/state/rocksdb_options_factory.h (which includes RocksDB's headers).
  void set_rocksdb_options_factory(std::shared_ptr<const RocksDBOptionsFactory> factory) {
    rocksdb_options_factory_ = std::move(factory);
  }

  // The filesystems (by URI scheme) that checkpoint storage, savepoints, restores and file sinks of jobs executed
  // from here use. Null (the default): fs::file_systems_from(configuration()) at each execute, so each job creates its own
  // S3 client. A registry shares the filesystems it created with its copies, so a caller that keeps one sees
  // the filesystem a job used (a benchmark reads the S3 client's request counters through it).
  void set_file_systems(std::shared_ptr<const fs::FileSystemRegistry> file_systems) {
    file_systems_ = std::move(file_systems);
  }
  // Where the random names of jobs executed from here come from (sluice/core/name_source.h): the job id (unless
  // $internal.pipeline.job-id fixes it), the unique suffixes of checkpoint files and RocksDB uploads, S3 entropy,
  // RocksDB working folders, savepoint folders and trigger ids, and S3 leftover objects (when the filesystems come
  // from the configuration, not set_file_systems). NameSource::seeded(s) makes two runs name everything alike. Null
  // (the default): a fresh random source per execute. Jobs executed one after another share a set source, so a
  // second run draws on from where the first stopped; set a new one to repeat a run.
  void set_name_source(std::shared_ptr<NameSource> names) { names_ = std::move(names); }

  // ---- sources ---------------------------------------------------------------------------------
  template <class S>
  DataStream<typename S::element_type> from_source(S source, std::string name) {
    return from_source_impl(std::move(source), std::nullopt, std::move(name));
  }
  // With event time: each split of the source gets its own watermark generator from `strategy`, combined per
  // subtask (source/source_watermarks.h); records get their timestamps from the strategy's assigner.
  template <class S>
  DataStream<typename S::element_type> from_source(S source, WatermarkStrategy<typename S::element_type> strategy,
                                                   std::string name) {
    return from_source_impl(std::move(source), std::move(strategy), std::move(name));
  }
  template <class S>
  DataStream<typename S::element_type> from_source_impl(
      S source, std::optional<WatermarkStrategy<typename S::element_type>> strategy, std::string name) {
    using T = typename S::element_type;
    using SplitT = typename S::split_type;
    std::shared_ptr<const Source<T, SplitT>> src = std::make_shared<S>(std::move(source));
    StreamNode n;
    n.id = static_cast<int32_t>(graph_->nodes.size());
    n.kind = StreamNode::Kind::kSource;
    n.name = std::move(name);
    n.assigns_timestamps = strategy.has_value();
    n.bounded = src->boundedness() == Boundedness::kBounded;
    n.create_operator = [src, strategy]() -> std::unique_ptr<StreamOperator> {
      return std::make_unique<SourceOperator<T, SplitT>>(src, strategy);
    };
    n.create_source_coordinator = [src]() -> std::unique_ptr<SourceCoordinatorBase> {
      return std::make_unique<SourceCoordinator<T, SplitT>>(src);
    };
    n.set_output = [](StreamOperator& op, OutputBase* out) {
      static_cast<SourceOperator<T, SplitT>&>(op).set_output(static_cast<Output<T>*>(out));
    };
    n.output_type = make_type_glue<T>();
    graph_->nodes.push_back(std::move(n));
    return DataStream<T>(graph_, {detail::StreamInput{static_cast<int32_t>(graph_->nodes.size()) - 1, "",
                                                      Partitioning::kDefault, nullptr}});
  }

  // A bounded stream of the given elements, cut into one range per source subtask; ranges are handed out
  // on request, so a fast subtask may read several.
  template <class T>
  DataStream<T> from_collection(std::vector<T> elements, std::string name = "Collection Source") {
    auto data = std::make_shared<const std::vector<T>>(std::move(elements));
    auto n = static_cast<int64_t>(data->size());
    return from_source(make_generator_source(n, [data](int64_t i) { return (*data)[static_cast<size_t>(i)]; }),
                       std::move(name));
  }
  // The numbers from..to (inclusive), as Flink's fromSequence.
  DataStream<int64_t> from_sequence(int64_t from, int64_t to, std::string name = "Sequence Source") {
    return from_source(make_generator_source(to - from + 1, [from](int64_t i) { return from + i; }), std::move(name));
  }
  // `count` records generator(0..count-1), at most records_per_second in total (0 = unlimited).
  template <class F>
  auto from_generator(int64_t count, F generator, double records_per_second = 0,
                      std::string name = "Generator Source") {
    return from_source(make_generator_source(count, std::move(generator), records_per_second), std::move(name));
  }

  // ---- execution -------------------------------------------------------------------------------
  // Runs the job and blocks until it ends. While it runs, the job is controllable as the built-in jobs are
  // (docs/rest-api.md): it serves its REST endpoint (rest.port, default 0 = a free port; rest.bind-address,
  // default loopback) and registers in this user's job registry, so `sluice list`, `sluice cancel`, `sluice
  // savepoint` and `sluice stop [--drain]` reach it; the first SIGINT / SIGTERM cancels it cleanly (the result is
  // CANCELED), a second one exits the process at once with 128 + the signal. A TaskManager process
  // (execution.process-role) serves no endpoint; its JobManager does. Errors: kIoError / kInvalidArgument naming
  // the rest.* keys when the endpoint cannot be bound (nothing has run then), and those of execute_async.
  Result<JobExecutionResult> execute(const std::string& job_name = "sluice-job");
  // Submits the job and returns its client at once; no REST endpoint and no signal handling (the caller has the
  // JobClient to control the job).
  Result<std::unique_ptr<JobClient>> execute_async(const std::string& job_name = "sluice-job");

  const StreamGraph& stream_graph() const { return *graph_; }

 private:
  Configuration config_;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<const RocksDBOptionsFactory> rocksdb_options_factory_;
  std::shared_ptr<const fs::FileSystemRegistry> file_systems_;
  std::shared_ptr<NameSource> names_;
  std::map<std::string, std::string> job_properties_;
  std::shared_ptr<StreamGraph> graph_ = std::make_shared<StreamGraph>();
};

// The operator and coordinator of from_collection / from_sequence / from_generator for string and integer records
// are compiled once, in the library, instead of in every program (docs/benchmarks.md "Build time").
extern template class SourceOperator<std::string, IndexRangeSplit>;
extern template class SourceCoordinator<std::string, IndexRangeSplit>;
extern template class SourceOperator<int64_t, IndexRangeSplit>;
extern template class SourceCoordinator<int64_t, IndexRangeSplit>;

}  // namespace sluice
