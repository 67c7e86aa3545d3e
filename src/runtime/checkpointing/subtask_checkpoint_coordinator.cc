#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"

#include <algorithm>

namespace sluice::runtime {

bool SubtaskCheckpointCoordinator::checkpoint_state(const CheckpointBarrier& barrier,
                                                    const std::vector<ChainOperator>& chain,
                                                    const std::function<void()>& emit_barrier,
                                                    int64_t alignment_duration_ms) {
  const int64_t sync_start = clock_->monotonic_ns();
  // Trigger to the first barrier (Flink's checkpointStartDelay): what is left of trigger-to-snapshot once the
  // alignment is taken out. The barrier's timestamp is the coordinator's wall clock at the trigger.
  const int64_t start_delay_ms = std::max<int64_t>(0, clock_->now_ms() - barrier.timestamp_ms - alignment_duration_ms);
  struct Piece {
    std::string id, name;
    OperatorSnapshot snap;
  };
  auto pieces = std::make_shared<std::vector<Piece>>();
  for (const auto& c : chain) pieces->push_back(Piece{c.operator_id, c.operator_name, c.op->snapshot_state(barrier.id, barrier.timestamp_ms)});
  emit_barrier();
  const int64_t sync_ms = (clock_->monotonic_ns() - sync_start) / 1'000'000;

  // The storage is opened in the asynchronous part: creating chk-<n>/ durably costs a directory fsync, which
  // must not stall the task thread (nor the barrier downstream).
  executor_->submit([pieces, storage = storage_, responder = responder_, vertex = vertex_,
                     subtask = subtask_, id = barrier.id, clock = clock_, sync_ms, alignment_duration_ms,
                     start_delay_ms, keyed_size = keyed_size_bytes_] {
    const int64_t async_start = clock->monotonic_ns();
    auto opened = storage->stream_factory(id);
    if (!opened.is_ok()) {
      responder->decline(vertex, subtask, id, opened.status().with_context("checkpoint storage"));
      return;
    }
    const std::shared_ptr<checkpoint::CheckpointStreamFactory> factory = std::move(opened).value();
    std::map<std::string, checkpoint::OperatorSubtaskState> states;
    SubtaskSnapshotStats stats{sync_ms, 0, alignment_duration_ms, 0, start_delay_ms};
    for (auto& p : *pieces) {
      std::string owner = "operator '" + p.name + "' subtask index " + std::to_string(subtask);
      checkpoint::OperatorSubtaskState st;
      st.subtask_index = subtask;
      if (p.snap.write_keyed) {
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
          responder->decline(vertex, subtask, id, s.with_context(owner + " keyed state"));
          return;
        }
        stats.state_size_bytes += static_cast<int64_t>(kh.stream.size_bytes);
        st.keyed_state = std::move(kh);
      }
      if (!p.snap.operator_state.empty()) {
        auto h = factory->write_state(owner, p.id + "-op", p.snap.operator_state);
        if (!h.is_ok()) {
          responder->decline(vertex, subtask, id, h.status().with_context(owner + " operator state"));
          return;
        }
        stats.state_size_bytes += static_cast<int64_t>(h->size_bytes);
        st.operator_state = std::move(h).value();
      }
      if (st.keyed_state || st.operator_state) states.emplace(p.id, std::move(st));
    }
    pieces->clear();  // releases copy-on-write versions before acknowledging
    stats.async_duration_ms = (clock->monotonic_ns() - async_start) / 1'000'000;
    responder->acknowledge(vertex, subtask, id, std::move(states), stats);
  });
  return true;
}

}  // namespace sluice::runtime
