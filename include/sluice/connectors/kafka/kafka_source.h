// KafkaSource: records of Kafka topics through librdkafka (Flink's KafkaSource, FLIP-27).
//
// Splits are topic partitions. Each split's state is a concrete offset, the next one to read: the enumerator
// resolves the starting offsets (OffsetsInitializer: earliest, latest, committed, timestamp, specific) once, at
// a start without checkpoint, and a restore seeks each partition back to its checkpointed offset exactly.
// Partition p of topic t is owned by reader subtask (hash(t) + p) % parallelism and assigned when that reader
// registers.
//
// Bounded mode (KafkaSourceOptions::boundedness = kBounded) stops each partition at the end offset the enumerator
// saw at start (the last stable offset under read_committed): records at or after it are not emitted, and a
// partition whose last offsets are transaction markers or aborted records also ends (the consumer's position
// passes them; docs/kafka.md). The stopping offsets are part of the split, so a restore stops at the same place.
//
// Event time: records are emitted with their Kafka timestamp (CreateTime or LogAppendTime) per partition split,
// so a WatermarkStrategy gets per-partition watermarks (from_source(source, strategy, name)).
//
// Offsets are committed back to Kafka (group_id) when a checkpoint completes, for monitoring only
// (commit_offsets_on_checkpoint). Unbounded sources discover partitions added later
// (partition_discovery_interval_ms); they start at their earliest offset.
//
// Errors: a topic that does not exist, an unreachable cluster or a missing offset with OffsetResetStrategy::kNone
// fail the job at the enumerator's start (std::runtime_error naming the topic/partition); invalid librdkafka
// properties fail the reader's task with librdkafka's message; fatal consumer errors fail the reading task.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/connectors/kafka/offsets_initializer.h"
#include "sluice/core/serializer.h"
#include "sluice/source/source.h"

namespace sluice::kafka {

inline constexpr int64_t kNoStoppingOffset = -1;

struct KafkaPartitionSplit {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;                         // the next offset to read (concrete, >= 0)
  int64_t stopping_offset = kNoStoppingOffset;  // bounded: the split ends when offset reaches it; -1: unbounded
  std::string split_id() const { return topic + "-" + std::to_string(partition); }
  bool operator==(const KafkaPartitionSplit&) const = default;
  SLUICE_FIELDS(KafkaPartitionSplit, topic, partition, offset, stopping_offset)
};

enum class IsolationLevel {
  kReadCommitted,    // only records of committed transactions (and non-transactional ones); the default
  kReadUncommitted,  // every record, also from aborted and open transactions
};

struct KafkaSourceOptions {
  std::string bootstrap_servers;  // "host:port[,host:port...]", required
  std::vector<std::string> topics;  // at least one; every partition of each is read
  // The consumer group: used to look up committed offsets (OffsetsInitializer::committed). Sluice assigns
  // partitions itself; the group's membership protocol is not used. Empty: "sluice-kafka-source".
  std::string group_id;
  OffsetsInitializer starting_offsets = OffsetsInitializer::earliest();
  Boundedness boundedness = Boundedness::kContinuousUnbounded;
  // read_committed by default (Kafka's own default is read_uncommitted): a job reading the output of an
  // exactly-once producer then never sees records of aborted transactions.
  IsolationLevel isolation = IsolationLevel::kReadCommitted;
  // Flink's commit.offsets.on.checkpoint: when a checkpoint completes, each reader commits the offsets it
  // checkpointed to Kafka under group_id (asynchronously). For monitoring (consumer lag) only: a restore reads the
  // checkpoint's offsets, never these. Default true.
  bool commit_offsets_on_checkpoint = true;
  // Flink's partition.discovery.interval.ms: how often the enumerator lists the topics' partitions again (unbounded
  // sources only; <= 0 turns discovery off). A partition found later starts at its earliest offset and goes to its
  // owner subtask. Default 5 minutes (Flink's).
  int64_t partition_discovery_interval_ms = 5 * 60 * 1000;
  // Timeout of the enumerator's lookups (metadata, offsets) at start, in milliseconds. Default 30 s.
  int32_t request_timeout_ms = 30000;
  // Further librdkafka consumer properties (e.g. "fetch.max.bytes", "security.protocol"), applied last. Sluice
  // sets bootstrap.servers, group.id, isolation.level, enable.auto.commit=false, enable.partition.eof=true
  // and auto.offset.reset=earliest (a checkpointed offset that retention removed resumes at the first record left).
  std::map<std::string, std::string> properties;
};

// One consumed record, valid until the reader's next fetch() / next() call (it points into librdkafka's buffer).
struct KafkaRecordView {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = kNoRecordTimestamp;  // the record's timestamp, kNoRecordTimestamp when it has none
  std::string_view key;
  std::string_view value;
  bool has_key = false;    // false for a null key (key is then empty)
  bool has_value = false;  // false for a null value (a tombstone)
  size_t split_slot = 0;   // the reader's index of the record's split, stable while the split is assigned
};

// The record type of make_kafka_source() without a deserializer.
struct KafkaRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = kNoRecordTimestamp;
  std::string key;
  std::string value;
  bool operator==(const KafkaRecord&) const = default;
  SLUICE_FIELDS(KafkaRecord, topic, partition, offset, timestamp_ms, key, value)
};

// A deserializer turns a record view into T in place (reusing `out`'s buffers); false skips the record. It is
// copied into every reader and called on the task thread only. Exceptions fail the task. T must be
// default-constructible (each reader keeps one scratch T that it refills and moves downstream).
template <class D, class T>
concept KafkaDeserializer = std::copy_constructible<D> && requires(D d, const KafkaRecordView& v, T& out) {
  { d(v, out) } -> std::convertible_to<bool>;
};

struct KafkaRecordDeserializer {
  bool operator()(const KafkaRecordView& v, KafkaRecord& out) const {
    out.topic.assign(v.topic);
    out.partition = v.partition;
    out.offset = v.offset;
    out.timestamp_ms = v.timestamp_ms;
    out.key.assign(v.key);
    out.value.assign(v.value);
    return true;
  }
};

// The record's value as a string.
struct ValueStringDeserializer {
  bool operator()(const KafkaRecordView& v, std::string& out) const {
    out.assign(v.value);
    return true;
  }
};

// The owner of a partition: (hash(topic) + partition) % parallelism, hash a fixed string hash (the same in every
// process), so a topic's partitions are spread round-robin starting at a topic-dependent subtask.
int32_t kafka_split_owner(const std::string& topic, int32_t partition, int32_t parallelism);

// The consumer behind a reader: a librdkafka consumer with manually assigned partitions. Not thread-safe: the
// reader's task thread only. Used by KafkaSourceReader; public so that it can be tested alone.
class KafkaSplitReader {
 public:
  // Creates the consumer; std::runtime_error names an invalid property.
  KafkaSplitReader(const KafkaSourceOptions& options, int32_t subtask_index);
  ~KafkaSplitReader();
  KafkaSplitReader(const KafkaSplitReader&) = delete;
  KafkaSplitReader& operator=(const KafkaSplitReader&) = delete;

  // Starts reading these partitions at their offsets. A split already at its stopping offset ends at once.
  void add_splits(std::vector<KafkaPartitionSplit> splits);
  // The next record of an assigned split, in offset order per partition; false when none is buffered (then call
  // fetch()). The split's offset moves past the record (the position a checkpoint taken now records).
  bool next(KafkaRecordView& record);
  // Takes the records librdkafka has ready (does not block). Throws std::runtime_error on a fatal consumer error.
  void fetch();
  // Splits that ended (bounded mode) since the last call, by split_id().
  std::vector<std::string> take_finished_splits();
  // Splits still being read.
  size_t num_active_splits() const;
  // The active splits at their current offsets, and the ended ones (bounded mode) at their final offsets until a
  // completed checkpoint held them (checkpoint_complete): so the checkpoint taken after a split ended - at the
  // latest the final one, when the input is over - carries its final offset, and its notification commits it
  // (Flink's offsetsOfFinishedSplits). Restored, such a split is at its stopping offset and ends at once.
  std::vector<KafkaPartitionSplit> snapshot() const;
  // A checkpoint holding `splits` (its snapshot()) completed: ended splits among them leave later snapshots.
  void checkpoint_complete(const std::vector<KafkaPartitionSplit>& splits);
  // Commits each split's offset (the next one to read) to Kafka under the consumer's group id, asynchronously
  // (not waited for, never fatal: committed offsets are for monitoring only).
  void commit_offsets(const std::vector<KafkaPartitionSplit>& splits);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace detail {
std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> make_kafka_enumerator(
    SplitEnumeratorContext<KafkaPartitionSplit>& ctx, const KafkaSourceOptions& options);
std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> restore_kafka_enumerator(
    SplitEnumeratorContext<KafkaPartitionSplit>& ctx, const KafkaSourceOptions& options,
    const std::vector<uint8_t>& state);
}  // namespace detail

template <class T, class D>
  requires KafkaDeserializer<D, T>
class KafkaSourceReader final : public SourceReader<T, KafkaPartitionSplit> {
 public:
  KafkaSourceReader(const KafkaSourceOptions& options, SourceReaderContext& ctx, D deserializer)
      : reader_(options, ctx.subtask_index()), deserializer_(std::move(deserializer)),
        commit_offsets_(options.commit_offsets_on_checkpoint) {}

  InputStatus poll_next(ReaderOutput<T>& output) override {
    if (!new_split_ids_.empty()) register_new_splits(output);
    KafkaRecordView view;
    while (true) {
      if (!reader_.next(view)) {
        reader_.fetch();
        release_finished(output);
        if (!reader_.next(view)) {
          return no_more_splits_ && reader_.num_active_splits() == 0 ? InputStatus::kEndOfInput
                                                                     : InputStatus::kNothingAvailable;
        }
      }
      if (deserializer_(view, scratch_)) break;  // a skipped record: try the next one
    }
    split_output(output, view).collect(std::move(scratch_), view.timestamp_ms);
    return InputStatus::kMoreAvailable;
  }
  void add_splits(std::vector<KafkaPartitionSplit> splits) override {
    for (const auto& split : splits) new_split_ids_.push_back(split.split_id());
    reader_.add_splits(std::move(splits));
  }
  void notify_no_more_splits() override { no_more_splits_ = true; }
  std::vector<KafkaPartitionSplit> snapshot_state() override { return reader_.snapshot(); }
  void notify_checkpoint_complete(CheckpointId, const std::vector<KafkaPartitionSplit>& splits) override {
    if (commit_offsets_) reader_.commit_offsets(splits);
    reader_.checkpoint_complete(splits);
  }
  // librdkafka fetches in the background; an idle reader looks again after 2 ms.
  std::chrono::nanoseconds idle_wait_hint() const override { return std::chrono::milliseconds(2); }

 private:
  // The split's output (its own watermark generator), cached by the reader's split slot.
  SourceOutput<T>& split_output(ReaderOutput<T>& output, const KafkaRecordView& view) {
    if (view.split_slot >= outputs_.size()) outputs_.resize(view.split_slot + 1, nullptr);
    SourceOutput<T>*& out = outputs_[view.split_slot];
    if (out == nullptr) {
      out = &output.create_output_for_split(std::string(view.topic) + "-" + std::to_string(view.partition));
    }
    return *out;
  }
  // A new partition holds the subtask's watermark back from its assignment on, not from its first record.
  void register_new_splits(ReaderOutput<T>& output) {
    for (const auto& id : new_split_ids_) (void)output.create_output_for_split(id);
    new_split_ids_.clear();
  }
  void release_finished(ReaderOutput<T>& output) {
    std::vector<std::string> finished = reader_.take_finished_splits();
    if (finished.empty()) return;
    for (const auto& id : finished) output.release_output_for_split(id);
    outputs_.clear();  // slots may be reused by later splits; outputs are looked up again
  }

  KafkaSplitReader reader_;
  D deserializer_;
  bool commit_offsets_;
  T scratch_{};
  bool no_more_splits_ = false;
  std::vector<SourceOutput<T>*> outputs_;
  std::vector<std::string> new_split_ids_;
};

template <class T, class D>
  requires KafkaDeserializer<D, T>
class KafkaSource final : public Source<T, KafkaPartitionSplit> {
 public:
  KafkaSource(KafkaSourceOptions options, D deserializer)
      : options_(std::move(options)), deserializer_(std::move(deserializer)) {}

  Boundedness boundedness() const override { return options_.boundedness; }
  std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> create_enumerator(
      SplitEnumeratorContext<KafkaPartitionSplit>& ctx) const override {
    return detail::make_kafka_enumerator(ctx, options_);
  }
  std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> restore_enumerator(
      SplitEnumeratorContext<KafkaPartitionSplit>& ctx, const std::vector<uint8_t>& state) const override {
    return detail::restore_kafka_enumerator(ctx, options_, state);
  }
  std::unique_ptr<SourceReader<T, KafkaPartitionSplit>> create_reader(SourceReaderContext& ctx) const override {
    return std::make_unique<KafkaSourceReader<T, D>>(options_, ctx, deserializer_);
  }
  const KafkaSourceOptions& options() const { return options_; }

 private:
  KafkaSourceOptions options_;
  D deserializer_;
};

// A source of T with deserializer `d` (e.g. make_kafka_source<std::string>(options, ValueStringDeserializer{})).
template <class T, class D>
  requires KafkaDeserializer<D, T>
KafkaSource<T, D> make_kafka_source(KafkaSourceOptions options, D d) {
  return KafkaSource<T, D>(std::move(options), std::move(d));
}

// A source of whole records (topic, partition, offset, timestamp, key, value).
inline KafkaSource<KafkaRecord, KafkaRecordDeserializer> make_kafka_source(KafkaSourceOptions options) {
  return KafkaSource<KafkaRecord, KafkaRecordDeserializer>(std::move(options), KafkaRecordDeserializer{});
}

}  // namespace sluice::kafka
