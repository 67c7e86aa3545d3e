#include "throughput_runs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/core/ids.h"
#include "../common/bench_util.h"
#include "checkpoint_runs.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr int64_t kObjectBytes = int64_t{8} << 20;  // s3.multipart.size's default: what one part upload sends
constexpr int32_t kStreams = 4;                      // s3.upload.parallelism's default

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct SinkRun {
  int64_t records = 0;
  int64_t bytes = 0;
  int64_t files = 0;
  double seconds = 0;
};

// One run of the part writer into `dir`: lines until `bytes` are written, a checkpoint (prepare_commit + commit)
// every `checkpoint_bytes`, then the committed files' sizes summed to check nothing was lost.
Result<SinkRun> write_part_files(const RestoreTargets& t, const std::string& dir, int64_t bytes,
                                 int64_t checkpoint_bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> fsys, t.file_systems->for_path(dir));
  int64_t next_checkpoint = 1;
  SinkRun run;
  std::vector<file::FileCommittable> committed;
  std::string line;
  const auto t0 = Clock::now();
  try {
    file::TransactionalPartWriter writer(dir, JobId::generate().to_hex(), 0, [&] { return next_checkpoint; },
                                         int64_t{128} << 20, /*recover=*/false, {},
                                         file::TransactionalPartWriter::kDefaultBytesPerSync, 1, t.file_systems);
    int64_t since_checkpoint = 0;
    auto checkpoint = [&] {
      writer.flush();
      std::vector<file::FileCommittable> c = writer.prepare_commit();
      file::commit_part_files(*t.file_systems, c);
      committed.insert(committed.end(), c.begin(), c.end());
      ++next_checkpoint;
      since_checkpoint = 0;
    };
    for (int64_t k = 0; run.bytes < bytes; ++k) {
      // The demo's update line for key k (count, sum, max of a few bids), as the keyed job's sink writes it.
      line.clear();
      fmt::format_to(std::back_inserter(line), "{},{},{},{}", k % 1'000'003, k % 97 + 1, (k % 97 + 1) * 4321, 99'999);
      writer.append_line(line);
      ++run.records;
      run.bytes += static_cast<int64_t>(line.size()) + 1;
      since_checkpoint += static_cast<int64_t>(line.size()) + 1;
      if (since_checkpoint >= checkpoint_bytes) checkpoint();
    }
    checkpoint();
    run.seconds = since(t0);
    writer.close();
  } catch (const std::exception& e) {
    return Status::io_error(std::string("file sink writer: ") + e.what());
  }
  uint64_t on_storage = 0;
  for (const file::FileCommittable& c : committed) {
    SLUICE_ASSIGN_OR_RETURN(uint64_t size, fsys->file_size(c.final_path));
    on_storage += size;
  }
  if (on_storage != static_cast<uint64_t>(run.bytes)) {
    return Status::internal(fmt::format("{}: the committed part files hold {} bytes, {} were written", dir, on_storage,
                                        run.bytes));
  }
  run.files = static_cast<int64_t>(committed.size());
  SLUICE_RETURN_IF_ERROR(fsys->remove_all(dir));
  return run;
}

// "s3://bucket/prefix" -> {bucket, prefix}.
std::pair<std::string, std::string> split_s3(const std::string& uri) {
  const std::string rest = uri.substr(uri.find("://") + 3);
  const size_t slash = rest.find('/');
  return {rest.substr(0, slash), slash == std::string::npos ? "" : rest.substr(slash + 1)};
}

// MiB/s of `work(i)` for i in [0, n) spread over `streams` threads, `bytes_each` per call.
Result<double> mib_per_s(int64_t n, int32_t streams, int64_t bytes_each, const std::function<Status(int64_t)>& work) {
  std::vector<Status> status(static_cast<size_t>(streams), Status::ok());
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int32_t s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] {
      for (int64_t i = s; i < n && status[static_cast<size_t>(s)].is_ok(); i += streams) {
        status[static_cast<size_t>(s)] = work(i);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const double seconds = since(t0);
  for (const Status& st : status) SLUICE_RETURN_IF_ERROR(st);
  return static_cast<double>(n * bytes_each) / kMiB / std::max(seconds, 1e-9);
}

}  // namespace

Result<Json> sink_throughput(const RestoreTargets& t, int64_t bytes, int64_t checkpoint_bytes, int32_t repeat) {
  std::vector<double> local_rps, local_mib, s3_rps, s3_mib, requests, sent;
  Json local_runs = Json::array(), s3_runs = Json::array();
  SinkRun shape;
  for (int32_t r = 0; r < repeat; ++r) {
    for (bool on_s3 : {false, true}) {
      std::fprintf(stderr, "  file sink run %d/%d to %s\n", r + 1, repeat, on_s3 ? "s3" : "local disk");
      const std::string dir = (on_s3 ? t.s3_dir : t.local_dir) + "/sink-" + std::to_string(r);
      const s3::S3ClientStats before = t.client->stats();
      SLUICE_ASSIGN_OR_RETURN(SinkRun run, write_part_files(t, dir, bytes, checkpoint_bytes));
      shape = run;
      const double rps = static_cast<double>(run.records) / run.seconds;
      const double mib = static_cast<double>(run.bytes) / kMiB / run.seconds;
      Json j = {{"seconds", run.seconds}, {"records_per_s", rps}, {"mib_per_s", mib}, {"files", run.files}};
      if (on_s3) {
        const s3::S3ClientStats d = stats_minus(t.client->stats(), before);
        j["requests"] = d.requests;
        j["retries"] = d.retries;
        requests.push_back(static_cast<double>(d.requests));
        sent.push_back(static_cast<double>(d.bytes_sent));
      }
      (on_s3 ? s3_rps : local_rps).push_back(rps);
      (on_s3 ? s3_mib : local_mib).push_back(mib);
      (on_s3 ? s3_runs : local_runs).push_back(std::move(j));
    }
  }
  Json out;
  out["records"] = shape.records;
  out["bytes"] = shape.bytes;
  out["checkpoint_bytes"] = checkpoint_bytes;
  out["checkpoints"] = shape.files;
  out["local"] = {{"records_per_s", median(local_rps)}, {"mib_per_s", median(local_mib)}, {"runs", local_runs}};
  out["s3"] = {{"records_per_s", median(s3_rps)}, {"mib_per_s", median(s3_mib)}, {"requests", median(requests)},
               {"bytes_sent", median(sent)}, {"runs", s3_runs}};
  // Throughput, so S3 / local below 1 means S3 is slower.
  out["ratio_s3_to_local"] = median(s3_mib) / std::max(median(local_mib), 1e-9);
  return out;
}

Result<Json> raw_throughput(const RestoreTargets& t, int64_t bytes) {
  const int64_t n = std::max<int64_t>(1, bytes / kObjectBytes);
  std::vector<uint8_t> object(static_cast<size_t>(kObjectBytes));
  for (size_t i = 0; i < object.size(); ++i) object[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  // A client of its own (the same options): the job's counters stay the job's.
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client, s3::S3Client::create(t.client->options()));
  const std::pair<std::string, std::string> location = split_s3(t.s3_dir + "/raw");
  const std::string& bucket = location.first;
  auto key = [&](int64_t i) { return location.second + "/object-" + std::to_string(i); };
  const std::span<const uint8_t> body(object);
  std::fprintf(stderr, "  raw S3 PUT / GET of %lld objects of 8 MiB\n", static_cast<long long>(n));
  Json s3j;
  SLUICE_ASSIGN_OR_RETURN(double put1, mib_per_s(n, 1, kObjectBytes, [&](int64_t i) {
                            return client->put_object(bucket, key(i), body);
                          }));
  SLUICE_ASSIGN_OR_RETURN(double put4, mib_per_s(n, kStreams, kObjectBytes, [&](int64_t i) {
                            return client->put_object(bucket, key(i), body);
                          }));
  SLUICE_ASSIGN_OR_RETURN(double get1, mib_per_s(n, 1, kObjectBytes, [&](int64_t i) {
                            return client->get_object(bucket, key(i)).status();
                          }));
  for (int64_t i = 0; i < n; ++i) SLUICE_RETURN_IF_ERROR(client->delete_object(bucket, key(i)));
  s3j = {{"put_mib_per_s", put1}, {"put_4_streams_mib_per_s", put4}, {"get_mib_per_s", get1}};

  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> local, t.file_systems->for_path(t.local_dir));
  const std::string dir = t.local_dir + "/raw";
  SLUICE_RETURN_IF_ERROR(local->create_dir(dir));
  auto path = [&](int64_t i) { return dir + "/object-" + std::to_string(i); };
  SLUICE_ASSIGN_OR_RETURN(double write1, mib_per_s(n, 1, kObjectBytes, [&](int64_t i) {
                            return local->write_file(path(i), object, fs::Durability::kSync);
                          }));
  SLUICE_ASSIGN_OR_RETURN(double read1, mib_per_s(n, 1, kObjectBytes, [&](int64_t i) {
                            return local->read_file(path(i)).status();
                          }));
  SLUICE_RETURN_IF_ERROR(local->remove_all(dir));
  return Json{{"object_bytes", kObjectBytes},
              {"objects", n},
              {"local", {{"write_fsync_mib_per_s", write1}, {"read_mib_per_s", read1}}},
              {"s3", std::move(s3j)}};
}

}  // namespace sluice::bench
