// KafkaSink's exactly-once writer: one transaction per checkpoint, its records kept for the committable (the
// design is in kafka_sink.h). The producer of a transaction comes from the sink's pool (committed ones are
// reused) or is created with the id named after the checkpoint the transaction belongs to.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "kafka_fencing.h"
#include "kafka_markers.h"
#include "kafka_producer_pool.h"
#include "kafka_transactions.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::detail {
namespace {

class TransactionalWriter final : public KafkaWriterCore {
 public:
  TransactionalWriter(const KafkaSinkOptions& options, TwoPhaseCommitContext& ctx, std::shared_ptr<ProducerPool> pool)
      : options_(options), ctx_(ctx), pool_(std::move(pool)), subtask_(ctx.subtask_index()),
        attempt_(ctx.attempt_number()) {
    if (options_.transactional_id_prefix.empty()) {
      throw StatusError(Status::invalid_argument("kafka sink: delivery_guarantee kExactlyOnce needs a "
                                                "transactional_id_prefix (stable across runs, unique per job and sink)"));
    }
    if (options_.lingering_checkpoints < 1) {
      throw StatusError(Status::invalid_argument("kafka sink: lingering_checkpoints must be at least 1, got " +
                                                std::to_string(options_.lingering_checkpoints)));
    }
    marker_topic_ = internal::marker_topic_of(options_);
    const int32_t partitions = internal::ensure_topic(
        options_, marker_topic_, std::max(ctx.parallelism(), options_.marker_topic_partitions), "marker topic");
    marker_partition_ = internal::marker_partition(subtask_, partitions);
    fence_lingering();
  }
  ~TransactionalWriter() override { close(); }

  void write(const KafkaProducerRecord& record) override {
    ensure_transaction();
    current_->produce(record);
    records_.push_back(record);
    if (++since_poll_ >= 1024) {
      since_poll_ = 0;
      current_->poll();
    }
  }
  void flush(bool) override {
    if (current_) current_->flush();
  }
  std::vector<KafkaCommittable> prepare_commit() override {
    ensure_transaction();  // an empty transaction still carries its marker: every checkpoint has a committable
    KafkaCommittable c;
    c.transactional_id = current_->transactional_id();
    c.job_id = ctx_.job_id();
    c.attempt = attempt_;
    c.checkpoint_id = ctx_.next_checkpoint_id();
    c.subtask = subtask_;
    c.marker_topic = marker_topic_;
    c.marker_partition = marker_partition_;
    KafkaProducerRecord marker;
    marker.topic = marker_topic_;
    marker.partition = marker_partition_;
    marker.value = internal::marker_value(c);
    marker_offset_ = -1;
    current_->produce(marker, &marker_offset_);
    current_->flush();  // pre-commit: everything is on the broker, invisible until the commit
    c.marker_offset = marker_offset_;
    c.pool_ids = ids_;
    c.records = std::move(records_);
    records_.clear();
    pool_->park(std::move(current_), subtask_, attempt_);
    return {std::move(c)};
  }
  void close() override {
    current_.reset();  // aborts an open transaction with unflushed records (bounded); else it lingers until fenced
    pool_->drop(subtask_, attempt_);
  }

 private:
  void ensure_transaction() {
    if (current_) return;
    current_ = pool_->take_free(subtask_, attempt_);
    if (!current_) {
      const std::string id =
          internal::transactional_id(options_.transactional_id_prefix, subtask_, ctx_.next_checkpoint_id());
      current_ = std::make_unique<internal::Producer>(options_, id, "sink-" + std::to_string(subtask_));
      current_->init_transactions();
      ids_.push_back(id);
    }
    current_->begin_transaction();
  }
  // Transactions an earlier attempt or run left open after the checkpoint this one starts from hold back
  // read_committed readers until the broker's timeout: their ids are fenced now. Restored: the committer did it
  // when it recovered the restored transactions, unless none reached this subtask (the state's even split gave it
  // none). Fresh start: the ids of checkpoints 1..lingering_checkpoints (an attempt that failed before its first
  // checkpoint, or an earlier run with the same prefix).
  void fence_lingering() {
    if (ctx_.is_restored() && !ctx_.restored_committables_bytes().empty()) return;
    const int64_t from = ctx_.is_restored() ? ctx_.next_checkpoint_id() - 1 : 0;
    (void)internal::fence(options_,
                          internal::window_ids(options_.transactional_id_prefix, subtask_, from,
                                               options_.lingering_checkpoints),
                          {});
  }

  KafkaSinkOptions options_;
  TwoPhaseCommitContext& ctx_;
  std::shared_ptr<ProducerPool> pool_;
  int32_t subtask_;
  int32_t attempt_;
  std::string marker_topic_;
  int32_t marker_partition_ = 0;
  std::unique_ptr<internal::Producer> current_;  // the open transaction's producer
  std::vector<KafkaProducerRecord> records_;     // of the open transaction
  std::vector<std::string> ids_;                 // every id this writer created
  int64_t marker_offset_ = -1;
  int since_poll_ = 0;
};

}  // namespace

std::unique_ptr<KafkaWriterCore> make_transactional_writer(const KafkaSinkOptions& options, TwoPhaseCommitContext& ctx,
                                                           std::shared_ptr<ProducerPool> pool) {
  return std::make_unique<TransactionalWriter>(options, ctx, std::move(pool));
}

}  // namespace sluice::kafka::detail
