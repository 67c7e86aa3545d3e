// The Kafka source's split enumerator: lists the topics' partitions at start, resolves each partition's starting
// (and, when bounded, stopping) offset to a concrete number, and assigns each partition to its owner subtask when
// that reader registers. Unbounded, it lists the partitions again every partition_discovery_interval_ms (off its
// lock) and adds the new ones at their earliest offset (0: a reader whose offset retention removed resumes at the
// log start, auto.offset.reset=earliest). Its checkpointed state is the splits not assigned yet, then every
// partition it knows (so a restore neither misses nor re-adds one); a state written before discovery existed has
// only the splits, and its first discovery takes the partitions it finds as known.
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "rdkafka_client.h"
#include "sluice/connectors/kafka/kafka_source.h"

namespace sluice::kafka {
namespace {

using internal::PartitionListPtr;
using internal::RdKafkaPtr;

[[noreturn]] void fail(Status status) { throw StatusError(std::move(status)); }

Status kafka_error(rd_kafka_resp_err_t err, const std::string& what) {
  std::string message = "kafka source: " + what + ": " + rd_kafka_err2str(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
      return Status::io_error(std::move(message));  // retriable: the restart strategy may try again
    default:
      return Status::failed_precondition(std::move(message));
  }
}

// The partition ids of `topic`.
std::vector<int32_t> list_partitions(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr) fail(Status::invalid_argument("kafka source: invalid topic name '" + topic + "'"));
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) fail(kafka_error(err, "listing the partitions of topic '" + topic + "'"));
  std::vector<int32_t> partitions;
  rd_kafka_resp_err_t topic_err = md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  if (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < md->topics[0].partition_cnt; ++i) partitions.push_back(md->topics[0].partitions[i].id);
  }
  rd_kafka_metadata_destroy(md);
  if (topic_err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    fail(Status::not_found("kafka source: topic '" + topic + "' does not exist"));
  }
  if (topic_err != RD_KAFKA_RESP_ERR_NO_ERROR) fail(kafka_error(topic_err, "topic '" + topic + "'"));
  if (partitions.empty()) fail(Status::not_found("kafka source: topic '" + topic + "' has no partitions"));
  return partitions;
}

// Fills `found` for the given partitions: watermarks always, committed and by-timestamp offsets when `init`
// needs them.
void look_up_offsets(rd_kafka_t* rk, const KafkaSourceOptions& options, const std::vector<TopicPartition>& tps,
                     std::vector<PartitionOffsets>& found) {
  const int timeout_ms = options.request_timeout_ms;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (size_t i = 0; i < tps.size(); ++i) {
    // With isolation.level=read_committed, the high watermark answered is the last stable offset. A partition
    // whose leader is not known yet (a topic created a moment ago, a leader moving) is asked again until the
    // request timeout.
    rd_kafka_resp_err_t err;
    while (true) {
      err = rd_kafka_query_watermark_offsets(rk, tps[i].topic.c_str(), tps[i].partition, &found[i].earliest,
                                             &found[i].latest, timeout_ms);
      const bool leader_unknown = err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                                  err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                                  err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
      if (!leader_unknown || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fail(kafka_error(err, "end offsets of " + tps[i].topic + "-" + std::to_string(tps[i].partition)));
    }
  }
  const auto kind = options.starting_offsets.kind();
  if (kind != OffsetsInitializer::Kind::kCommitted && kind != OffsetsInitializer::Kind::kTimestamp) return;
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(tps.size())));
  for (const auto& tp : tps) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        kind == OffsetsInitializer::Kind::kTimestamp ? options.starting_offsets.timestamp_ms() : RD_KAFKA_OFFSET_INVALID;
  }
  rd_kafka_resp_err_t err = kind == OffsetsInitializer::Kind::kTimestamp
                                ? rd_kafka_offsets_for_times(rk, list.get(), timeout_ms)
                                : rd_kafka_committed(rk, list.get(), timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fail(kafka_error(err, kind == OffsetsInitializer::Kind::kTimestamp
                              ? "offsets for timestamp " + std::to_string(options.starting_offsets.timestamp_ms())
                              : "committed offsets of group '" + internal::effective_group_id(options) + "'"));
  }
  for (int j = 0; j < list->cnt; ++j) {
    const rd_kafka_topic_partition_t& e = list->elems[j];
    if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fail(kafka_error(e.err, "offset of " + std::string(e.topic) + "-" + std::to_string(e.partition)));
    }
    size_t i = 0;  // matched by name: the answer need not keep the request's order
    while (i < tps.size() && (tps[i].partition != e.partition || tps[i].topic != e.topic)) ++i;
    if (i == tps.size()) continue;
    // A negative offset means none (no commit / no record at or after the timestamp).
    int64_t& slot = kind == OffsetsInitializer::Kind::kTimestamp ? found[i].by_timestamp : found[i].committed;
    slot = e.offset >= 0 ? e.offset : -1;
  }
}

class KafkaEnumerator final : public SplitEnumerator<KafkaPartitionSplit> {
 public:
  KafkaEnumerator(SplitEnumeratorContext<KafkaPartitionSplit>& ctx, KafkaSourceOptions options)
      : ctx_(ctx), options_(std::move(options)) {}
  // Continues from snapshot_state(): the partitions were listed and their offsets resolved by the first run.
  KafkaEnumerator(SplitEnumeratorContext<KafkaPartitionSplit>& ctx, KafkaSourceOptions options,
                  const std::vector<uint8_t>& state)
      : ctx_(ctx), options_(std::move(options)), initialized_(true) {
    DataInputView in(state.data(), state.size());
    pending_ = TypeSerializer<std::vector<KafkaPartitionSplit>>::deserialize(in);
    if (in.ok() && !in.at_end()) {
      for (auto& tp : TypeSerializer<std::vector<std::pair<std::string, int32_t>>>::deserialize(in)) known_.insert(tp);
    } else {
      known_is_baseline_ = false;  // the format before discovery
    }
    if (!in.ok() || !in.at_end()) {
      throw std::invalid_argument("kafka source enumerator state is malformed (" + std::to_string(state.size()) +
                                  " bytes)");
    }
    // Well-framed state can still hold a split no reader can take: a negative offset would be assigned and fail
    // the reader, a negative partition would never be assigned (no subtask owns it) and its records never read.
    for (const KafkaPartitionSplit& s : pending_) {
      if (s.topic.empty() || s.partition < 0 || s.offset < 0 ||
          (s.stopping_offset != kNoStoppingOffset && s.stopping_offset < 0)) {
        throw std::invalid_argument(
            "kafka source enumerator state is malformed: split '" + s.split_id() + "' has partition " +
            std::to_string(s.partition) + ", offset " + std::to_string(s.offset) + " and stopping offset " +
            std::to_string(s.stopping_offset) +
            " (expected a topic, a partition >= 0, an offset >= 0 and a stopping offset >= 0 or -1)");
      }
    }
    for (const auto& [topic, partition] : known_) {
      if (topic.empty() || partition < 0) {
        throw std::invalid_argument("kafka source enumerator state is malformed: known partition '" + topic + "-" +
                                    std::to_string(partition) + "' (expected a topic and a partition >= 0)");
      }
    }
  }

  void start() override {
    if (!initialized_) list_and_resolve();
    if (options_.boundedness != Boundedness::kBounded && options_.partition_discovery_interval_ms > 0) {
      const KafkaSourceOptions options = options_;
      ctx_.call_async([this, options] { return discover(options); }, options_.partition_discovery_interval_ms,
                      options_.partition_discovery_interval_ms);
    }
  }
  void add_reader(int32_t subtask) override {
    registered_.insert(subtask);
    assign_pending(subtask);
  }
  void handle_split_request(int32_t) override {}  // partitions are pushed to their owners on registration
  void add_splits_back(std::vector<KafkaPartitionSplit> splits, int32_t subtask) override {
    for (auto& s : splits) pending_.push_back(std::move(s));
    assign_pending(subtask);
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override {
    std::vector<uint8_t> out = serialize_bytes(pending_);
    serialize_append(std::vector<std::pair<std::string, int32_t>>(known_.begin(), known_.end()), out);
    return out;
  }

 private:
  // On the worker: the topics' partitions now; the continuation (under the enumerator's lock) adds the new ones.
  // A failed listing (a broker down) is logged by the caller and tried again next period.
  std::function<void()> discover(const KafkaSourceOptions& options) {
    auto consumer = internal::make_consumer(options, "source-discovery");
    if (!consumer.is_ok()) throw StatusError(consumer.status());
    std::set<std::pair<std::string, int32_t>> listed;
    for (const auto& topic : options.topics) {
      for (int32_t p : list_partitions(consumer->get(), topic, options.request_timeout_ms)) listed.insert({topic, p});
    }
    return [this, listed = std::move(listed)] { add_discovered(listed); };
  }
  void add_discovered(const std::set<std::pair<std::string, int32_t>>& listed) {
    if (!known_is_baseline_) {
      known_.insert(listed.begin(), listed.end());
      known_is_baseline_ = true;
      return;
    }
    bool added = false;
    for (const auto& tp : listed) {
      if (!known_.insert(tp).second) continue;
      pending_.push_back(KafkaPartitionSplit{tp.first, tp.second, 0, kNoStoppingOffset});
      added = true;
    }
    if (!added) return;
    for (int32_t subtask : registered_) assign_pending(subtask);
  }
  void list_and_resolve() {
    if (options_.topics.empty()) fail(Status::invalid_argument("kafka source: no topics given"));
    auto consumer = internal::make_consumer(options_, "source-enumerator");
    if (!consumer.is_ok()) fail(consumer.status());
    rd_kafka_t* rk = consumer->get();
    std::vector<TopicPartition> tps;
    for (const auto& topic : options_.topics) {
      for (int32_t p : list_partitions(rk, topic, options_.request_timeout_ms)) tps.push_back({topic, p});
    }
    std::vector<PartitionOffsets> found(tps.size());
    look_up_offsets(rk, options_, tps, found);
    const bool bounded = options_.boundedness == Boundedness::kBounded;
    for (size_t i = 0; i < tps.size(); ++i) {
      StartOffset start = choose_start_offset(options_.starting_offsets, tps[i], found[i]);
      if (!start.error.empty()) fail(Status::not_found(start.error));
      pending_.push_back(KafkaPartitionSplit{tps[i].topic, tps[i].partition, start.offset,
                                             bounded ? found[i].latest : kNoStoppingOffset});
      known_.insert({tps[i].topic, tps[i].partition});
    }
    initialized_ = true;
  }
  void assign_pending(int32_t subtask) {
    const int32_t parallelism = ctx_.current_parallelism();
    std::vector<KafkaPartitionSplit> keep;
    for (auto& s : pending_) {
      if (kafka_split_owner(s.topic, s.partition, parallelism) == subtask) {
        ctx_.assign_split(std::move(s), subtask);
      } else {
        keep.push_back(std::move(s));
      }
    }
    pending_ = std::move(keep);
    // A bounded source lists partitions once: its readers have all they will get. (Unbounded readers keep waiting
    // for partitions discovery finds.)
    if (options_.boundedness == Boundedness::kBounded) ctx_.signal_no_more_splits(subtask);
  }

  SplitEnumeratorContext<KafkaPartitionSplit>& ctx_;
  KafkaSourceOptions options_;
  bool initialized_ = false;
  std::vector<KafkaPartitionSplit> pending_;
  std::set<std::pair<std::string, int32_t>> known_;  // every partition listed or discovered (topic, partition)
  bool known_is_baseline_ = true;  // false: restored from a state without known_ (the next listing sets it)
  std::set<int32_t> registered_;   // readers registered in this attempt
};

}  // namespace

namespace detail {

std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> make_kafka_enumerator(
    SplitEnumeratorContext<KafkaPartitionSplit>& ctx, const KafkaSourceOptions& options) {
  return std::make_unique<KafkaEnumerator>(ctx, options);
}

std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> restore_kafka_enumerator(
    SplitEnumeratorContext<KafkaPartitionSplit>& ctx, const KafkaSourceOptions& options,
    const std::vector<uint8_t>& state) {
  return std::make_unique<KafkaEnumerator>(ctx, options, state);
}

}  // namespace detail
}  // namespace sluice::kafka
