// KafkaSink: records to Kafka topics through librdkafka (Flink's KafkaSink), with Flink's three delivery
// guarantees. It is a two-phase-commit sink (sink/two_phase_commit_sink.h) for all of them, as Flink's is:
//
//  - kNone: records are produced asynchronously; nothing waits for them at checkpoints.
//  - kAtLeastOnce (the default): at each checkpoint barrier the writer flushes, i.e. waits until the broker
//    acknowledged every record produced so far, before the checkpoint is taken. A record the broker refused
//    (a delivery error) fails the task, so the job restarts from its last checkpoint and replays: no loss,
//    possible duplicates.
//  - kExactlyOnce: records go into Kafka transactions, committed when their checkpoint completes, so a
//    read_committed consumer sees each record once. The design (docs/kafka.md) needs no resumption of a
//    transaction after a restart, which librdkafka cannot do:
//      * one transactional id per (transactional_id_prefix, subtask, checkpoint id): "<prefix>-<subtask>-<cp>",
//        named after the checkpoint whose transaction first used it. Producers (each bound to one id, as
//        librdkafka binds transactional.id at creation) are pooled per subtask and reused for a later
//        transaction only after their transaction committed; so a new transaction opens right after each
//        barrier while the previous one awaits its commit.
//      * every transaction also writes a marker record (run JobId, attempt, checkpoint id, subtask) to the marker
//        topic of the job, partition subtask % partitions.
//      * at the barrier the transaction is flushed (pre-commit) and its records are kept in the sink's
//        checkpointed state until it commits: about one checkpoint interval of output per subtask.
//      * on notify_checkpoint_complete(n) every pending transaction up to n commits, in checkpoint order.
//      * on restore, for every transaction in the state: init_transactions on its id (fences the old producer,
//        finishes or aborts its transaction), then its marker is looked up with a read_committed consumer:
//        present means committed; absent means aborted (by the fencing, or by the broker's
//        transaction.timeout.ms while the job was down), and its records from the state are written again in a
//        new transaction under the same id, with the same marker, and committed. The ids of the producer pool and
//        of the `lingering_checkpoints` checkpoints after the restored one are fenced the same way first and
//        carry no data of theirs. A start without a checkpoint fences the ids of checkpoints
//        1..lingering_checkpoints of its subtask (left open by an attempt that failed before its first checkpoint).
//      * at submission the job warns when transaction_timeout_ms < checkpoint interval + checkpoint timeout +
//        the restart strategy's longest delay (submission_warnings).
//      * at submission the job claims its prefix (claims_topic): a second running job with the same prefix is
//        refused, naming the first, instead of fencing and aborting its transactions.
//    Transactions left open beyond that window (only after many checkpoints failed in a row) are aborted by the
//    broker after transaction.timeout.ms; until then they hold back read_committed consumers of their partitions.
//
// Thread-safety: writers and committers run on their subtask's task thread; the producer pool shared by a sink's
// subtasks is internally locked. Errors: std::runtime_error (the task fails and the job restarts) naming the
// topic, partition or transactional id and librdkafka's message; an invalid option fails the writer's creation.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/sink/two_phase_commit_sink.h"

namespace sluice::kafka {

// Flink's org.apache.flink.connector.base.DeliveryGuarantee.
enum class DeliveryGuarantee { kNone, kAtLeastOnce, kExactlyOnce };

struct KafkaSinkOptions {
  std::string bootstrap_servers;  // "host:port[,host:port...]", required
  // Where records go when the serializer leaves KafkaProducerRecord::topic empty.
  std::string topic;
  DeliveryGuarantee delivery_guarantee = DeliveryGuarantee::kAtLeastOnce;
  // kExactlyOnce: required, stable across runs and unique per job and sink (e.g. "<job name>-<sink uid>"):
  // restores find their transactions by it. Flink's setTransactionalIdPrefix.
  std::string transactional_id_prefix;
  // kExactlyOnce: the topic of marker records; empty: "<transactional_id_prefix>.markers". Created (with
  // max(parallelism, marker_topic_partitions) partitions) when it does not exist.
  std::string marker_topic;
  int32_t marker_topic_partitions = 1;
  // kExactlyOnce: the producers' transaction.timeout.ms (librdkafka's default, 60 s). Must not exceed the
  // broker's transaction.max.timeout.ms (15 min by default). Should exceed checkpoint interval + checkpoint
  // timeout + the longest restart delay, or a transaction may be aborted by the broker before it commits (the
  // restore then rewrites it, but a job that keeps failing this way makes no progress); the job warns at
  // submission when it does not (kafka_transaction_timeout_warning).
  int64_t transaction_timeout_ms = 60000;
  // kExactlyOnce: on restore from checkpoint n, the ids of checkpoints n+1 .. n+lingering_checkpoints are
  // fenced (default 5; at least max-concurrent-checkpoints + 1).
  int32_t lingering_checkpoints = 5;
  // Bound on blocking calls (flush, init/commit transaction, marker lookups), in milliseconds. Default 60 s.
  int32_t request_timeout_ms = 60000;
  // kExactlyOnce: a running job's claim on its transactional_id_prefix (docs/kafka.md, "One job per prefix"). At
  // submission the job joins consumer group "sluice-claim-<prefix>" on this one-partition topic (created when
  // missing) and runs only if its member owns the partition; a second job with the prefix is refused, naming the
  // holder, instead of fencing the first one's transactions. Empty: no claim (a cluster whose ACLs do not let the
  // job create this topic or join groups; the user then keeps prefixes unique).
  std::string claims_topic = "sluice-claims";
  // session.timeout.ms of the claim's group member, in milliseconds: a killed job's claim ends this long after its
  // last heartbeat, and a refused submission waits this long plus a rebalance (at least 3 s) before it is refused.
  // At least the broker's group.min.session.timeout.ms (6 s by default). Default 10 s.
  int32_t claim_session_timeout_ms = 10000;
  // Further librdkafka producer properties, applied last (e.g. "compression.type", "linger.ms"). Connection
  // settings among them (security.protocol, sasl.*) also apply to the consumers the sink uses for its markers
  // and its claim.
  std::map<std::string, std::string> properties;
};

// One record to produce. The serializer fills a reused instance (reset to defaults, buffers kept).
struct KafkaProducerRecord {
  std::string topic;       // empty: KafkaSinkOptions::topic
  int32_t partition = -1;  // -1: librdkafka's partitioner (by key hash when there is a key)
  std::string key;
  bool has_key = false;    // false: a null key
  std::string value;
  int64_t timestamp_ms = -1;  // -1: stamped by the producer
  bool operator==(const KafkaProducerRecord&) const = default;
  SLUICE_FIELDS(KafkaProducerRecord, topic, partition, key, has_key, value, timestamp_ms)
};

// A serializer writes T into the record in place. Copied into every writer; called on the task thread.
template <class S, class T>
concept KafkaSerializer = std::copy_constructible<S> && requires(S s, const T& v, KafkaProducerRecord& out) {
  { s(v, out) };
};

// The value as the record's value, no key.
struct ValueStringSerializer {
  void operator()(const std::string& v, KafkaProducerRecord& out) const { out.value = v; }
};

// What an exactly-once writer pre-committed at one barrier: the transaction, its marker and its records (the
// sink's checkpointed state until the commit). Empty transactional_id: nothing to commit (other guarantees).
struct KafkaCommittable {
  std::string transactional_id;
  std::string job_id;  // of the run that wrote it (the marker's content)
  int32_t attempt = 0;
  int64_t checkpoint_id = 0;
  int32_t subtask = 0;
  std::string marker_topic;
  int32_t marker_partition = 0;
  int64_t marker_offset = -1;  // where the marker was written first; a rewrite lands after it
  std::vector<std::string> pool_ids;  // every transactional id the writer's pool held: fenced on restore
  std::vector<KafkaProducerRecord> records;
  bool operator==(const KafkaCommittable&) const = default;
  SLUICE_FIELDS(KafkaCommittable, transactional_id, job_id, attempt, checkpoint_id, subtask, marker_topic,
                marker_partition, marker_offset, pool_ids, records)
};

namespace detail {
// The non-template writer behind KafkaSink's writers (kafka_sink_writer.cc / kafka_transactional_writer.cc).
class KafkaWriterCore {
 public:
  virtual ~KafkaWriterCore() = default;
  virtual void write(const KafkaProducerRecord& record) = 0;
  virtual void flush(bool end_of_input) = 0;
  virtual std::vector<KafkaCommittable> prepare_commit() = 0;
  virtual void close() = 0;
};
class ProducerPool;  // transactional producers of a sink, shared by its subtasks (kafka_producer_pool.h)
std::shared_ptr<ProducerPool> make_producer_pool();
std::unique_ptr<KafkaWriterCore> make_kafka_writer(const KafkaSinkOptions& options, TwoPhaseCommitContext& ctx,
                                                   std::shared_ptr<ProducerPool> pool);
// `ctx` null: a committer that does not know its subtask fences the lingering ids of every subtask it restores.
std::unique_ptr<Committer<KafkaCommittable>> make_kafka_committer(const KafkaSinkOptions& options,
                                                                  std::shared_ptr<ProducerPool> pool,
                                                                  TwoPhaseCommitContext* ctx);
// The claim of options.transactional_id_prefix (KafkaSinkOptions::claims_topic). Taking it returns
// kFailedPrecondition naming the holder when another running job's member owns the claims partition, kIOError
// when the topic cannot be checked or created, kTimeout when the group gave the partition to nobody in time,
// kInvalidArgument for an empty prefix, a claims topic of more than one partition, or a claim_session_timeout_ms
// that librdkafka (1 .. 3600000) or the broker (group.min/max.session.timeout.ms) refuses.
ExclusiveClaim transactional_id_prefix_claim(const KafkaSinkOptions& options);
}  // namespace detail

// The warning a job prints at submission when transaction.timeout.ms is shorter than checkpoint interval +
// checkpoint timeout + the longest restart delay (all in milliseconds); empty when it is long enough.
std::string kafka_transaction_timeout_warning(int64_t transaction_timeout_ms, int64_t checkpoint_interval_ms,
                                              int64_t checkpoint_timeout_ms, int64_t max_restart_delay_ms);

template <class T, class S>
  requires KafkaSerializer<S, T>
class KafkaSink final : public TwoPhaseCommittingSink<T, KafkaCommittable> {
 public:
  KafkaSink(KafkaSinkOptions options, S serializer)
      : options_(std::move(options)), serializer_(std::move(serializer)), pool_(detail::make_producer_pool()) {}

  std::unique_ptr<PrecommittingSinkWriter<T, KafkaCommittable>> create_writer(TwoPhaseCommitContext& ctx) const override {
    return std::make_unique<Writer>(detail::make_kafka_writer(options_, ctx, pool_), serializer_);
  }
  std::unique_ptr<Committer<KafkaCommittable>> create_committer() const override {
    return detail::make_kafka_committer(options_, pool_, nullptr);
  }
  std::unique_ptr<Committer<KafkaCommittable>> create_subtask_committer(TwoPhaseCommitContext& ctx) const override {
    return detail::make_kafka_committer(options_, pool_, &ctx);
  }
  std::vector<std::string> submission_warnings(const SinkSubmissionContext& job) const override {
    if (options_.delivery_guarantee != DeliveryGuarantee::kExactlyOnce || !job.checkpointing) return {};
    std::string w = kafka_transaction_timeout_warning(options_.transaction_timeout_ms, job.checkpoint_interval_ms,
                                                      job.checkpoint_timeout_ms, job.max_restart_delay_ms);
    if (w.empty()) return {};
    return {std::move(w)};
  }
  std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext&) const override {
    if (options_.delivery_guarantee != DeliveryGuarantee::kExactlyOnce || options_.claims_topic.empty()) return {};
    return {detail::transactional_id_prefix_claim(options_)};
  }
  const KafkaSinkOptions& options() const { return options_; }

 private:
  class Writer final : public PrecommittingSinkWriter<T, KafkaCommittable> {
   public:
    Writer(std::unique_ptr<detail::KafkaWriterCore> core, S serializer)
        : core_(std::move(core)), serializer_(std::move(serializer)) {}
    void write(T&& record) override {
      scratch_.topic.clear();
      scratch_.partition = -1;
      scratch_.key.clear();
      scratch_.has_key = false;
      scratch_.value.clear();
      scratch_.timestamp_ms = -1;
      serializer_(record, scratch_);
      core_->write(scratch_);
    }
    void flush(bool end_of_input) override { core_->flush(end_of_input); }
    std::vector<KafkaCommittable> prepare_commit() override { return core_->prepare_commit(); }
    void close() override { core_->close(); }

   private:
    std::unique_ptr<detail::KafkaWriterCore> core_;
    S serializer_;
    KafkaProducerRecord scratch_;
  };

  KafkaSinkOptions options_;
  S serializer_;
  std::shared_ptr<detail::ProducerPool> pool_;
};

// A sink of T with serializer `s` (e.g. make_kafka_sink<std::string>(options, ValueStringSerializer{})).
template <class T, class S>
  requires KafkaSerializer<S, T>
KafkaSink<T, S> make_kafka_sink(KafkaSinkOptions options, S s) {
  return KafkaSink<T, S>(std::move(options), std::move(s));
}

}  // namespace sluice::kafka
