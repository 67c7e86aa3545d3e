#include "runtime/checkpointing/checkpoint_barrier.h"

#include "sluice/core/data_view.h"

namespace sluice::runtime {

RuntimeEvent encode_barrier(const CheckpointBarrier& b) {
  RuntimeEvent ev{EventType::kCheckpointBarrier, {}};
  DataOutputView out(&ev.payload);
  out.write_fixed<int64_t>(b.id.value());
  out.write_fixed<int64_t>(b.timestamp_ms);
  out.write_u8(static_cast<uint8_t>(b.type));
  out.write_u8(static_cast<uint8_t>(b.format));
  return ev;
}

Result<CheckpointBarrier> decode_barrier(const RuntimeEvent& ev) {
  if (ev.type != EventType::kCheckpointBarrier) return Status::corruption("event is not a checkpoint barrier");
  DataInputView in(ev.payload.data(), ev.payload.size());
  CheckpointBarrier b;
  b.id = CheckpointId(in.read_fixed<int64_t>());
  b.timestamp_ms = in.read_fixed<int64_t>();
  uint8_t type = in.read_u8();
  uint8_t format = in.read_u8();
  if (!in.ok() || !in.at_end() || type > 1 || format > 1) {
    return Status::corruption("checkpoint barrier event of " + std::to_string(ev.payload.size()) + " bytes is malformed");
  }
  b.type = static_cast<checkpoint::SnapshotType>(type);
  b.format = static_cast<checkpoint::SavepointFormatType>(format);
  return b;
}

RuntimeEvent encode_cancel_marker(CheckpointId id) {
  RuntimeEvent ev{EventType::kCancelCheckpointMarker, {}};
  DataOutputView out(&ev.payload);
  out.write_fixed<int64_t>(id.value());
  return ev;
}

Result<CheckpointId> decode_cancel_marker(const RuntimeEvent& ev) {
  if (ev.type != EventType::kCancelCheckpointMarker) return Status::corruption("event is not a cancellation marker");
  DataInputView in(ev.payload.data(), ev.payload.size());
  int64_t id = in.read_fixed<int64_t>();
  if (!in.ok() || !in.at_end()) return Status::corruption("cancellation marker event is malformed");
  return CheckpointId(id);
}

RuntimeEvent end_of_data_event() { return RuntimeEvent{EventType::kEndOfData, {}}; }

}  // namespace sluice::runtime
