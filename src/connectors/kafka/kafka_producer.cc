#include "kafka_producer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

namespace sluice::kafka::internal {
namespace {

constexpr int32_t kCauseWaitMs = 1000;
constexpr int32_t kAbortOnCloseMs = 2000;  // at most this long, so a cancelled task is not held by a slow broker

bool is_purge(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT;
}

}  // namespace

Producer::Producer(const KafkaSinkOptions& options, const std::string& transactional_id, const std::string& role)
    : default_topic_(options.topic), transactional_id_(transactional_id), timeout_ms_(options.request_timeout_ms) {
  if (options.bootstrap_servers.empty()) {
    throw StatusError(Status::invalid_argument("kafka sink: bootstrap_servers is empty (expected host:port[,host:port])"));
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const std::string& key, const std::string& value) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw StatusError(Status::invalid_argument("kafka sink: property " + key + "=" + value + ": " + err));
    }
  };
  set("bootstrap.servers", options.bootstrap_servers);
  set("client.id", "sluice-" + role);
  // Idempotence keeps retried batches from being written twice (and is implied by transactions).
  set("enable.idempotence", "true");
  if (!transactional_id.empty()) {
    set("transactional.id", transactional_id);
    set("transaction.timeout.ms", std::to_string(options.transaction_timeout_ms));
  }
  for (const auto& [key, value] : options.properties) set(key, value);
  rd_kafka_conf_set_dr_msg_cb(conf, &Producer::on_delivery);
  rd_kafka_conf_set_opaque(conf, this);
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);  // takes conf on success
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw StatusError(Status::invalid_argument(std::string("kafka sink: cannot create a producer: ") + err));
  }
}

Producer::~Producer() {
  // An open transaction with records produced since the last flush is aborted first (as Flink's KafkaWriter does
  // on close). Its records may have left partitions waiting to be added to the transaction, and librdkafka 2.0.2
  // can abort the process when it destroys such a producer: an AddPartitionsToTxn sent while rd_kafka_destroy()
  // winds down is failed with _DESTROY on a broker thread before the main thread counts it
  // (rd_kafka_txn_handle_AddPartitionsToTxn asserts txn_req_cnt > 0; rdkafka_txnmgr.c, rdkafka_buf.c). Once the
  // abort has begun, librdkafka adds no more partitions, also when the abort then times out. A fatal (fenced)
  // producer cannot abort; a flushed transaction (pre-committed) has no partition waiting and lingers as before.
  if (!transactional_id_.empty() && unflushed_records_ && !fatal_ &&
      rd_kafka_fatal_error(rk_, nullptr, 0) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, std::min(timeout_ms_, kAbortOnCloseMs))) {
      spdlog::info("kafka sink: closing the producer of {} without aborting its transaction: {}", who(),
                   rd_kafka_error_string(e));
      rd_kafka_error_destroy(e);
    }
  }
  // Queued records of an open transaction are dropped: the transaction is aborted above, or by the fencing of its
  // id (or the broker's timeout). Non-transactional records were flushed at the last barrier or are replayed.
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_destroy(rk_);
}

void Producer::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<Producer*>(opaque);
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const bool purge = is_purge(msg->err);
    if (self->delivery_error_.empty() || (self->delivery_error_is_purge_ && !purge)) {
      self->delivery_error_ = std::string("topic '") + rd_kafka_topic_name(msg->rkt) + "' partition " +
                              std::to_string(msg->partition) + ": " + rd_kafka_err2str(msg->err);
      self->delivery_error_is_purge_ = purge;
    }
    return;
  }
  if (msg->_private != nullptr) *static_cast<int64_t*>(msg->_private) = msg->offset;
}

std::string Producer::who() const {
  return transactional_id_.empty() ? std::string("producer") : "transactional id " + transactional_id_;
}

void Producer::check_delivery() {
  if (delivery_error_.empty()) return;
  if (delivery_error_is_purge_) {
    // The report of the record whose broker error caused the purge can be queued behind the purged ones: let
    // the outstanding reports arrive (a failed transaction's records all end at once) before naming the cause.
    rd_kafka_flush(rk_, std::min<int32_t>(timeout_ms_, kCauseWaitMs));
  }
  std::string text = "kafka sink: delivery failed (" + who() + "): " + delivery_error_;
  // A fatal error (e.g. fenced: the records were purged, their own error says only that) is the actual cause.
  char fatal[512];
  if (rd_kafka_fatal_error(rk_, fatal, sizeof fatal) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fatal_ = true;
    text += std::string("; the producer has a fatal error: ") + fatal;
  }
  throw std::runtime_error(text);
}

void Producer::produce(const KafkaProducerRecord& record, int64_t* offset_out) {
  const std::string& topic = record.topic.empty() ? default_topic_ : record.topic;
  if (topic.empty()) {
    throw StatusError(Status::invalid_argument("kafka sink: a record has no topic and KafkaSinkOptions::topic is empty"));
  }
  rd_kafka_vu_t vus[7];
  size_t n = 0;
  vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[n++].u.cstr = topic.c_str();
  vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[n++].u.i32 = record.partition < 0 ? RD_KAFKA_PARTITION_UA : record.partition;
  vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[n].u.mem.ptr = const_cast<char*>(record.value.data());
  vus[n++].u.mem.size = record.value.size();
  if (record.has_key) {
    vus[n].vtype = RD_KAFKA_VTYPE_KEY;
    vus[n].u.mem.ptr = const_cast<char*>(record.key.data());
    vus[n++].u.mem.size = record.key.size();
  }
  vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
  if (record.timestamp_ms >= 0) {
    vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
    vus[n++].u.i64 = record.timestamp_ms;
  }
  if (offset_out != nullptr) {
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[n++].u.ptr = offset_out;
  }
  while (true) {
    rd_kafka_error_t* e = rd_kafka_produceva(rk_, vus, n);
    if (e == nullptr) break;
    const rd_kafka_resp_err_t code = rd_kafka_error_code(e);
    std::string text = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      // A transaction in an error state refuses records; the delivery error that put it there is the cause.
      rd_kafka_poll(rk_, 0);
      check_delivery();
      throw std::runtime_error("kafka sink: cannot produce to topic '" + topic + "' (" + who() + "): " + text +
                               transaction_error_cause(code));
    }
    rd_kafka_poll(rk_, 10);  // back-pressure: let deliveries drain the queue
    check_delivery();
  }
  unflushed_records_ = true;
}

std::string Producer::transaction_error_cause(rd_kafka_resp_err_t produce_error) {
  if (transactional_id_.empty() || produce_error != RD_KAFKA_RESP_ERR__STATE) return "";
  // The records of the request whose error failed the transaction may report later (or never: the producer is
  // destroyed with them in flight). librdkafka keeps that error as the transaction's own and returns it from a
  // transactional call made in an error state; begin_transaction() is the call without a side effect there.
  rd_kafka_error_t* error = rd_kafka_begin_transaction(rk_);
  if (error == nullptr) return "";  // not in an error state after all: it began the transaction we fail anyway
  std::string cause;
  if (rd_kafka_error_is_fatal(error)) {
    fatal_ = true;
    cause = std::string("; the producer has a fatal error: ") + rd_kafka_error_string(error);
  } else if (rd_kafka_error_txn_requires_abort(error)) {
    cause = std::string("; the transaction failed: ") + rd_kafka_error_string(error);
  }
  rd_kafka_error_destroy(error);
  return cause;
}

void Producer::poll() {
  rd_kafka_poll(rk_, 0);
  check_delivery();
}

void Producer::flush() {
  const rd_kafka_resp_err_t err = rd_kafka_flush(rk_, timeout_ms_);
  check_delivery();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("kafka sink: flush did not finish in " + std::to_string(timeout_ms_) +
                             " ms (request_timeout_ms): " + rd_kafka_err2str(err) + ", " +
                             std::to_string(rd_kafka_outq_len(rk_)) + " records or requests outstanding");
  }
  unflushed_records_ = false;
}

void Producer::check(rd_kafka_error_t* error, const char* what) {
  if (error == nullptr) return;
  std::string text = rd_kafka_error_string(error);
  if (rd_kafka_error_is_fatal(error)) fatal_ = true;
  rd_kafka_error_destroy(error);
  throw std::runtime_error(std::string("kafka sink: ") + what + " (transactional id " + transactional_id_ +
                           "): " + text);
}

void Producer::init_transactions() { check(rd_kafka_init_transactions(rk_, timeout_ms_), "init_transactions"); }
void Producer::begin_transaction() { check(rd_kafka_begin_transaction(rk_), "begin_transaction"); }
void Producer::commit_transaction() {
  check(rd_kafka_commit_transaction(rk_, timeout_ms_), "commit_transaction");
  check_delivery();
  unflushed_records_ = false;
}
void Producer::abort_transaction() {
  check(rd_kafka_abort_transaction(rk_, timeout_ms_), "abort_transaction");
  unflushed_records_ = false;
}

}  // namespace sluice::kafka::internal
