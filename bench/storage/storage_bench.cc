// storage_bench: checkpoint storage on the local disk vs on S3, for the same keyed job and the same state, in one
// run, as one JSON object on stdout (progress on stderr). See README.md.
//
//   checkpoints  bench/checkpoint's keyed job with execution.checkpointing.dir on the local disk and on s3://,
//                runs alternating local / S3: end-to-end duration p50 / p99 (the coordinator's statistics),
//                bytes per checkpoint and S3 requests per checkpoint, for heap (HashMap) full checkpoints and
//                RocksDB incremental checkpoints
//   restore      --restore-bytes of heap state and of RocksDB files restored from the local disk and from S3
//   sink         --sink-bytes of update lines through the exactly-once file sink's part writer, committed at
//                a checkpoint every --sink-checkpoint-bytes: records/s and MiB/s
//   raw          --sink-bytes in 8 MiB objects PUT and GET by the S3 client alone (the server's own limit),
//                next to the same files written and read on the local disk
//
// The S3 server is S3Proxy started with scripts/test-servers/s3-start in the bench's temp folder (stopped at
// the end), or the running one --s3-state-dir names. Everything the bench writes is below its temp folder and
// below a fresh prefix of the bucket, both removed at the end.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "checkpoint_runs.h"
#include "coordinator/checkpoint_stats.h"
#include "fs/file_systems_from_config.h"
#include "fs/s3/s3_file_system.h"
#include "restore_runs.h"
#include "s3_server.h"
#include "throughput_runs.h"
#include "../common/bench_util.h"

#ifndef SLUICE_BENCH_BUILD_TYPE
#define SLUICE_BENCH_BUILD_TYPE "unknown"
#endif
#ifndef SLUICE_SOURCE_DIR
#define SLUICE_SOURCE_DIR "."
#endif

namespace sluice::bench {
namespace {

constexpr double kTargetRatio = 2.0;  // S3 at most 2x the local disk (checkpoint p99, restore)
constexpr int kSkipped = 77;          // no S3 server could be fetched (ctest's SKIP_RETURN_CODE)

struct Options {
  int64_t keys = 100'000;
  int32_t parallelism = 2;
  int64_t interval_ms = 500;
  int32_t checkpoints = 10;
  int32_t repeat = 3;
  int64_t restore_bytes = int64_t{256} << 20;
  int32_t restore_repeat = 3;
  int64_t sink_bytes = int64_t{256} << 20;
  int64_t sink_checkpoint_bytes = int64_t{32} << 20;
  int32_t sink_repeat = 3;
  std::string s3_state_dir;  // a running server; empty: start one
  std::string dir;           // default: a new folder under $TMPDIR
  std::string only;          // "", or one of kParts
  std::vector<std::string> dynamic;
};

constexpr std::string_view kParts[] = {"checkpoints", "restore", "sink", "raw"};

constexpr const char* kUsage =
    "usage: storage_bench [--keys K] [--parallelism P] [--interval-ms MS] [--checkpoints N] [--repeat R]\n"
    "                     [--restore-bytes B] [--restore-repeat R] [--sink-bytes B] [--sink-checkpoint-bytes B]\n"
    "                     [--sink-repeat R] [--s3-state-dir DIR] [--dir DIR]\n"
    "                     [--only checkpoints|restore|sink|raw] [-D key=value ...]\n"
    "  --keys K             distinct keys of the job's keyed state, all present before checkpoints count\n"
    "                       (default 100000; 10000000 for the large figures)\n"
    "  --parallelism P      parallelism of the job (default 2)\n"
    "  --interval-ms MS     checkpoint interval (default 500)\n"
    "  --checkpoints N      completed checkpoints per job run, then it is cancelled (default 10)\n"
    "  --repeat R           job runs per storage and state backend, alternating local / S3; medians (default 3)\n"
    "  --restore-bytes B    heap state and RocksDB files restored, bytes each (default 268435456; 0 skips)\n"
    "  --restore-repeat R   restores from each storage, alternating; medians (default 3)\n"
    "  --sink-bytes B       bytes through the file sink, and of the raw PUT/GET comparison (default 268435456;\n"
    "                       0 skips both)\n"
    "  --sink-checkpoint-bytes B  a checkpoint (commit) every B bytes of sink output (default 33554432)\n"
    "  --sink-repeat R      file sink runs per storage, alternating; medians (default 3)\n"
    "  --s3-state-dir DIR   use the S3 server s3-start started with this state folder (default: start one)\n"
    "  --dir DIR            local checkpoints and scratch go below DIR (default: a new folder under $TMPDIR)\n"
    "  --only PART          checkpoints, restore, sink or raw only\n"
    "  -D key=value         configuration for every job run and storage (e.g. s3.upload.parallelism=8)\n"
    "Prints one JSON object on stdout; exits 77 when no S3 server can be fetched.\n";

Result<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") return Status::invalid_argument("help");
    if (i + 1 >= argc) return Status::invalid_argument(std::string(a) + ": expected a value after it");
    const std::string_view v = argv[++i];
    if (a == "--keys") {
      SLUICE_ASSIGN_OR_RETURN(o.keys, parse_int<int64_t>(a, v, 1, int64_t{1} << 32));
    } else if (a == "--parallelism") {
      SLUICE_ASSIGN_OR_RETURN(o.parallelism, parse_int<int32_t>(a, v, 1, 64));
    } else if (a == "--interval-ms") {
      SLUICE_ASSIGN_OR_RETURN(o.interval_ms, parse_int<int64_t>(a, v, 10, 3'600'000));
    } else if (a == "--checkpoints") {
      SLUICE_ASSIGN_OR_RETURN(o.checkpoints, parse_int<int32_t>(a, v, 2, 10'000));
    } else if (a == "--repeat") {
      SLUICE_ASSIGN_OR_RETURN(o.repeat, parse_int<int32_t>(a, v, 1, 100));
    } else if (a == "--restore-bytes") {
      SLUICE_ASSIGN_OR_RETURN(o.restore_bytes, parse_int<int64_t>(a, v, 0, int64_t{1} << 40));
    } else if (a == "--restore-repeat") {
      SLUICE_ASSIGN_OR_RETURN(o.restore_repeat, parse_int<int32_t>(a, v, 1, 100));
    } else if (a == "--sink-bytes") {
      SLUICE_ASSIGN_OR_RETURN(o.sink_bytes, parse_int<int64_t>(a, v, 0, int64_t{1} << 40));
    } else if (a == "--sink-checkpoint-bytes") {
      SLUICE_ASSIGN_OR_RETURN(o.sink_checkpoint_bytes, parse_int<int64_t>(a, v, 1, int64_t{1} << 40));
    } else if (a == "--sink-repeat") {
      SLUICE_ASSIGN_OR_RETURN(o.sink_repeat, parse_int<int32_t>(a, v, 1, 100));
    } else if (a == "--s3-state-dir") {
      o.s3_state_dir = std::string(v);
    } else if (a == "--dir") {
      o.dir = std::string(v);
    } else if (a == "--only") {
      if (std::find(std::begin(kParts), std::end(kParts), v) == std::end(kParts)) {
        return Status::invalid_argument("--only: expected checkpoints, restore, sink or raw, got '" + std::string(v) +
                                        "'");
      }
      o.only = std::string(v);
    } else if (a == "-D") {
      o.dynamic.emplace_back(v);
    } else {
      return Status::invalid_argument("unknown argument '" + std::string(a) + "'");
    }
  }
  return o;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::string random_hex() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

Json summary_json(const coordinator::StatsSummary& s) {
  return Json{{"count", s.count}, {"min", s.min}, {"p50", s.p50}, {"p99", s.p99}, {"max", s.max}, {"avg", s.avg}};
}

double median_of(const std::vector<int64_t>& v) {
  std::vector<double> d(v.begin(), v.end());
  return median(std::move(d));
}

// One storage's runs of one state backend.
Json side_json(const std::vector<CheckpointRun>& runs, bool on_s3) {
  std::vector<int64_t> all, checkpointed, state;
  std::vector<double> p50, p99, requests, sent, retries, whole_requests;
  Json list = Json::array();
  int64_t failed = 0;
  for (const CheckpointRun& r : runs) {
    const coordinator::StatsSummary s = coordinator::summarize(r.end_to_end_ms);
    p50.push_back(static_cast<double>(s.p50));
    p99.push_back(static_cast<double>(s.p99));
    all.insert(all.end(), r.end_to_end_ms.begin(), r.end_to_end_ms.end());
    checkpointed.insert(checkpointed.end(), r.checkpointed_bytes.begin(), r.checkpointed_bytes.end());
    state.insert(state.end(), r.state_bytes.begin(), r.state_bytes.end());
    failed += r.failed;
    Json run = {{"checkpoints", r.end_to_end_ms.size()}, {"p50_ms", s.p50}, {"p99_ms", s.p99},
                {"failed", r.failed}, {"warmup_s", r.warmup_s}, {"wall_s", r.wall_s}};
    if (on_s3) {
      const double n = static_cast<double>(std::max<int64_t>(r.counted_checkpoints, 1));
      const double whole_n = static_cast<double>(std::max<size_t>(r.end_to_end_ms.size(), 1));
      run["counted_checkpoints"] = r.counted_checkpoints;
      run["requests"] = r.counted.requests;
      run["whole_run_requests"] = r.whole_run.requests;
      if (r.counted_checkpoints > 0) {
        requests.push_back(static_cast<double>(r.counted.requests) / n);
        sent.push_back(static_cast<double>(r.counted.bytes_sent) / n);
      }
      retries.push_back(static_cast<double>(r.whole_run.retries));
      whole_requests.push_back(static_cast<double>(r.whole_run.requests) / whole_n);
    }
    list.push_back(std::move(run));
  }
  Json out = {{"checkpoints", all.size()},
              {"p50_ms", median(p50)},
              {"p99_ms", median(p99)},
              {"end_to_end_ms", summary_json(coordinator::summarize(all))},
              {"checkpointed_bytes", median_of(checkpointed)},
              {"state_bytes", median_of(state)},
              {"failed", failed}};
  if (on_s3) {
    out["requests_per_checkpoint"] = median(requests);
    out["bytes_sent_per_checkpoint"] = median(sent);
    out["whole_run_requests_per_checkpoint"] = median(whole_requests);
    out["retries"] = median(retries);
  }
  out["runs"] = std::move(list);
  return out;
}

struct Setup {
  Options o;
  std::string dir;     // local temp folder
  std::string s3_dir;  // s3://bucket/<fresh prefix>
  Configuration base;
  std::shared_ptr<fs::FileSystemRegistry> file_systems;
  const s3::S3Client* client = nullptr;
};

Status run_checkpoints(const Setup& s, Json* out) {
  Json section = Json::object();
  for (StateKind state : {StateKind::kHeapFull, StateKind::kRocksDBIncremental}) {
    const char* name = state == StateKind::kHeapFull ? "heap_full" : "rocksdb_incremental";
    std::vector<CheckpointRun> local, s3;
    for (int32_t r = 0; r < s.o.repeat; ++r) {
      for (bool on_s3 : {false, true}) {
        std::fprintf(stderr, "%s checkpoints to %s: run %d/%d\n", name, on_s3 ? "s3" : "local disk", r + 1, s.o.repeat);
        CheckpointRunConfig c;
        c.state = state;
        c.keys = s.o.keys;
        c.parallelism = s.o.parallelism;
        c.interval_ms = s.o.interval_ms;
        c.checkpoints = s.o.checkpoints;
        // The warm-up and each checkpoint grow with the state: 10 M keys on S3 take minutes.
        c.timeout_s = 300 + s.o.keys / 10'000;
        const std::string leaf = std::string("ck-") + name + "-" + std::to_string(r);
        c.checkpoint_dir = (on_s3 ? s.s3_dir : s.dir) + "/" + leaf;
        c.rocksdb_local_dir = s.dir + "/rocksdb-" + leaf + (on_s3 ? "-s3" : "-local");
        std::filesystem::create_directories(c.rocksdb_local_dir);
        c.base = s.base;
        auto run = run_checkpointed_job(c, s.file_systems, on_s3 ? s.client : nullptr);
        if (!run.is_ok()) return run.status().with_context(std::string(name) + (on_s3 ? " on s3" : " on local disk"));
        (on_s3 ? s3 : local).push_back(std::move(run).value());
      }
    }
    Json j;
    j["local"] = side_json(local, false);
    j["s3"] = side_json(s3, true);
    const double p50 = j["s3"]["p50_ms"].get<double>() / std::max(j["local"]["p50_ms"].get<double>(), 1.0);
    const double p99 = j["s3"]["p99_ms"].get<double>() / std::max(j["local"]["p99_ms"].get<double>(), 1.0);
    j["ratio_s3_to_local"] = {{"p50", p50}, {"p99", p99}};
    j["target_p99_ratio"] = kTargetRatio;
    j["meets_target"] = p99 <= kTargetRatio;
    section[name] = std::move(j);
  }
  (*out)["checkpoints"] = std::move(section);
  return Status::ok();
}

// The folders of one part of the bench: <dir>/<part> and <s3 dir>/<part>.
RestoreTargets targets(const Setup& s, const std::string& part) {
  RestoreTargets t;
  t.local_dir = s.dir + "/" + part;
  t.s3_dir = s.s3_dir + "/" + part;
  t.work_dir = s.dir + "/" + part + "-work";
  t.file_systems = s.file_systems;
  t.client = s.client;
  return t;
}

Status run_restores(const Setup& s, Json* out) {
  if (s.o.restore_bytes == 0) {
    (*out)["restore"] = nullptr;
    return Status::ok();
  }
  const RestoreTargets t = targets(s, "restore");
  Json section = Json::object();
  std::fprintf(stderr, "heap restore of %lld bytes\n", static_cast<long long>(s.o.restore_bytes));
  SLUICE_ASSIGN_OR_RETURN(Json heap, heap_restore(t, s.o.restore_bytes, s.o.restore_repeat));
  heap["meets_target"] = heap["ratio_s3_to_local"].get<double>() <= kTargetRatio;
  section["heap"] = std::move(heap);
  std::fprintf(stderr, "RocksDB restore of %lld bytes\n", static_cast<long long>(s.o.restore_bytes));
  SLUICE_ASSIGN_OR_RETURN(Json rocksdb, rocksdb_restore(t, s.o.restore_bytes, s.o.restore_repeat));
  rocksdb["meets_target"] = rocksdb["ratio_s3_to_local"].get<double>() <= kTargetRatio;
  section["rocksdb"] = std::move(rocksdb);
  section["target_ratio"] = kTargetRatio;
  (*out)["restore"] = std::move(section);
  return Status::ok();
}

Status run_sink(const Setup& s, Json* out) {
  if (s.o.sink_bytes == 0) {
    (*out)["sink"] = nullptr;
    return Status::ok();
  }
  std::fprintf(stderr, "file sink: %lld bytes, a checkpoint every %lld\n", static_cast<long long>(s.o.sink_bytes),
               static_cast<long long>(s.o.sink_checkpoint_bytes));
  const RestoreTargets t = targets(s, "sink");
  std::filesystem::create_directories(t.local_dir);
  SLUICE_ASSIGN_OR_RETURN((*out)["sink"], sink_throughput(t, s.o.sink_bytes, s.o.sink_checkpoint_bytes, s.o.sink_repeat));
  return Status::ok();
}

Status run_raw(const Setup& s, Json* out) {
  if (s.o.sink_bytes == 0) {
    (*out)["raw"] = nullptr;
    return Status::ok();
  }
  const RestoreTargets t = targets(s, "raw");
  std::filesystem::create_directories(t.local_dir);
  SLUICE_ASSIGN_OR_RETURN((*out)["raw"], raw_throughput(t, s.o.sink_bytes));
  return Status::ok();
}

// The s3:// filesystem of the registry and its client: the counters of every request the bench's jobs and
// restores send (the registry creates one S3 filesystem and shares it).
Result<const s3::S3Client*> s3_client_of(const fs::FileSystemRegistry& registry, const std::string& s3_dir) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, registry.for_path(s3_dir));
  auto* s3fs = dynamic_cast<s3::S3FileSystem*>(f.get());
  if (s3fs == nullptr) return Status::internal("'" + s3_dir + "' is not served by the S3 filesystem");
  return &s3fs->client();
}

int run(const Options& o) {
  namespace stdfs = std::filesystem;
  const std::string scripts = std::string(SLUICE_SOURCE_DIR) + "/scripts/test-servers";
  const bool own_dir = o.dir.empty();
  Setup s;
  s.o = o;
  s.dir = own_dir ? (stdfs::temp_directory_path() / ("sluice-storage-bench-" + std::to_string(::getpid()))).string()
                  : o.dir;
  std::error_code ec;
  stdfs::create_directories(s.dir, ec);
  if (ec) {
    std::fprintf(stderr, "storage_bench: cannot create '%s': %s\n", s.dir.c_str(), ec.message().c_str());
    return 2;
  }
  const std::string load_before = load_average();
  auto server = o.s3_state_dir.empty() ? start_s3_server(scripts, s.dir + "/s3-server") : read_s3_server(o.s3_state_dir);
  auto cleanup = [&] {
    if (server.is_ok()) stop_s3_server(scripts, *server);
    if (own_dir) stdfs::remove_all(s.dir, ec);
  };
  if (!server.is_ok()) {
    std::fprintf(stderr, "storage_bench: S3 server: %s\n", server.status().to_string().c_str());
    cleanup();
    return 1;
  }
  if (!server->unavailable.empty()) {
    std::fprintf(stderr, "storage_bench: SKIPPED, no S3 server: %s\n", server->unavailable.c_str());
    cleanup();
    return kSkipped;
  }
  auto fail = [&](const std::string& what, const Status& st) {
    std::fprintf(stderr, "storage_bench: %s: %s\n", what.c_str(), st.to_string().c_str());
    cleanup();
    return 1;
  };
  for (const auto& kv : o.dynamic) {
    if (Status st = s.base.apply_dynamic_property(kv); !st.is_ok()) return fail("-D " + kv, st);
  }
  if (Status st = set_s3_keys(*server, &s.base); !st.is_ok()) return fail("s3 keys", st);
  s.s3_dir = "s3://" + server->bucket + "/sluice-storage-bench-" + std::to_string(::getpid()) + "-" + random_hex();
  s.file_systems = std::make_shared<fs::FileSystemRegistry>(fs::file_systems_from(s.base));
  auto client = s3_client_of(*s.file_systems, s.s3_dir);
  if (!client.is_ok()) return fail("S3 filesystem", client.status());
  s.client = *client;
  auto s3fs = s.file_systems->for_path(s.s3_dir);

  Json out;
  out["benchmark"] = "storage_bench";
  out["schema_version"] = 2;  // 2: sink and raw sections, warm-up (dealt keys) in checkpoint runs
  out["config"] = {{"keys", o.keys},
                   {"parallelism", o.parallelism},
                   {"interval_ms", o.interval_ms},
                   {"checkpoints_per_run", o.checkpoints},
                   {"repeat", o.repeat},
                   {"restore_bytes", o.restore_bytes},
                   {"restore_repeat", o.restore_repeat},
                   {"sink_bytes", o.sink_bytes},
                   {"sink_checkpoint_bytes", o.sink_checkpoint_bytes},
                   {"sink_repeat", o.sink_repeat},
                   {"dynamic", o.dynamic},
                   {"s3_endpoint", server->endpoint},
                   {"s3_server", o.s3_state_dir.empty() ? "started by the bench (scripts/test-servers/s3-start)"
                                                        : "given (--s3-state-dir)"},
                   {"build_type", SLUICE_BENCH_BUILD_TYPE},
                   {"hardware_threads", std::thread::hardware_concurrency()},
                   {"load_average_before", load_before}};

  Status st = Status::ok();
  const std::pair<std::string_view, Status (*)(const Setup&, Json*)> parts[] = {
      {"checkpoints", run_checkpoints}, {"restore", run_restores}, {"sink", run_sink}, {"raw", run_raw}};
  for (const auto& [name, run_part] : parts) {
    if (st.is_ok() && (o.only.empty() || o.only == name)) st = run_part(s, &out);
  }
  out["config"]["load_average_after"] = load_average();
  const s3::S3ClientStats total = s.client->stats();
  out["s3_client_total"] = {{"requests", total.requests},
                            {"retries", total.retries},
                            {"bytes_sent", total.bytes_sent},
                            {"bytes_received", total.bytes_received},
                            {"peak_requests_in_flight", total.peak_requests_in_flight}};
  // Everything below the bench's prefix goes, whatever happened.
  if (s3fs.is_ok()) {
    if (Status rm = (*s3fs)->remove_all(s.s3_dir); !rm.is_ok()) {
      std::fprintf(stderr, "storage_bench: removing %s: %s\n", s.s3_dir.c_str(), rm.to_string().c_str());
    }
  }
  if (!st.is_ok()) return fail("run", st);
  cleanup();
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  // Logs go to stderr: stdout is the JSON.
  spdlog::set_default_logger(spdlog::stderr_color_mt("storage_bench"));
  auto opt = sluice::bench::parse_args(argc, argv);
  if (!opt.is_ok()) {
    if (opt.status().message() != "help") std::fprintf(stderr, "storage_bench: %s\n", opt.status().message().c_str());
    std::fputs(sluice::bench::kUsage, stderr);
    return opt.status().message() == "help" ? 0 : 2;
  }
  return sluice::bench::run(*opt);
}
