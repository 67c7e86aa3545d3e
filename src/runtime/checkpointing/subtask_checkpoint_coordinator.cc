#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"

#include <algorithm>
#include <map>
#include <optional>

namespace sluice::runtime {

Result<checkpoint::IncrementalKeyedStateHandle> upload_incremental_snapshot(
    IncrementalKeyedSnapshot& snap, checkpoint::CheckpointStreamFactory& factory, const std::string& owner,
    const std::string& operator_id, int32_t subtask) {
  checkpoint::IncrementalKeyedStateHandle h;
  h.range = snap.range;
  h.backend_id = snap.backend_id;
  h.checkpoint_id = snap.checkpoint_id;
  h.state_meta = snap.state_meta;
  std::map<std::string, SharedFileRef> uploaded = snap.shared_reused;
  for (const auto& [name, ref] : snap.shared_reused) {
    h.shared_files.push_back({name, checkpoint::StreamStateHandle{ref.relative_path, {}, ref.size_bytes, ref.checksum},
                              /*reused=*/true});
  }
  const std::string hint = operator_id + "-" + std::to_string(subtask);
  for (const LocalSnapshotFile& f : snap.shared_to_upload) {
    SLUICE_ASSIGN_OR_RETURN(checkpoint::StreamStateHandle fh, factory.write_shared_file(owner, hint, f.path));
    uploaded[f.name] = SharedFileRef{fh.relative_path, fh.size_bytes, fh.checksum};
    h.shared_files.push_back({f.name, std::move(fh), /*reused=*/false});
  }
  for (const LocalSnapshotFile& f : snap.private_files) {
    SLUICE_ASSIGN_OR_RETURN(checkpoint::StreamStateHandle fh, factory.write_private_file(owner, f.name, f.path));
    h.private_files.push_back({f.name, std::move(fh), false});
  }
  std::sort(h.shared_files.begin(), h.shared_files.end(),
            [](const auto& a, const auto& b) { return a.local_name < b.local_name; });
  snap.set_uploaded(std::move(uploaded));
  return h;
}

// The two halves of an unaligned checkpoint's acknowledgement: the operators' state (written by the async part
// submitted at the snapshot) and the channel state (written once the task collected it). Whichever finishes
// second acknowledges; a failure of either declines once; an abort makes both silent.
struct SubtaskCheckpointCoordinator::PendingAck {
  std::mutex mu;
  int parts_left = 2;
  bool done = false;  // declined, aborted or acknowledged
  std::map<std::string, checkpoint::OperatorSubtaskState> states;
  SubtaskSnapshotStats stats;
  std::optional<checkpoint::StreamStateHandle> channel_handle;
  uint64_t persisted_bytes = 0;
  std::string head_operator_id;
  int32_t subtask = 0;

  // Called with mu held when parts_left reached 0.
  void acknowledge_locked(CheckpointResponder* responder, int32_t vertex, CheckpointId id) {
    done = true;
    stats.unaligned = true;
    stats.persisted_data_bytes = static_cast<int64_t>(persisted_bytes);
    if (channel_handle) {
      stats.state_size_bytes += static_cast<int64_t>(channel_handle->size_bytes);
      stats.checkpointed_size_bytes += static_cast<int64_t>(channel_handle->size_bytes);
      auto& st = states[head_operator_id];
      st.subtask_index = subtask;
      st.channel_state = std::move(*channel_handle);
    }
    responder->acknowledge(id, JobVertexId(vertex), SubtaskIndex(subtask), std::move(states), stats);
  }
};

void SubtaskCheckpointCoordinator::complete_channel_state(CheckpointId id, checkpoint::SubtaskChannelState state) {
  auto it = waiting_.find(id.value());
  if (it == waiting_.end()) return;
  std::shared_ptr<PendingAck> pending = std::move(it->second);
  waiting_.erase(it);
  auto shared_state = std::make_shared<checkpoint::SubtaskChannelState>(std::move(state));
  executor_->submit([pending, shared_state, storage = storage_, responder = responder_, vertex = vertex_, id] {
    std::optional<checkpoint::StreamStateHandle> handle;
    const uint64_t bytes = shared_state->data_bytes();
    if (!shared_state->empty()) {
      const std::string owner = "operator '" + pending->head_operator_id + "' subtask index " +
                                std::to_string(pending->subtask) + " channel state";
      auto factory = storage->stream_factory(id);
      Result<checkpoint::StreamStateHandle> h =
          factory.is_ok() ? (*factory)->write_state(owner, pending->head_operator_id + "-channel",
                                                    checkpoint::encode_channel_state(*shared_state))
                          : Result<checkpoint::StreamStateHandle>(factory.status());
      if (!h.is_ok()) {
        std::lock_guard lock(pending->mu);
        if (pending->done) return;
        pending->done = true;
        responder->decline(id, JobVertexId(vertex), SubtaskIndex(pending->subtask), h.status().with_context(owner));
        return;
      }
      handle = std::move(h).value();
    }
    std::lock_guard lock(pending->mu);
    if (pending->done) return;
    pending->channel_handle = std::move(handle);
    pending->persisted_bytes = bytes;
    if (--pending->parts_left == 0) pending->acknowledge_locked(responder, vertex, id);
  });
}

void SubtaskCheckpointCoordinator::abort_channel_state(CheckpointId id) {
  auto it = waiting_.find(id.value());
  if (it == waiting_.end()) return;
  {
    std::lock_guard lock(it->second->mu);
    it->second->done = true;
  }
  waiting_.erase(it);
}

bool SubtaskCheckpointCoordinator::checkpoint_state(const CheckpointBarrier& barrier,
                                                    const std::vector<ChainOperator>& chain,
                                                    const std::function<void()>& emit_barrier,
                                                    int64_t alignment_duration_ms, bool unaligned) {
  const int64_t sync_start = clock_->monotonic_ns();
  // Trigger to the first barrier (Flink's checkpointStartDelay): what is left of trigger-to-snapshot once the
  // alignment is taken out. The barrier's timestamp is the coordinator's wall clock at the trigger.
  const int64_t start_delay_ms = std::max<int64_t>(0, clock_->now_ms() - barrier.timestamp_ms - alignment_duration_ms);
  last_start_delay_ms_ = start_delay_ms;
  struct Piece {
    std::string id, name;
    OperatorSnapshot snap;
  };
  auto pieces = std::make_shared<std::vector<Piece>>();
  for (const auto& c : chain) {
    c.op->set_snapshot_kind(barrier.type == checkpoint::SnapshotType::kCheckpoint ? OperatorSnapshotKind::kCheckpoint
                            : barrier.is_native_savepoint() ? OperatorSnapshotKind::kNativeSavepoint
                                                            : OperatorSnapshotKind::kCanonicalSavepoint);
    pieces->push_back(Piece{c.operator_id, c.operator_name, c.op->snapshot_state(barrier.id, barrier.timestamp_ms)});
  }
  emit_barrier();
  const int64_t sync_ms = (clock_->monotonic_ns() - sync_start) / 1'000'000;
  std::shared_ptr<PendingAck> pending;
  if (unaligned) {
    // Older waiting checkpoints can no longer complete here (one unaligned checkpoint at a time).
    for (auto& [old_id, old] : waiting_) {
      std::lock_guard lock(old->mu);
      old->done = true;
    }
    waiting_.clear();
    pending = std::make_shared<PendingAck>();
    pending->head_operator_id = chain.empty() ? std::string() : chain.front().operator_id;
    pending->subtask = subtask_;
    waiting_[barrier.id.value()] = pending;
  }

  // The storage is opened in the asynchronous part: creating chk-<n>/ durably costs a directory fsync, which
  // must not stall the task thread (nor the barrier downstream).
  executor_->submit([pieces, storage = storage_, responder = responder_, vertex = vertex_,
                     subtask = subtask_, id = barrier.id, clock = clock_, sync_ms, alignment_duration_ms,
                     start_delay_ms, keyed_size = keyed_size_bytes_, pending] {
    // An unaligned checkpoint declines at most once, and not at all once aborted.
    auto decline = [&](const Status& reason) {
      if (pending) {
        std::lock_guard lock(pending->mu);
        if (pending->done) return;
        pending->done = true;
      }
      responder->decline(id, JobVertexId(vertex), SubtaskIndex(subtask), reason);
    };
    const int64_t async_start = clock->monotonic_ns();
    auto opened = storage->stream_factory(id);
    if (!opened.is_ok()) {
      decline(opened.status().with_context("checkpoint storage"));
      return;
    }
    const std::shared_ptr<checkpoint::CheckpointStreamFactory> factory = std::move(opened).value();
    std::map<std::string, checkpoint::OperatorSubtaskState> states;
    SubtaskSnapshotStats stats{sync_ms, 0, alignment_duration_ms, 0, start_delay_ms, 0};
    for (auto& p : *pieces) {
      std::string owner = "operator '" + p.name + "' subtask index " + std::to_string(subtask);
      checkpoint::OperatorSubtaskState st;
      st.subtask_index = subtask;
      if (p.snap.incremental_keyed) {
        auto h = upload_incremental_snapshot(*p.snap.incremental_keyed, *factory, owner, p.id, subtask);
        p.snap.incremental_keyed->release();  // the local checkpoint folder
        if (!h.is_ok()) {
          decline(h.status().with_context(owner + " incremental keyed state"));
          return;
        }
        stats.state_size_bytes += static_cast<int64_t>(h->full_size_bytes());
        stats.checkpointed_size_bytes += static_cast<int64_t>(h->checkpointed_size_bytes());
        st.incremental_keyed_state = std::move(h).value();
      } else if (p.snap.write_keyed) {
        std::vector<uint8_t> bytes;
        // Sized like the last checkpoint's (plus 1/8): growing a multi-megabyte buffer by doubling costs more
        // than serializing into it.
        const uint64_t last = keyed_size->load(std::memory_order_relaxed);
        if (last > 0) bytes.reserve(last + last / 8);
        checkpoint::KeyGroupsStateHandle kh;
        kh.range = p.snap.key_group_range;
        Status s = p.snap.write_keyed(&bytes, &kh.offsets);
        keyed_size->store(bytes.size(), std::memory_order_relaxed);
        if (s.is_ok()) {
          auto h = factory->write_state(owner, p.id + "-keyed", bytes);
          if (!h.is_ok()) s = h.status();
          else kh.stream = std::move(h).value();
        }
        if (!s.is_ok()) {
          decline(s.with_context(owner + " keyed state"));
          return;
        }
        stats.state_size_bytes += static_cast<int64_t>(kh.stream.size_bytes);
        stats.checkpointed_size_bytes += static_cast<int64_t>(kh.stream.size_bytes);
        st.keyed_state = std::move(kh);
      }
      if (!p.snap.operator_state.empty()) {
        auto h = factory->write_state(owner, p.id + "-op", p.snap.operator_state);
        if (!h.is_ok()) {
          decline(h.status().with_context(owner + " operator state"));
          return;
        }
        stats.state_size_bytes += static_cast<int64_t>(h->size_bytes);
        stats.checkpointed_size_bytes += static_cast<int64_t>(h->size_bytes);
        st.operator_state = std::move(h).value();
      }
      if (st.keyed_state || st.incremental_keyed_state || st.operator_state) states.emplace(p.id, std::move(st));
    }
    pieces->clear();  // releases copy-on-write versions before acknowledging
    stats.async_duration_ms = (clock->monotonic_ns() - async_start) / 1'000'000;
    if (pending) {
      std::lock_guard lock(pending->mu);
      if (pending->done) return;
      pending->states = std::move(states);
      pending->stats = stats;
      if (--pending->parts_left == 0) pending->acknowledge_locked(responder, vertex, id);
      return;
    }
    responder->acknowledge(id, JobVertexId(vertex), SubtaskIndex(subtask), std::move(states), stats);
  });
  return true;
}

}  // namespace sluice::runtime
