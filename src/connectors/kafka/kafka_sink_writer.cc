// KafkaSink's writer for the guarantees NONE and AT_LEAST_ONCE: one idempotent producer per subtask; at the
// barrier (prepare_commit) AT_LEAST_ONCE waits for every record's acknowledgement, so a completed checkpoint
// never covers a record the broker has not stored. Delivery errors fail the task (replay from the checkpoint).
#include <memory>
#include <stdexcept>

#include "kafka_producer.h"
#include "kafka_transactions.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka {
namespace detail {
std::unique_ptr<KafkaWriterCore> make_transactional_writer(const KafkaSinkOptions& options, TwoPhaseCommitContext& ctx,
                                                           std::shared_ptr<ProducerPool> pool);
namespace {

class NonTransactionalWriter final : public KafkaWriterCore {
 public:
  NonTransactionalWriter(const KafkaSinkOptions& options, int32_t subtask)
      : producer_(options, "", "sink-" + std::to_string(subtask)),
        flush_at_barrier_(options.delivery_guarantee == DeliveryGuarantee::kAtLeastOnce) {}
  void write(const KafkaProducerRecord& record) override {
    producer_.produce(record);
    if (++since_poll_ >= 1024) {  // serve delivery reports (and surface their errors) as we go
      since_poll_ = 0;
      producer_.poll();
    }
  }
  void flush(bool) override { producer_.flush(); }
  std::vector<KafkaCommittable> prepare_commit() override {
    if (flush_at_barrier_) {
      producer_.flush();
    } else {
      producer_.poll();
    }
    return {};
  }
  void close() override {}

 private:
  internal::Producer producer_;
  bool flush_at_barrier_;
  int since_poll_ = 0;
};

}  // namespace

std::unique_ptr<KafkaWriterCore> make_kafka_writer(const KafkaSinkOptions& options, TwoPhaseCommitContext& ctx,
                                                   std::shared_ptr<ProducerPool> pool) {
  if (options.delivery_guarantee == DeliveryGuarantee::kExactlyOnce) {
    return make_transactional_writer(options, ctx, std::move(pool));
  }
  return std::make_unique<NonTransactionalWriter>(options, ctx.subtask_index());
}

}  // namespace detail

std::string kafka_transaction_timeout_warning(int64_t transaction_timeout_ms, int64_t checkpoint_interval_ms,
                                              int64_t checkpoint_timeout_ms, int64_t max_restart_delay_ms) {
  const int64_t needed = checkpoint_interval_ms + checkpoint_timeout_ms + max_restart_delay_ms;
  if (transaction_timeout_ms >= needed) return {};
  return "kafka sink: transaction.timeout.ms " + std::to_string(transaction_timeout_ms) +
         " ms is shorter than checkpoint interval " + std::to_string(checkpoint_interval_ms) + " ms + checkpoint timeout " +
         std::to_string(checkpoint_timeout_ms) + " ms + longest restart delay " + std::to_string(max_restart_delay_ms) +
         " ms = " + std::to_string(needed) +
         " ms: the broker may abort a transaction before its checkpoint commits it (the restore then writes it "
         "again; a job that keeps failing so makes no progress). Raise transaction_timeout_ms (up to the broker's "
         "transaction.max.timeout.ms)";
}

}  // namespace sluice::kafka
