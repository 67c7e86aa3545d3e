#include "state_bench.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "fs/file_system.h"
#include "fs/path.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "cluster/state_assignment.h"
#include "keyed_job.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/keyed_state_snapshot.h"
#include "../common/bench_util.h"

namespace sluice::bench {
namespace {

constexpr int32_t kMaxParallelism = 128;
constexpr const char* kOperatorId = "per-key";
constexpr const char* kStateName = "per-key";
// Serialized bytes of one entry: varint 8 + key, varint 0 (void namespace), varint 32 + four int64.
constexpr int64_t kEntryBytes = 1 + 8 + 1 + 1 + 32;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

KeyGroupRange full_range() { return KeyGroupRange(0, kMaxParallelism - 1); }

Result<std::unique_ptr<KeyedStateBackend<int64_t>>> filled_backend(int64_t entries) {
  SLUICE_ASSIGN_OR_RETURN(auto backend,
                          make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, full_range(), kMaxParallelism));
  ValueState<KeyAggregate>& state = backend->get_state(ValueStateDescriptor<KeyAggregate>(kStateName));
  for (int64_t k = 0; k < entries; ++k) {
    backend->set_current_key(k);
    state.update(KeyAggregate{k, k % 97 + 1, (k % 97 + 1) * 1000, 5000});
  }
  return backend;
}

struct WrittenCheckpoint {
  checkpoint::CheckpointMetadata metadata;
  std::string location;
  std::string state_file;  // absolute path of the keyed state file
};

// The metadata a task's acknowledgement would produce for the one keyed operator.
checkpoint::CheckpointMetadata metadata_for(const JobId& job, CheckpointId id, checkpoint::KeyGroupsStateHandle kh) {
  checkpoint::CheckpointMetadata md;
  md.checkpoint_id = id;
  md.job_id = job;
  md.trigger_timestamp_ms = 0;
  checkpoint::OperatorState op;
  op.operator_id = kOperatorId;
  op.operator_name = kOperatorId;
  op.parallelism = 1;
  op.max_parallelism = kMaxParallelism;
  checkpoint::OperatorSubtaskState st;
  st.subtask_index = 0;
  st.keyed_state = std::move(kh);
  op.subtasks.push_back(std::move(st));
  md.operators.push_back(std::move(op));
  return md;
}

}  // namespace

Result<Json> snapshot_cost(const std::string& dir, int64_t keys, int32_t repeat) {
  SLUICE_ASSIGN_OR_RETURN(auto backend, filled_backend(keys));
  checkpoint::FileSystemCheckpointStorage storage(dir);
  const JobId job = JobId::generate();
  SLUICE_RETURN_IF_ERROR(storage.initialize(job));
  std::vector<double> sync_ms, open_ms, serialize_ms, persist_ms, metadata_ms, total_ms, serialize_cpu_ms;
  uint64_t state_bytes = 0;
  for (int32_t r = 0; r < repeat; ++r) {
    const CheckpointId id(r + 1);
    // The order of a task's checkpoint: the synchronous part on the task thread, then on the snapshot
    // executor: open the storage (chk-<n>/), serialize, persist; the coordinator writes `_metadata` last.
    const double t0 = now_s();
    std::unique_ptr<KeyedStateSnapshot> snap = backend->snapshot();
    const double t1 = now_s();
    SLUICE_ASSIGN_OR_RETURN(auto factory, storage.stream_factory(id));
    const double t2 = now_s();
    const double c2 = thread_cpu_s();
    std::vector<uint8_t> bytes;
    if (state_bytes > 0) bytes.reserve(state_bytes + state_bytes / 8);  // as the task's asynchronous part does
    checkpoint::KeyGroupsStateHandle kh;
    kh.range = full_range();
    SLUICE_RETURN_IF_ERROR(write_all_key_groups(*snap, &bytes, &kh.offsets));
    snap->release();
    const double t3 = now_s();
    serialize_cpu_ms.push_back((thread_cpu_s() - c2) * 1e3);
    SLUICE_ASSIGN_OR_RETURN(kh.stream, factory->write_state("snapshot_cost", "per-key-keyed", bytes));
    const double t4 = now_s();
    SLUICE_ASSIGN_OR_RETURN(std::string location, storage.write_metadata(metadata_for(job, id, std::move(kh))));
    const double t5 = now_s();
    state_bytes = bytes.size();
    sync_ms.push_back((t1 - t0) * 1e3);
    open_ms.push_back((t2 - t1) * 1e3);
    serialize_ms.push_back((t3 - t2) * 1e3);
    persist_ms.push_back((t4 - t3) * 1e3);
    metadata_ms.push_back((t5 - t4) * 1e3);
    total_ms.push_back((t5 - t0) * 1e3);
    SLUICE_RETURN_IF_ERROR(storage.discard(id));
  }
  (void)storage.remove_job_dir_if_empty();
  return Json{{"keys", keys},
              {"state_bytes", state_bytes},
              {"repeat", repeat},
              {"sync_ms", median(sync_ms)},
              {"open_ms", median(open_ms)},
              {"serialize_ms", median(serialize_ms)},
              {"serialize_cpu_ms", median(serialize_cpu_ms)},
              {"persist_ms", median(persist_ms)},
              {"metadata_ms", median(metadata_ms)},
              {"total_ms", median(total_ms)}};
}

Result<Json> restore_vs_read(const std::string& dir, int64_t bytes, int32_t read_repeat) {
  const int64_t entries = std::max<int64_t>(1, bytes / kEntryBytes);
  checkpoint::FileSystemCheckpointStorage storage(dir);
  const JobId job = JobId::generate();
  SLUICE_RETURN_IF_ERROR(storage.initialize(job));

  // The checkpoint: one subtask's keyed state in one file, as a task writes it.
  WrittenCheckpoint cp;
  double build_s = 0;
  {
    const double t0 = now_s();
    SLUICE_ASSIGN_OR_RETURN(auto backend, filled_backend(entries));
    build_s = now_s() - t0;
    std::unique_ptr<KeyedStateSnapshot> snap = backend->snapshot();
    SLUICE_ASSIGN_OR_RETURN(auto factory, storage.stream_factory(CheckpointId(1)));
    std::vector<uint8_t> state;
    checkpoint::KeyGroupsStateHandle kh;
    kh.range = full_range();
    SLUICE_RETURN_IF_ERROR(write_all_key_groups(*snap, &state, &kh.offsets));
    snap->release();
    SLUICE_ASSIGN_OR_RETURN(kh.stream, factory->write_state("restore_vs_read", "per-key-keyed", state));
    SLUICE_ASSIGN_OR_RETURN(cp.location, storage.write_metadata(metadata_for(job, CheckpointId(1), kh)));
    SLUICE_ASSIGN_OR_RETURN(std::string jd, storage.job_dir());
    cp.state_file = fs::join_path(jd, kh.stream.relative_path);
  }  // the source backend is gone before anything is timed
  SLUICE_ASSIGN_OR_RETURN(cp.metadata, storage.read_metadata(cp.location));
  const uint64_t state_bytes = cp.metadata.state_size_bytes();

  // Reading the file: the page cache is warmed by one untimed read; the engine's own read_file.
  auto fs = fs::local_file_system();
  std::vector<double> read_s, read_cpu_s;
  for (int32_t r = 0; r <= read_repeat; ++r) {
    const double t0 = now_s();
    const double c0 = thread_cpu_s();
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> data, fs->read_file(cp.state_file));
    const double t1 = now_s();
    const double c1 = thread_cpu_s();
    if (data.size() != state_bytes) return Status::internal("restore_vs_read: read a file of unexpected size");
    if (r > 0) {
      read_s.push_back(t1 - t0);
      read_cpu_s.push_back(c1 - c0);
    }
  }

  // Restoring: what the cluster and the task do for a redeployed subtask.
  const double t0 = now_s();
  const double c0 = thread_cpu_s();
  SLUICE_ASSIGN_OR_RETURN(auto assigned,
                          cluster::assign_subtask_state(cp.metadata, cp.location, storage, {{kOperatorId, 1}}, 0,
                                                        full_range(), kMaxParallelism));
  const double t1 = now_s();
  SLUICE_ASSIGN_OR_RETURN(auto backend,
                          make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, full_range(), kMaxParallelism));
  const OperatorRestoreState& r = assigned.at(kOperatorId);
  for (const auto& kg : r.key_groups) SLUICE_RETURN_IF_ERROR(backend->restore_key_group(kg.data(), kg.size()));
  const double t2 = now_s();
  (void)backend->get_state(ValueStateDescriptor<KeyAggregate>(kStateName));  // decodes into the heap maps
  const double t3 = now_s();
  const double restore_cpu_s = thread_cpu_s() - c0;
  if (backend->num_entries() != entries) {
    return Status::internal("restore_vs_read: restored " + std::to_string(backend->num_entries()) + " entries, expected " +
                            std::to_string(entries));
  }
  const double restore_s = t3 - t0;
  const double read = median(read_s);
  const double read_cpu = median(read_cpu_s);
  backend.reset();
  assigned.clear();
  SLUICE_RETURN_IF_ERROR(storage.discard(CheckpointId(1)));
  (void)storage.remove_job_dir_if_empty();
  constexpr double kMiB = 1024.0 * 1024.0;
  return Json{{"state_bytes", state_bytes},
              {"entries", entries},
              {"build_s", build_s},
              {"read_s", read},
              {"restore_s", restore_s},
              {"ratio", restore_s / std::max(read, 1e-9)},
              {"read_cpu_s", read_cpu},
              {"restore_cpu_s", restore_cpu_s},
              {"ratio_cpu", restore_cpu_s / std::max(read_cpu, 1e-9)},
              {"read_mib_per_s", static_cast<double>(state_bytes) / kMiB / std::max(read, 1e-9)},
              {"restore_mib_per_s", static_cast<double>(state_bytes) / kMiB / std::max(restore_s, 1e-9)},
              {"phases_s", {{"read_and_slice", t1 - t0}, {"restore_key_groups", t2 - t1}, {"register_and_decode", t3 - t2}}}};
}

}  // namespace sluice::bench
