// Where a Kafka source starts reading each partition (Flink's OffsetsInitializer), and what the split enumerator
// resolves it to: always a concrete offset, never a symbolic "latest", so a split's checkpointed position means
// the same thing on every restore.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace sluice::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// For partitions that `committed` or `specific` have no offset for.
enum class OffsetResetStrategy {
  kEarliest,  // the partition's first available offset
  kLatest,    // its end offset (for read_committed: the last stable offset)
  kNone,      // fail the enumerator's start, naming the partition
};

// How the starting offset of each partition is chosen, once, when the job starts without a checkpoint (a restore
// resumes from the splits' checkpointed offsets instead).
class OffsetsInitializer {
 public:
  enum class Kind { kEarliest, kLatest, kCommitted, kTimestamp, kSpecific };

  // The first available offset (the low watermark; records removed by retention are skipped).
  static OffsetsInitializer earliest() { return OffsetsInitializer(Kind::kEarliest); }
  // The end offset at start: only records produced later are read. With read_committed, the last stable offset.
  static OffsetsInitializer latest() { return OffsetsInitializer(Kind::kLatest); }
  // The offsets committed by the consumer group (KafkaSourceOptions::group_id, required); `reset` for partitions
  // the group has not committed.
  static OffsetsInitializer committed(OffsetResetStrategy reset = OffsetResetStrategy::kNone) {
    OffsetsInitializer o(Kind::kCommitted);
    o.reset_ = reset;
    return o;
  }
  // The first record whose timestamp is >= timestamp_ms (Kafka's ListOffsets by time); partitions with no such
  // record start at their end offset.
  static OffsetsInitializer timestamp(int64_t timestamp_ms) {
    OffsetsInitializer o(Kind::kTimestamp);
    o.timestamp_ms_ = timestamp_ms;
    return o;
  }
  // Given offsets per partition; `reset` for partitions not in the map. An offset past the partition's end offset
  // or before its first available one is taken as given (librdkafka's auto.offset.reset applies when it is read).
  static OffsetsInitializer specific(std::map<TopicPartition, int64_t> offsets,
                                     OffsetResetStrategy reset = OffsetResetStrategy::kEarliest) {
    OffsetsInitializer o(Kind::kSpecific);
    o.offsets_ = std::move(offsets);
    o.reset_ = reset;
    return o;
  }

  Kind kind() const { return kind_; }
  OffsetResetStrategy reset_strategy() const { return reset_; }
  int64_t timestamp_ms() const { return timestamp_ms_; }
  const std::map<TopicPartition, int64_t>& offsets() const { return offsets_; }

 private:
  explicit OffsetsInitializer(Kind kind) : kind_(kind) {}
  Kind kind_;
  OffsetResetStrategy reset_ = OffsetResetStrategy::kEarliest;
  int64_t timestamp_ms_ = 0;
  std::map<TopicPartition, int64_t> offsets_;
};

// The partition offsets the enumerator looked up for one partition (-1: not looked up / none).
struct PartitionOffsets {
  int64_t earliest = -1;   // low watermark
  int64_t latest = -1;     // end offset for the source's isolation level
  int64_t committed = -1;  // the group's committed offset, -1 when none
  int64_t by_timestamp = -1;  // first offset with timestamp >= the initializer's, -1 when none
};

// The starting offset `init` gives a partition whose offsets are `found` (a pure decision, unit-tested). An
// error message (naming the partition) when the reset strategy is kNone and there is no offset to start from.
struct StartOffset {
  int64_t offset = -1;
  std::string error;  // non-empty: no offset
};
StartOffset choose_start_offset(const OffsetsInitializer& init, const TopicPartition& tp, const PartitionOffsets& found);

}  // namespace sluice::kafka
