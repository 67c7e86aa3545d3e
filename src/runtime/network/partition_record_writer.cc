#include "runtime/network/partition_record_writer.h"

#include "runtime/network/blocking_record_framing.h"
#include "runtime/network/watermark_event.h"

namespace sluice::runtime {

void PartitionRecordWriter::broadcast_watermark(int64_t watermark_ms) {
  p_->broadcast_event(encode_watermark(watermark_ms));
}

void PartitionRecordWriter::broadcast_watermark_status(bool idle) {
  p_->broadcast_event(encode_watermark_status(idle));
}

void BlockingPartitionRecordWriter::emit_keyed(int32_t channel, const uint8_t* key, size_t key_size,
                                               const uint8_t* bytes, size_t size) {
  frame_blocking_record(key, key_size, bytes, size, &scratch_);
  p_->emit_record(channel, scratch_.data(), scratch_.size());
}

void BlockingPartitionRecordWriter::broadcast_emit(const uint8_t* bytes, size_t size) {
  frame_blocking_record(nullptr, 0, bytes, size, &scratch_);
  p_->broadcast_record(scratch_.data(), scratch_.size());
}

}  // namespace sluice::runtime
