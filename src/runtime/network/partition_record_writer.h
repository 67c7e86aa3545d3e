// The RecordWriters of a task's network outputs: how serialized records, and the events that travel with them,
// are written into a ResultPartition. The task's typed side (RecordWriterOutput, sluice/detail/operators/network_io.h)
// serializes each record and picks its channel; these write the bytes.
//  - PartitionRecordWriter: a pipelined exchange. Each record as it is; watermarks and watermark status as in-band
//    events on every channel (watermark_event.h).
//  - BlockingPartitionRecordWriter: a blocking exchange (BATCH, docs/batch.md). Each record framed as a
//    self-delimiting entry with its key (blocking_record_framing.h) for the stage's exchange spiller; watermarks
//    are not written (a BATCH consumer sees only the final one).
// Neither owns its partition. Thread-safety: the producing task's thread only, as the partition's emit calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/network/result_partition.h"
#include "sluice/detail/operators/network_io.h"

namespace sluice::runtime {

class PartitionRecordWriter final : public RecordWriter {
 public:
  // `channels`: the subpartitions this writer's channel selector chooses among.
  PartitionRecordWriter(ResultPartition* partition, int32_t channels) : p_(partition), channels_(channels) {}
  int32_t num_channels() const override { return channels_; }
  void emit(int32_t channel, const uint8_t* bytes, size_t size) override { p_->emit_record(channel, bytes, size); }
  void broadcast_emit(const uint8_t* bytes, size_t size) override { p_->broadcast_record(bytes, size); }
  void broadcast_watermark(int64_t watermark_ms) override;
  void broadcast_watermark_status(bool idle) override;

 private:
  ResultPartition* p_;
  int32_t channels_;
};

class BlockingPartitionRecordWriter final : public RecordWriter {
 public:
  // `keyed`: the consumer sorts its input by key, so records routed by key carry their serialized key.
  BlockingPartitionRecordWriter(ResultPartition* partition, int32_t channels, bool keyed)
      : p_(partition), channels_(channels), keyed_(keyed) {}
  int32_t num_channels() const override { return channels_; }
  bool wants_keys() const override { return keyed_; }
  void emit(int32_t channel, const uint8_t* bytes, size_t size) override { emit_keyed(channel, nullptr, 0, bytes, size); }
  void emit_keyed(int32_t channel, const uint8_t* key, size_t key_size, const uint8_t* bytes, size_t size) override;
  void broadcast_emit(const uint8_t* bytes, size_t size) override;

 private:
  ResultPartition* p_;
  int32_t channels_;
  bool keyed_;
  std::vector<uint8_t> scratch_;  // one framed entry, reused
};

}  // namespace sluice::runtime
