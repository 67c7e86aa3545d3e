#include "restore_runs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "cluster/state_assignment.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/keyed_state_snapshot.h"
#include "../checkpoint/keyed_job.h"
#include "../common/bench_util.h"
#include "checkpoint_runs.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int32_t kMaxParallelism = 128;
constexpr const char* kOperatorId = "per-key";
// Serialized bytes of one KeyAggregate entry: varint 8 + key, varint 0 (void namespace), varint 32 + 4 int64.
constexpr int64_t kHeapEntryBytes = 1 + 8 + 1 + 1 + 32;
constexpr size_t kRocksDBValueBytes = 200;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
KeyGroupRange full_range() { return KeyGroupRange(0, kMaxParallelism - 1); }

// A checkpoint storage over `dir`, initialized for a new job.
Result<std::unique_ptr<checkpoint::FileSystemCheckpointStorage>> open_storage(const RestoreTargets& t,
                                                                              const std::string& dir,
                                                                              const JobId& job) {
  checkpoint::FileSystemStorageOptions o;
  o.file_systems = *t.file_systems;
  auto storage = std::make_unique<checkpoint::FileSystemCheckpointStorage>(dir, o);
  SLUICE_RETURN_IF_ERROR(storage->initialize(job));
  return storage;
}

// The metadata a task's acknowledgement would give for the one keyed operator's one subtask.
checkpoint::CheckpointMetadata metadata_for(const JobId& job, checkpoint::OperatorSubtaskState st) {
  checkpoint::CheckpointMetadata md;
  md.checkpoint_id = CheckpointId(1);
  md.job_id = job;
  checkpoint::OperatorState op;
  op.operator_id = kOperatorId;
  op.operator_name = kOperatorId;
  op.parallelism = 1;
  op.max_parallelism = kMaxParallelism;
  op.subtasks.push_back(std::move(st));
  md.operators.push_back(std::move(op));
  return md;
}

struct Written {
  JobId job = JobId::generate();
  std::unique_ptr<checkpoint::FileSystemCheckpointStorage> storage;
  checkpoint::CheckpointMetadata metadata;  // as read back
  std::string location;
  double write_s = 0;
};

Status remove_checkpoint(Written& w) {
  SLUICE_RETURN_IF_ERROR(w.storage->discard(CheckpointId(1)));
  return w.storage->remove_job_dir_if_empty().status();
}

s3::S3ClientStats client_stats(const RestoreTargets& t) { return t.client ? t.client->stats() : s3::S3ClientStats{}; }

// Runs `restore_once(written, phases)` alternately on the local and the S3 checkpoint, `repeat` times each.
template <class F>
Result<Json> alternate(const RestoreTargets& t, Written* local, Written* s3, int32_t repeat, F restore_once) {
  Json out = Json::object();
  std::vector<double> local_s, s3_s;
  Json local_runs = Json::array(), s3_runs = Json::array();
  std::vector<double> requests, received;
  for (int32_t r = 0; r < repeat; ++r) {
    for (Written* w : {local, s3}) {
      const bool on_s3 = w == s3;
      std::fprintf(stderr, "  restore %d/%d from %s\n", r + 1, repeat, on_s3 ? "s3" : "local disk");
      const s3::S3ClientStats before = client_stats(t);
      Json phases = Json::object();
      const auto t0 = Clock::now();
      SLUICE_RETURN_IF_ERROR(restore_once(*w, &phases).with_context(on_s3 ? "restore from S3" : "local restore"));
      const double s = since(t0);
      phases["restore_s"] = s;
      if (on_s3) {
        const s3::S3ClientStats d = stats_minus(client_stats(t), before);
        phases["requests"] = d.requests;
        phases["retries"] = d.retries;
        phases["bytes_received"] = d.bytes_received;
        requests.push_back(static_cast<double>(d.requests));
        received.push_back(static_cast<double>(d.bytes_received));
      }
      (on_s3 ? s3_s : local_s).push_back(s);
      (on_s3 ? s3_runs : local_runs).push_back(std::move(phases));
    }
  }
  constexpr double kMiB = 1024.0 * 1024.0;
  const double bytes = static_cast<double>(local->metadata.state_size_bytes());
  out["local"] = {{"write_s", local->write_s}, {"restore_s", median(local_s)},
                  {"mib_per_s", bytes / kMiB / std::max(median(local_s), 1e-9)}, {"runs", std::move(local_runs)}};
  out["s3"] = {{"write_s", s3->write_s}, {"restore_s", median(s3_s)},
               {"mib_per_s", bytes / kMiB / std::max(median(s3_s), 1e-9)}, {"requests", median(requests)},
               {"bytes_received", median(received)}, {"runs", std::move(s3_runs)}};
  out["ratio_s3_to_local"] = median(s3_s) / std::max(median(local_s), 1e-9);
  return out;
}

}  // namespace

Result<Json> heap_restore(const RestoreTargets& t, int64_t bytes, int32_t repeat) {
  const int64_t entries = std::max<int64_t>(1, bytes / kHeapEntryBytes);
  // The state file, written once to each directory as a task writes it.
  std::vector<uint8_t> state;
  checkpoint::KeyGroupsStateHandle kh;
  kh.range = full_range();
  {
    SLUICE_ASSIGN_OR_RETURN(auto backend, make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, full_range(),
                                                                           kMaxParallelism));
    ValueState<KeyAggregate>& v = backend->get_state(ValueStateDescriptor<KeyAggregate>(kOperatorId));
    for (int64_t k = 0; k < entries; ++k) {
      backend->set_current_key(k);
      v.update(KeyAggregate{k, k % 97 + 1, (k % 97 + 1) * 1000, 5000});
    }
    std::unique_ptr<KeyedStateSnapshot> snap = backend->snapshot();
    SLUICE_RETURN_IF_ERROR(write_all_key_groups(*snap, &state, &kh.offsets));
    snap->release();
  }
  Written local, s3;
  for (auto [w, dir] : {std::pair{&local, t.local_dir + "/heap"}, std::pair{&s3, t.s3_dir + "/heap"}}) {
    std::fprintf(stderr, "  writing %zu bytes of heap state to %s\n", state.size(), dir.c_str());
    SLUICE_ASSIGN_OR_RETURN(w->storage, open_storage(t, dir, w->job));
    const auto t0 = Clock::now();
    SLUICE_ASSIGN_OR_RETURN(auto factory, w->storage->stream_factory(CheckpointId(1)));
    checkpoint::OperatorSubtaskState st;
    st.keyed_state = kh;
    SLUICE_ASSIGN_OR_RETURN(st.keyed_state->stream, factory->write_state("storage-bench", "per-key-keyed", state));
    SLUICE_ASSIGN_OR_RETURN(w->location, w->storage->write_metadata(metadata_for(w->job, std::move(st))));
    w->write_s = since(t0);
    SLUICE_ASSIGN_OR_RETURN(w->metadata, w->storage->read_metadata(w->location));
  }
  state = {};
  auto restore_once = [&](Written& w, Json* phases) -> Status {
    const auto t0 = Clock::now();
    SLUICE_ASSIGN_OR_RETURN(auto assigned, cluster::assign_subtask_state(w.metadata, w.location, *w.storage,
                                                                         {{kOperatorId, 1}}, 0, full_range(),
                                                                         kMaxParallelism));
    (*phases)["read_and_slice_s"] = since(t0);
    const auto t1 = Clock::now();
    SLUICE_ASSIGN_OR_RETURN(auto backend, make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, full_range(),
                                                                           kMaxParallelism));
    for (const auto& kg : assigned.at(kOperatorId).key_groups) {
      SLUICE_RETURN_IF_ERROR(backend->restore_key_group(kg.data(), kg.size()));
    }
    (void)backend->get_state(ValueStateDescriptor<KeyAggregate>(kOperatorId));  // decodes into the heap maps
    (*phases)["restore_and_decode_s"] = since(t1);
    if (backend->num_entries() != entries) {
      return Status::internal("restored " + std::to_string(backend->num_entries()) + " entries, expected " +
                              std::to_string(entries));
    }
    return Status::ok();
  };
  SLUICE_ASSIGN_OR_RETURN(Json out, alternate(t, &local, &s3, repeat, restore_once));
  Json result = {{"state_bytes", local.metadata.state_size_bytes()},
                 {"s3_state_bytes", s3.metadata.state_size_bytes()},
                 {"entries", entries},
                 {"files", 1}};
  result.update(out);
  SLUICE_RETURN_IF_ERROR(remove_checkpoint(local));
  SLUICE_RETURN_IF_ERROR(remove_checkpoint(s3));
  return result;
}

Result<Json> rocksdb_restore(const RestoreTargets& t, int64_t bytes, int32_t repeat) {
  namespace stdfs = std::filesystem;
  auto rocksdb_backend = [&](const std::string& name) {
    RocksDBStateBackendOptions o;
    o.local_dir = t.work_dir + "/" + name;
    o.instance_name = "storage-bench";
    stdfs::create_directories(o.local_dir);
    return make_keyed_state_backend<int64_t>(StateBackendKind::kRocksDB, full_range(), kMaxParallelism, o);
  };
  // Random letters barely compress: the SST files hold about `bytes`.
  const int64_t keys = std::max<int64_t>(1, bytes / static_cast<int64_t>(kRocksDBValueBytes + 16));
  Written local, s3;
  size_t files = 0;
  {
    SLUICE_ASSIGN_OR_RETURN(auto backend, rocksdb_backend("source"));
    auto& v = backend->get_state(ValueStateDescriptor<std::string>("payload"));
    std::mt19937_64 rng(7);
    std::string value(kRocksDBValueBytes, 'x');
    for (int64_t k = 0; k < keys; ++k) {
      for (size_t i = 0; i < value.size(); i += 8) {
        uint64_t r = rng();
        for (size_t j = 0; j < 8 && i + j < value.size(); ++j, r >>= 8) {
          value[i + j] = static_cast<char>('a' + (r & 0xff) % 26);
        }
      }
      backend->set_current_key(k);
      v.update(value);
    }
    SLUICE_ASSIGN_OR_RETURN(auto snap, backend->snapshot_incremental(CheckpointId(1)));
    files = snap->shared_to_upload.size() + snap->private_files.size();
    for (auto [w, dir] : {std::pair{&local, t.local_dir + "/rocksdb"}, std::pair{&s3, t.s3_dir + "/rocksdb"}}) {
      std::fprintf(stderr, "  uploading %zu RocksDB files to %s\n", files, dir.c_str());
      SLUICE_ASSIGN_OR_RETURN(w->storage, open_storage(t, dir, w->job));
      const auto t0 = Clock::now();
      SLUICE_ASSIGN_OR_RETURN(auto factory, w->storage->stream_factory(CheckpointId(1)));
      checkpoint::OperatorSubtaskState st;
      SLUICE_ASSIGN_OR_RETURN(st.incremental_keyed_state,
                              runtime::upload_incremental_snapshot(*snap, *factory, "storage-bench", kOperatorId, 0));
      SLUICE_ASSIGN_OR_RETURN(w->location, w->storage->write_metadata(metadata_for(w->job, std::move(st))));
      w->write_s = since(t0);
      SLUICE_ASSIGN_OR_RETURN(w->metadata, w->storage->read_metadata(w->location));
    }
    snap->release();
  }  // the source backend and its working folder are gone before anything is timed
  int32_t n = 0;
  auto restore_once = [&](Written& w, Json*) -> Status {
    SLUICE_ASSIGN_OR_RETURN(auto assigned, cluster::assign_subtask_state(w.metadata, w.location, *w.storage,
                                                                         {{kOperatorId, 1}}, 0, full_range(),
                                                                         kMaxParallelism));
    SLUICE_ASSIGN_OR_RETURN(auto backend, rocksdb_backend("restore-" + std::to_string(n++)));
    return backend->restore_incremental(assigned.at(kOperatorId).incremental_handles);
  };
  SLUICE_ASSIGN_OR_RETURN(Json out, alternate(t, &local, &s3, repeat, restore_once));
  Json result = {{"state_bytes", local.metadata.state_size_bytes()},
                 {"s3_state_bytes", s3.metadata.state_size_bytes()},
                 {"keys", keys},
                 {"files", files},
                 {"note", "local: SST files hard-linked (same filesystem) and read once for their checksums; "
                          "s3: downloaded with ranged GETs"}};
  result.update(out);
  SLUICE_RETURN_IF_ERROR(remove_checkpoint(local));
  SLUICE_RETURN_IF_ERROR(remove_checkpoint(s3));
  return result;
}

}  // namespace sluice::bench
