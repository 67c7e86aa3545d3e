// A librdkafka producer with delivery tracking (internal to the Kafka sink): the first delivery error is kept
// and raised by the next call that checks, so a record the broker refused fails the task. A record purged from
// the queue (librdkafka purges an aborted transaction's records) reports only that; the broker error that
// caused the purge is reported instead when its record's report arrives, which may come later. Transactional when
// created with a transactional id. Not thread-safe: one task thread (or one recovery thread) at a time.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::internal {

class Producer {
 public:
  // A producer for `options` (bootstrap servers, the user's properties last); with a non-empty
  // `transactional_id` a transactional one (transaction.timeout.ms from the options). Throws std::runtime_error
  // naming a property librdkafka refused.
  Producer(const KafkaSinkOptions& options, const std::string& transactional_id, const std::string& role);
  // Drops queued records. A transaction with records produced since the last flush() is aborted first (waiting at
  // most 2 s, or request_timeout_ms when shorter; skipped after a fatal error); other open transactions are left to
  // the fencing of their id or the broker's timeout.
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues `record` (to `record.topic`, or the options' topic when empty). `offset_out`, when set, receives the
  // record's offset once its delivery report arrives (flush()). Waits while librdkafka's queue is full.
  void produce(const KafkaProducerRecord& record, int64_t* offset_out = nullptr);
  // Serves delivery reports without blocking; throws on a delivery error seen so far.
  void poll();
  // Waits until every queued record is acknowledged (or failed); throws on a timeout or a delivery error.
  void flush();

  // Transactions (throw std::runtime_error naming the transactional id and librdkafka's message; fatal()
  // tells whether the producer can be used again).
  void init_transactions();
  void begin_transaction();
  void commit_transaction();
  void abort_transaction();
  bool fatal() const { return fatal_; }

  const std::string& transactional_id() const { return transactional_id_; }
  rd_kafka_t* handle() const { return rk_; }

 private:
  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque);
  void check_delivery();
  // "; the transaction failed: <librdkafka's error>" when a record was refused (`produce_error`) because the
  // transaction is in an abortable or fatal error state, else empty.
  std::string transaction_error_cause(rd_kafka_resp_err_t produce_error);
  std::string who() const;  // "transactional id <id>", or "producer"
  void check(rd_kafka_error_t* error, const char* what);

  rd_kafka_t* rk_ = nullptr;
  std::string default_topic_;
  std::string transactional_id_;
  int32_t timeout_ms_;
  std::string delivery_error_;  // the first one (a purge only until a cause arrives), empty when none
  bool delivery_error_is_purge_ = false;
  bool unflushed_records_ = false;  // produced since the last successful flush, commit or abort
  bool fatal_ = false;
};

}  // namespace sluice::kafka::internal
