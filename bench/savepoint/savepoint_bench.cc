// savepoint_bench: what savepoints cost (README.md). For each state backend (hashmap, rocksdb) and key
// count (--keys, repeatable; default 1 M and 10 M), a keyed job (generator -> filter to the first K numbers ->
// key_by(n) -> ValueState<i64> per key -> discard) at parallelism P fills K keys, then:
// - savepoint: one savepoint per format (--format, repeatable; default canonical and native), taken one after the
//   other while the job runs - trigger to completion (ms) and its size (bytes on disk, files in the folder);
// - restore: each savepoint restored at the same parallelism P and at another one (--new-parallelism): the time
//   from submission until every keyed subtask processed its first record after restoring (a probe number passes
//   the filter every 100,003 numbers, i.e. every few ms), so restore_ms is the slowest subtask's restore plus the
//   deployment; then the job is cancelled.
// Prints one JSON object (progress on stderr), one result per backend, key count and format.
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "../common/bench_util.h"
#include "cluster/mini_cluster.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/sluice.h"

namespace sluice::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int64_t> keys;
  int32_t parallelism = 2;
  int32_t new_parallelism = 3;
  std::vector<std::string> backends;
  std::vector<checkpoint::SavepointFormatType> formats;
  std::string dir;
};

constexpr const char* kUsage =
    "usage: savepoint_bench [--keys K ...] [--parallelism P] [--new-parallelism Q] [--backend hashmap|rocksdb ...]\n"
    "                       [--format canonical|native ...] [--dir DIR]\n"
    "  --keys K              keys of the keyed state (repeatable; default 1000000 and 10000000)\n"
    "  --parallelism P       parallelism of the job that takes the savepoint (default 2)\n"
    "  --new-parallelism Q   the other parallelism it is restored at (default 3)\n"
    "  --backend NAME        state backend (repeatable; default hashmap and rocksdb)\n"
    "  --format NAME         savepoint format (repeatable; default canonical and native)\n"
    "  --dir DIR             working folder (default a new folder in $TMPDIR, removed at the end)\n";

constexpr int64_t kProbeEvery = 100'003;

// Counts per key; `processed` counts the first `keys` numbers, `subtasks_seen` gets bit i once subtask i processed one.
class CountPerKey final : public KeyedProcessFunction<int64_t, int64_t, int64_t> {
 public:
  CountPerKey(int64_t keys, std::shared_ptr<std::atomic<int64_t>> processed,
              std::shared_ptr<std::atomic<uint64_t>> subtasks_seen)
      : keys_(keys), processed_(std::move(processed)), subtasks_seen_(std::move(subtasks_seen)) {}
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(ValueStateDescriptor<int64_t>("count"));
    bit_ = uint64_t{1} << (ctx.subtask_index() % 64);
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<int64_t>&) override {
    count_->update(count_->value().value_or(0) + 1);
    if (v < keys_) processed_->fetch_add(1, std::memory_order_relaxed);
    if (!seen_) {
      subtasks_seen_->fetch_or(bit_);
      seen_ = true;
    }
  }

 private:
  int64_t keys_;
  std::shared_ptr<std::atomic<int64_t>> processed_;
  std::shared_ptr<std::atomic<uint64_t>> subtasks_seen_;
  ValueState<int64_t>* count_ = nullptr;
  uint64_t bit_ = 0;
  bool seen_ = false;
};

struct Job {
  std::unique_ptr<JobClient> client;
  cluster::CheckpointingJobClient* cp = nullptr;
  std::shared_ptr<std::atomic<int64_t>> processed;
  std::shared_ptr<std::atomic<uint64_t>> subtasks_seen;
};

Result<Job> start_job(const std::string& dir, const std::string& backend, int32_t parallelism, int64_t keys,
                      const std::string& restore) {
  Configuration config;
  SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.interval", "1h"));
  SLUICE_RETURN_IF_ERROR(config.set_string("execution.checkpointing.dir", dir + "/ck"));
  SLUICE_RETURN_IF_ERROR(config.set_string("state.backend.type", backend));
  if (!restore.empty()) SLUICE_RETURN_IF_ERROR(config.set_string("execution.state-recovery.path", restore));
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  Job job;
  job.processed = std::make_shared<std::atomic<int64_t>>(0);
  job.subtasks_seen = std::make_shared<std::atomic<uint64_t>>(0);
  // Endless, so the job runs until it is cancelled; the first `keys` numbers fill the keyed state, then a probe
  // every kProbeEvery numbers (its key is one of the first `keys`) shows that the subtask owning it runs.
  env.from_generator(int64_t{1} << 50, [](int64_t i) { return i; })
      .uid("numbers")
      .filter([keys](const int64_t& v) { return v < keys || v % kProbeEvery == 0; })
      .uid("first-keys")
      .key_by([keys](const int64_t& v) { return v < keys ? v : (v / kProbeEvery) % keys; })
      .process(CountPerKey(keys, job.processed, job.subtasks_seen))
      .uid("count")
      .sink_to(DiscardingSink<int64_t>())
      .uid("discard");
  SLUICE_ASSIGN_OR_RETURN(job.client, env.execute_async("savepoint-bench"));
  job.cp = dynamic_cast<cluster::CheckpointingJobClient*>(job.client.get());
  if (job.cp == nullptr) return Status::internal("not a checkpointing job");
  return job;
}

uint64_t folder_bytes(const std::string& dir, int64_t* files) {
  uint64_t total = 0;
  *files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    total += e.file_size();
    ++*files;
  }
  return total;
}

// Waits for a savepoint request; its location, or an error.
Result<std::string> await(cluster::CheckpointingJobClient& cp, const Result<std::string>& trigger) {
  if (!trigger.is_ok()) return trigger.status();
  auto st = cp.wait_savepoint(*trigger, 3'600'000);
  if (!st || st->state != cluster::SavepointRequestStatus::State::kCompleted) {
    return Status::internal("savepoint failed: " + (st ? st->cause.to_string() : std::string("unknown request")));
  }
  return st->location;
}

// Restores `savepoint` at the same and at the new parallelism; records both times in `r`.
Status measure_restores(const Options& o, const std::string& dir, const std::string& backend, int64_t keys,
                        const std::string& savepoint, nlohmann::json& r) {
  for (int32_t p : {o.parallelism, o.new_parallelism}) {
    const auto t0 = Clock::now();
    SLUICE_ASSIGN_OR_RETURN(Job restored, start_job(dir, backend, p, keys, savepoint));
    // The probes reach every subtask (their keys spread over all key groups) once it restored.
    const uint64_t all = p >= 64 ? ~uint64_t{0} : (uint64_t{1} << p) - 1;
    while (restored.subtasks_seen->load() != all) {
      if (is_globally_terminal(restored.client->status())) {
        return Status::internal("the restored job ended: " + restored.client->wait().error.to_string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const double restore_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    restored.client->cancel();
    restored.client->wait();
    restored.client.reset();
    const std::string which = p == o.parallelism ? "restore_same_parallelism" : "restore_new_parallelism";
    r[which] = {{"parallelism", p}, {"restore_ms", restore_ms}};
    spdlog::info("{} {} keys {}: restored at parallelism {} in {:.0f} ms", backend, keys,
                 r["savepoint"]["format"].get<std::string>(), p, restore_ms);
  }
  return Status::ok();
}

// One job fills the keys and takes a savepoint of every format; each is then restored. One result per format.
Result<std::vector<nlohmann::json>> run_case(const Options& o, const std::string& backend, int64_t keys) {
  const std::string dir = o.dir + "/" + backend + "-" + std::to_string(keys);
  SLUICE_ASSIGN_OR_RETURN(Job job, start_job(dir, backend, o.parallelism, keys, ""));
  const auto fill_start = Clock::now();
  while (job.processed->load() < keys) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double fill_ms = std::chrono::duration<double, std::milli>(Clock::now() - fill_start).count();
  std::vector<nlohmann::json> results;
  std::vector<std::string> savepoints;
  for (checkpoint::SavepointFormatType format : o.formats) {
    const auto sp_start = Clock::now();
    SLUICE_ASSIGN_OR_RETURN(std::string savepoint,
                            await(*job.cp, job.cp->trigger_savepoint(dir + "/savepoints", format)));
    const double savepoint_ms = std::chrono::duration<double, std::milli>(Clock::now() - sp_start).count();
    int64_t files = 0;
    const uint64_t bytes = folder_bytes(savepoint, &files);
    std::string name = checkpoint::savepoint_format_name(format);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    nlohmann::json r{{"backend", backend}, {"keys", keys}, {"parallelism", o.parallelism}, {"fill_ms", fill_ms}};
    r["savepoint"] = {{"format", name}, {"ms", savepoint_ms}, {"bytes", bytes}, {"files", files},
                      {"bytes_per_key", static_cast<double>(bytes) / static_cast<double>(keys)}};
    spdlog::info("{} {} keys: {} savepoint {:.0f} ms, {} bytes", backend, keys, name, savepoint_ms, bytes);
    results.push_back(std::move(r));
    savepoints.push_back(savepoint);
  }
  job.client->cancel();
  job.client->wait();
  job.client.reset();
  for (size_t i = 0; i < results.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(measure_restores(o, dir, backend, keys, savepoints[i], results[i]));
  }
  fs::remove_all(dir);
  return results;
}

int run(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("savepoint_bench"));  // stdout is the JSON
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--keys") {
      auto k = parse_int<int64_t>("--keys", value(), 1, int64_t{1} << 40);
      if (!k.is_ok()) return std::fprintf(stderr, "%s\n%s", k.status().message().c_str(), kUsage), 2;
      o.keys.push_back(*k);
    } else if (a == "--parallelism" || a == "--new-parallelism") {
      auto p = parse_int<int32_t>(a, value(), 1, 128);
      if (!p.is_ok()) return std::fprintf(stderr, "%s\n%s", p.status().message().c_str(), kUsage), 2;
      (a == "--parallelism" ? o.parallelism : o.new_parallelism) = *p;
    } else if (a == "--backend") {
      o.backends.push_back(value());
    } else if (a == "--format") {
      const std::string v = value();
      auto f = checkpoint::parse_savepoint_format(v);
      if (!f) return std::fprintf(stderr, "--format '%s': expected canonical or native\n%s", v.c_str(), kUsage), 2;
      o.formats.push_back(*f);
    } else if (a == "--dir") {
      o.dir = value();
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.keys.empty()) o.keys = {1'000'000, 10'000'000};
  if (o.backends.empty()) o.backends = {"hashmap", "rocksdb"};
  if (o.formats.empty()) o.formats = {checkpoint::SavepointFormatType::kCanonical, checkpoint::SavepointFormatType::kNative};
  const bool own_dir = o.dir.empty();
  if (own_dir) o.dir = (fs::temp_directory_path() / ("savepoint-bench-" + std::to_string(::getpid()))).string();
  nlohmann::json out{{"bench", "savepoint"},
                     {"config", {{"build_type", SLUICE_BENCH_BUILD_TYPE}, {"parallelism", o.parallelism},
                                 {"new_parallelism", o.new_parallelism}, {"hardware_threads", std::thread::hardware_concurrency()}}},
                     {"results", nlohmann::json::array()}};
  int rc = 0;
  for (const std::string& backend : o.backends) {
    for (int64_t keys : o.keys) {
      auto r = run_case(o, backend, keys);
      if (!r.is_ok()) {
        std::fprintf(stderr, "%s %lld keys: %s\n", backend.c_str(), static_cast<long long>(keys),
                     r.status().to_string().c_str());
        rc = 1;
        continue;
      }
      for (auto& one : *r) out["results"].push_back(std::move(one));
    }
  }
  if (own_dir) fs::remove_all(o.dir);
  std::printf("%s\n", out.dump(2).c_str());
  return rc;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) { return sluice::bench::run(argc, argv); }
