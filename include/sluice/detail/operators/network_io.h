// The typed ends of a network exchange: partitioners (which channel a record goes to), the output that
// serializes records into a RecordWriter, and the deserializer that turns received buffers back into
// records for the head operator of a chain. The byte transport behind RecordWriter is the runtime's
// (src/runtime/network: buffers, credits, back-pressure).
//
// Partitioners (Flink's names): forward (subtask i -> i), rebalance (round-robin), broadcast (all), key-group
// hash: channel = subtask_for_key_group(key_group_for_key(key)), DESIGN.md section 3; rescale (round robin over the
// producer's own consumers: a pointwise edge has one channel per consumer of that subset, graph/edge_topology.h),
// shuffle (uniformly random), global (consumer 0) and custom (partition_custom: a user function of the key).
// Thread-safety: all of these belong to one task thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/functions/output.h"
#include "sluice/state/key_group.h"

namespace sluice {

// Byte sink for one output edge of a subtask: one channel per consumer subtask (forward: one channel).
class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  virtual int32_t num_channels() const = 0;
  virtual void emit(int32_t channel, const uint8_t* bytes, size_t size) = 0;
  virtual void broadcast_emit(const uint8_t* bytes, size_t size) = 0;
  // In-band event time on every channel (runtime events after the records emitted so far). Default: dropped.
  virtual void broadcast_watermark(int64_t /*watermark_ms*/) {}
  virtual void broadcast_watermark_status(bool /*idle*/) {}
  // BATCH execution (docs/batch.md): a writer into a blocking exchange that sorts its consumer's input by key
  // wants each record's serialized key next to it. True: RecordWriterOutput calls emit_keyed for records routed
  // by a key-group partitioner (key = the key selector's result, serialized with TypeSerializer<K>).
  virtual bool wants_keys() const { return false; }
  virtual void emit_keyed(int32_t channel, const uint8_t* /*key*/, size_t /*key_size*/, const uint8_t* bytes,
                          size_t size) {
    emit(channel, bytes, size);
  }
};

// Record framing on an edge that carries timestamps (JobEdge::carries_timestamps: some operator upstream
// assigns them): each record is prefixed with its timestamp as 8 bytes little-endian, kNoRecordTimestamp
// (sluice/functions/output.h) for a record without one. Edges without timestamps carry the bare record (no cost).
// Fixed width rather than a varint: epoch milliseconds need 6-7 varint bytes anyway, and a fixed load is cheaper
// to decode (bench/watermarks measures the difference per record).

class ChannelSelectorBase {
 public:
  static constexpr int32_t kBroadcast = -1;
  virtual ~ChannelSelectorBase() = default;
  // Called once before the first record. subtask_index: of the producing subtask.
  virtual void setup(int32_t num_channels, int32_t max_parallelism, int32_t subtask_index) {
    num_channels_ = num_channels;
    max_parallelism_ = max_parallelism;
    subtask_index_ = subtask_index;
  }
  virtual bool is_broadcast() const { return false; }

 protected:
  int32_t num_channels_ = 1;
  int32_t max_parallelism_ = 128;
  int32_t subtask_index_ = 0;
};

template <class T>
class ChannelSelector : public ChannelSelectorBase {
 public:
  virtual int32_t select_channel(const T& record) = 0;
  // Appends the record's serialized key to *out and returns true, for partitioners that route by key; false
  // (nothing written) for the others. Used only by writers that want keys (RecordWriter::wants_keys).
  virtual bool write_key(const T& /*record*/, std::vector<uint8_t>* /*out*/) { return false; }
};

// One channel per forward edge: the consumer subtask with the producer's index.
template <class T>
class ForwardPartitioner final : public ChannelSelector<T> {
 public:
  int32_t select_channel(const T&) override { return 0; }
};

// Round robin over the channels, from next_ (set by the partitioner's setup).
template <class T>
class RoundRobinPartitioner : public ChannelSelector<T> {
 public:
  int32_t select_channel(const T&) override {
    int32_t c = next_;
    if (++next_ >= this->num_channels_) next_ = 0;
    return c;
  }

 protected:
  int32_t next_ = 0;
};

template <class T>
class RebalancePartitioner final : public RoundRobinPartitioner<T> {
 public:
  void setup(int32_t n, int32_t max_p, int32_t subtask) override {
    RoundRobinPartitioner<T>::setup(n, max_p, subtask);
    this->next_ = subtask % n;  // spread the starting channel across producers (Flink starts at random)
  }
};

// rescale(): round robin over the channels of this producer, which on a pointwise edge are its own subset of the
// consumer subtasks, from the first (as Flink's RescalePartitioner).
template <class T>
class RescalePartitioner final : public RoundRobinPartitioner<T> {};

// shuffle(): a uniformly random channel per record (Flink's ShufflePartitioner). The generator is SplitMix64
// seeded by the producing subtask's index (setup), so a run's distribution is reproducible; the channel is drawn
// by Lemire's multiply-shift reduction (bias below 2^-32 for any channel count).
template <class T>
class ShufflePartitioner final : public ChannelSelector<T> {
 public:
  void setup(int32_t n, int32_t max_p, int32_t subtask) override {
    ChannelSelector<T>::setup(n, max_p, subtask);
    state_ = 0x5eed5eed5eed5eedULL ^ (static_cast<uint64_t>(subtask) * 0x9e3779b97f4a7c15ULL);
  }
  int32_t select_channel(const T&) override {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<int32_t>(((z >> 32) * static_cast<uint64_t>(this->num_channels_)) >> 32);
  }

 private:
  uint64_t state_ = 0;
};

// global(): every record to the first consumer subtask (Flink's GlobalPartitioner).
template <class T>
class GlobalPartitioner final : public ChannelSelector<T> {
 public:
  int32_t select_channel(const T&) override { return 0; }
};

// partition_custom(partitioner, key_selector): channel = partitioner(key_selector(record), number of channels)
// (Flink's CustomPartitionerWrapper over a Partitioner<K>). An index outside [0, number of channels) throws a
// StatusError with code kInvalidArgument naming the index (the producing operator adds its name, call_user in
// stream_operator.h): a bad program, which fails the job instead of restarting it (docs/fault-tolerance.md).
template <class T, class P, class KS>
class CustomPartitionerWrapper final : public ChannelSelector<T> {
 public:
  CustomPartitionerWrapper(P partitioner, KS key_selector)
      : partitioner_(std::move(partitioner)), key_selector_(std::move(key_selector)) {}
  int32_t select_channel(const T& record) override {
    const auto index = static_cast<int64_t>(partitioner_(key_selector_(record), this->num_channels_));
    if (index < 0 || index >= this->num_channels_) {
      throw StatusError(Status::invalid_argument(
          "partition_custom: the partitioner returned partition " + std::to_string(index) + " for " +
          std::to_string(this->num_channels_) + " partitions (the next operator's parallelism); expected an index " +
          "in [0, " + std::to_string(this->num_channels_) + ")"));
    }
    return static_cast<int32_t>(index);
  }

 private:
  P partitioner_;
  KS key_selector_;
};

template <class T>
class BroadcastPartitioner final : public ChannelSelector<T> {
 public:
  bool is_broadcast() const override { return true; }
  int32_t select_channel(const T&) override { return ChannelSelectorBase::kBroadcast; }
};

// key_by: routes each record to the subtask owning its key's key group.
template <class T, class K, class KS>
class KeyGroupStreamPartitioner final : public ChannelSelector<T> {
 public:
  explicit KeyGroupStreamPartitioner(KS key_selector) : key_selector_(std::move(key_selector)) {}
  int32_t select_channel(const T& record) override {
    KeyGroup kg = key_group_for_key<K>(key_selector_(record), this->max_parallelism_);
    return subtask_for_key_group(this->max_parallelism_, this->num_channels_, kg).value();
  }
  bool write_key(const T& record, std::vector<uint8_t>* out) override {
    DataOutputView view(out);
    TypeSerializer<K>::serialize(key_selector_(record), view);
    return true;
  }

 private:
  KS key_selector_;
};

// Serializes each record once into a reusable scratch buffer and hands the bytes to the RecordWriter.
template <class T>
class RecordWriterOutput final : public Output<T> {
 public:
  // `timestamp`: the task's record timestamp, written before each record; null for an edge without timestamps.
  RecordWriterOutput(RecordWriter* writer, std::unique_ptr<ChannelSelectorBase> selector,
                     const RecordTimestamp* timestamp = nullptr)
      : writer_(writer),
        selector_(static_cast<ChannelSelector<T>*>(selector.release())),
        timestamp_(timestamp),
        wants_keys_(writer->wants_keys()) {}
  void collect(T&& record) override {
    scratch_.clear();
    DataOutputView out(&scratch_);
    if (timestamp_ != nullptr) {
      out.write_fixed<int64_t>(timestamp_->has_timestamp ? timestamp_->timestamp_ms : kNoRecordTimestamp);
    }
    TypeSerializer<T>::serialize(record, out);
    if (selector_->is_broadcast()) {
      writer_->broadcast_emit(scratch_.data(), scratch_.size());
    } else if (wants_keys_) {
      key_scratch_.clear();
      if (selector_->write_key(record, &key_scratch_)) {
        writer_->emit_keyed(selector_->select_channel(record), key_scratch_.data(), key_scratch_.size(),
                            scratch_.data(), scratch_.size());
      } else {
        writer_->emit(selector_->select_channel(record), scratch_.data(), scratch_.size());
      }
    } else {
      writer_->emit(selector_->select_channel(record), scratch_.data(), scratch_.size());
    }
  }

 private:
  void emit_watermark(int64_t watermark_ms) override { writer_->broadcast_watermark(watermark_ms); }
  void emit_watermark_status(bool idle) override { writer_->broadcast_watermark_status(idle); }

 private:
  RecordWriter* writer_;
  std::unique_ptr<ChannelSelector<T>> selector_;
  const RecordTimestamp* timestamp_;
  const bool wants_keys_;
  std::vector<uint8_t> scratch_;
  std::vector<uint8_t> key_scratch_;
};

class RecordDeserializerBase {
 public:
  virtual ~RecordDeserializerBase() = default;
  // Decodes every record of a data buffer and pushes it into the target. Returns the number of records,
  // or kCorruption if the bytes do not decode as whole records of the expected type.
  virtual Result<int64_t> deserialize_buffer(const uint8_t* data, size_t size) = 0;
};

template <class T>
class RecordDeserializer final : public RecordDeserializerBase {
 public:
  // `timestamp`: where each record's timestamp goes, for an edge that carries timestamps; null otherwise.
  explicit RecordDeserializer(Output<T>* target, RecordTimestamp* timestamp = nullptr)
      : target_(target), timestamp_(timestamp) {}
  Result<int64_t> deserialize_buffer(const uint8_t* data, size_t size) override {
    DataInputView in(data, size);
    int64_t n = 0;
    while (!in.at_end()) {
      if (timestamp_ != nullptr) {
        int64_t ts = in.read_fixed<int64_t>();
        timestamp_->has_timestamp = ts != kNoRecordTimestamp;
        timestamp_->timestamp_ms = ts;
      }
      T record = TypeSerializer<T>::deserialize(in);
      if (!in.ok()) {
        return Status::corruption("network buffer of " + std::to_string(size) + " bytes: record " +
                                  std::to_string(n) + " does not decode as " +
                                  TypeSerializer<T>::snapshot().to_string());
      }
      target_->collect(std::move(record));
      ++n;
    }
    return n;
  }

 private:
  Output<T>* target_;
  RecordTimestamp* timestamp_;
};

}  // namespace sluice
