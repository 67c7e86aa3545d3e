// KafkaSplitReader: one librdkafka consumer per reader subtask, partitions assigned by hand (incremental
// assign/unassign, no consumer-group membership), records taken in batches from the consumer queue.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "rdkafka_client.h"
#include "sluice/connectors/kafka/kafka_source.h"

namespace sluice::kafka {

using internal::MessagePtr;
using internal::PartitionListPtr;
using internal::RdKafkaPtr;

namespace {

constexpr size_t kBatch = 256;

struct Slot {
  KafkaPartitionSplit split;
  std::string id;                  // split.split_id()
  rd_kafka_topic_t* rkt = nullptr;  // librdkafka's topic handle, learnt from the first message (not owned)
  bool active = true;
  bool ended_and_checkpointed = false;  // ended, and a completed checkpoint held its final offset
};

bool reached_stop(const KafkaPartitionSplit& s) {
  return s.stopping_offset != kNoStoppingOffset && s.offset >= s.stopping_offset;
}

}  // namespace

struct KafkaSplitReader::Impl {
  RdKafkaPtr consumer;
  rd_kafka_queue_t* queue = nullptr;
  std::vector<Slot> slots;  // never shrinks while the reader lives: a slot index identifies its split
  std::array<rd_kafka_message_t*, kBatch> batch{};
  size_t batch_size = 0;
  size_t batch_pos = 0;
  MessagePtr current;  // the message the last record view points into
  std::vector<std::string> finished;
  std::vector<size_t> to_unassign;
  size_t last_hit = SIZE_MAX;

  ~Impl() {
    current.reset();
    drop_batch();
    if (queue != nullptr) rd_kafka_queue_destroy(queue);
    if (consumer) rd_kafka_consumer_close(consumer.get());
  }

  void drop_batch() {
    for (size_t i = batch_pos; i < batch_size; ++i) rd_kafka_message_destroy(batch[i]);
    batch_pos = batch_size = 0;
  }

  // The slot of m's partition. Messages come in runs per partition (librdkafka delivers fetched batches whole),
  // so the previous hit is tried first and the scan over all slots is the exception.
  Slot* find(const rd_kafka_message_t* m, size_t& index) {
    if (last_hit < slots.size()) {
      Slot& s = slots[last_hit];
      if (s.active && s.rkt == m->rkt && s.split.partition == m->partition) {
        index = last_hit;
        return &s;
      }
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      Slot& s = slots[i];
      if (!s.active || s.split.partition != m->partition) continue;
      if (s.rkt == m->rkt || (s.rkt == nullptr && s.split.topic == rd_kafka_topic_name(m->rkt))) {
        s.rkt = m->rkt;
        index = last_hit = i;
        return &s;
      }
    }
    return nullptr;
  }

  void finish(size_t index) {
    Slot& s = slots[index];
    if (!s.active) return;
    s.active = false;
    // Ended at or past its end: every offset before the stopping offset was delivered or was a marker / aborted
    // record, so the final position (checkpointed and committed back) is at least the end.
    if (s.split.stopping_offset != kNoStoppingOffset) s.split.offset = std::max(s.split.offset, s.split.stopping_offset);
    finished.push_back(s.id);
    to_unassign.push_back(index);
  }

  // Removes ended splits from the consumer's assignment (outside next(), which hands out views).
  void unassign_finished() {
    if (to_unassign.empty()) return;
    PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(to_unassign.size())));
    for (size_t i : to_unassign) {
      rd_kafka_topic_partition_list_add(list.get(), slots[i].split.topic.c_str(), slots[i].split.partition);
    }
    to_unassign.clear();
    rd_kafka_error_t* e = rd_kafka_incremental_unassign(consumer.get(), list.get());
    if (e != nullptr) {
      std::string what = rd_kafka_error_string(e);
      rd_kafka_error_destroy(e);
      throw StatusError(Status::internal("kafka source: unassigning finished partitions: " + what));
    }
  }

  [[noreturn]] void fatal(const std::string& what) {
    throw StatusError(Status::io_error("kafka source: " + what));
  }
};

KafkaSplitReader::KafkaSplitReader(const KafkaSourceOptions& options, int32_t subtask_index) : impl_(new Impl) {
  auto consumer = internal::make_consumer(options, "source-reader-" + std::to_string(subtask_index));
  if (!consumer.is_ok()) throw StatusError(consumer.status());
  impl_->consumer = std::move(consumer).value();
  // Messages of all assigned partitions arrive on the consumer queue (rd_kafka_consumer_poll's queue).
  rd_kafka_poll_set_consumer(impl_->consumer.get());
  impl_->queue = rd_kafka_queue_get_consumer(impl_->consumer.get());
}

KafkaSplitReader::~KafkaSplitReader() = default;

void KafkaSplitReader::add_splits(std::vector<KafkaPartitionSplit> splits) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(splits.size())));
  for (auto& split : splits) {
    if (split.offset < 0) {
      throw StatusError(Status::invalid_argument("kafka source: split " + split.split_id() + " has offset " +
                                                 std::to_string(split.offset) + " (expected a concrete offset >= 0)"));
    }
    Slot slot{std::move(split), {}, nullptr, true};
    slot.id = slot.split.split_id();
    impl_->slots.push_back(std::move(slot));
    const size_t index = impl_->slots.size() - 1;
    const KafkaPartitionSplit& s = impl_->slots[index].split;
    if (reached_stop(s)) {  // an empty bounded split: nothing to read
      impl_->slots[index].active = false;
      impl_->finished.push_back(impl_->slots[index].id);
      continue;
    }
    rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset = s.offset;
  }
  if (list->cnt == 0) return;
  rd_kafka_error_t* e = rd_kafka_incremental_assign(impl_->consumer.get(), list.get());
  if (e != nullptr) {
    std::string what = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    throw StatusError(Status::internal("kafka source: assigning partitions: " + what));
  }
}

bool KafkaSplitReader::next(KafkaRecordView& record) {
  Impl& im = *impl_;
  im.current.reset();
  while (im.batch_pos < im.batch_size) {
    MessagePtr m(im.batch[im.batch_pos++]);
    size_t index = 0;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // The consumer's position at the partition's end (past any markers and aborted records; under
      // read_committed, the last stable offset). Every record before it has been delivered already.
      Slot* s = im.find(m.get(), index);
      if (s != nullptr) {
        s->split.offset = std::max(s->split.offset, m->offset);
        if (reached_stop(s->split)) im.finish(index);
      }
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Per-partition and broker errors are informational (librdkafka retries); these are not.
      if (m->err == RD_KAFKA_RESP_ERR__FATAL || m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
          m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
          m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
        std::string where = m->rkt != nullptr ? std::string(rd_kafka_topic_name(m->rkt)) + "-" +
                                                    std::to_string(m->partition) + ": "
                                              : std::string();
        im.fatal(where + rd_kafka_message_errstr(m.get()));
      }
      continue;
    }
    Slot* s = im.find(m.get(), index);
    if (s == nullptr || m->offset < s->split.offset) continue;  // unassigned partition, or already delivered
    if (s->split.stopping_offset != kNoStoppingOffset && m->offset >= s->split.stopping_offset) {
      im.finish(index);  // written after the job started: beyond the bounded end
      continue;
    }
    s->split.offset = m->offset + 1;
    record.topic = s->split.topic;
    record.partition = m->partition;
    record.offset = m->offset;
    rd_kafka_timestamp_type_t type;
    const int64_t ts = rd_kafka_message_timestamp(m.get(), &type);
    record.timestamp_ms = (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0) ? kNoRecordTimestamp : ts;
    record.has_key = m->key != nullptr;
    record.key = record.has_key ? std::string_view(static_cast<const char*>(m->key), m->key_len) : std::string_view();
    record.has_value = m->payload != nullptr;
    record.value =
        record.has_value ? std::string_view(static_cast<const char*>(m->payload), m->len) : std::string_view();
    record.split_slot = index;
    if (reached_stop(s->split)) im.finish(index);  // this was the last record before the end
    im.current = std::move(m);
    return true;
  }
  return false;
}

void KafkaSplitReader::fetch() {
  Impl& im = *impl_;
  im.current.reset();
  im.drop_batch();
  im.unassign_finished();
  if (rd_kafka_resp_err_t err = rd_kafka_fatal_error(im.consumer.get(), nullptr, 0); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    im.fatal(std::string("fatal consumer error: ") + rd_kafka_err2str(err));
  }
  const ssize_t n = rd_kafka_consume_batch_queue(im.queue, 0, im.batch.data(), im.batch.size());
  if (n < 0) im.fatal(std::string("consuming: ") + rd_kafka_err2str(rd_kafka_last_error()));
  im.batch_size = static_cast<size_t>(n);
}

std::vector<std::string> KafkaSplitReader::take_finished_splits() { return std::exchange(impl_->finished, {}); }

size_t KafkaSplitReader::num_active_splits() const {
  return static_cast<size_t>(
      std::count_if(impl_->slots.begin(), impl_->slots.end(), [](const Slot& s) { return s.active; }));
}

std::vector<KafkaPartitionSplit> KafkaSplitReader::snapshot() const {
  std::vector<KafkaPartitionSplit> out;
  for (const Slot& s : impl_->slots) {
    if (s.active || !s.ended_and_checkpointed) out.push_back(s.split);
  }
  return out;
}

void KafkaSplitReader::checkpoint_complete(const std::vector<KafkaPartitionSplit>& splits) {
  for (Slot& s : impl_->slots) {
    if (s.active || s.ended_and_checkpointed) continue;
    for (const auto& c : splits) {
      if (c.topic == s.split.topic && c.partition == s.split.partition && c.offset == s.split.offset) {
        s.ended_and_checkpointed = true;
      }
    }
  }
}

void KafkaSplitReader::commit_offsets(const std::vector<KafkaPartitionSplit>& splits) {
  if (splits.empty()) return;
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(splits.size())));
  for (const auto& s : splits) rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset = s.offset;
  // Asynchronous: the task does not wait for the group coordinator. An error here (e.g. no coordinator yet) only
  // leaves the group's committed offsets behind; the next checkpoint commits newer ones.
  (void)rd_kafka_commit(impl_->consumer.get(), list.get(), 1);
}

}  // namespace sluice::kafka
