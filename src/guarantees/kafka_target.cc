#include "guarantees/kafka_target.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>

#include "guarantees/embedded_target.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::guarantees {
namespace {

std::string topic_name(const std::string& tag) { return "sluice-guarantees-" + tag; }

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

Result<KafkaPtr> client(rd_kafka_type_t type, const std::string& bootstrap,
                        const std::vector<std::pair<std::string, std::string>>& props) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::invalid_argument("Kafka property " + k + ": " + err);
    }
  }
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::invalid_argument(std::string("Kafka bootstrap.servers: ") + err);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);  // takes conf on success
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::io_error(std::string("Kafka client: ") + err);
  }
  return KafkaPtr(rk);
}

struct KeyCountSerializer {
  bool keyed = false;
  void operator()(const KeyCount& r, kafka::KafkaProducerRecord& out) const {
    out.value.clear();
    encode_key_count(r, out.value);
    out.has_key = keyed;
    out.key = keyed ? std::to_string(r.key) : std::string();
  }
};

}  // namespace

Status KafkaTarget::prepare(SinkKind, const std::string&, const std::string& tag) {
  SLUICE_ASSIGN_OR_RETURN(KafkaPtr admin, client(RD_KAFKA_PRODUCER, bootstrap_, {}));
  char err[512];
  const std::string topic = topic_name(tag);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), 1, 1, err, sizeof err);
  if (nt == nullptr) return Status::invalid_argument("Kafka topic " + topic + ": " + err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin.get());
  rd_kafka_CreateTopics(admin.get(), &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  Status st = Status::ok();
  if (ev == nullptr) {
    st = Status::timeout("Kafka: no answer to CreateTopics " + topic + " within 30 s");
  } else if (const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev); res == nullptr) {
    st = Status::io_error("Kafka: CreateTopics " + topic + ": " + rd_kafka_event_error_string(ev));
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
    if (n == 1 && rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      st = Status::io_error("Kafka: CreateTopics " + topic + ": " + rd_kafka_topic_result_error_string(tr[0]));
    }
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  return st;
}

DataStreamSink<KeyCount> KafkaTarget::add_sink(const DataStream<KeyCount>& results, SinkKind kind, const std::string&,
                                               const std::string& tag, std::shared_ptr<std::atomic<int64_t>>) {
  if (kind == SinkKind::kWriteAheadLog) throw std::invalid_argument("Kafka has no write-ahead-log sink");
  kafka::KafkaSinkOptions o;
  o.bootstrap_servers = bootstrap_;
  o.topic = topic_name(tag);
  if (kind == SinkKind::kTwoPhaseCommit) {
    o.delivery_guarantee = kafka::DeliveryGuarantee::kExactlyOnce;
    o.transactional_id_prefix = topic_name(tag);  // unique per run
  } else {
    o.delivery_guarantee = kafka::DeliveryGuarantee::kAtLeastOnce;
  }
  return results.sink_to(kafka::KafkaSink<KeyCount, KeyCountSerializer>(o, KeyCountSerializer{kind == SinkKind::kIdempotent}));
}

Result<TargetContents> KafkaTarget::read(SinkKind kind, const std::string&, const std::string& tag) {
  const std::string topic = topic_name(tag);
  SLUICE_ASSIGN_OR_RETURN(KafkaPtr c, client(RD_KAFKA_CONSUMER, bootstrap_,
                                             {{"group.id", topic + "-reader"},
                                              {"isolation.level", "read_committed"},
                                              {"enable.partition.eof", "true"},
                                              {"enable.auto.commit", "false"}}));
  rd_kafka_topic_partition_list_t* tps = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(tps, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(c.get(), tps);
  rd_kafka_topic_partition_list_destroy(tps);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::io_error("Kafka: assign " + topic + ": " + rd_kafka_err2str(assigned));
  TargetContents out;
  out.upserted = kind == SinkKind::kIdempotent;
  std::map<int64_t, KeyCount> last_per_key;
  Status st = Status::timeout("Kafka: no end of " + topic + " within 30 s");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      rd_kafka_message_destroy(m);
      st = Status::ok();
      break;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      st = Status::io_error("Kafka: reading " + topic + ": " + rd_kafka_message_errstr(m));
      rd_kafka_message_destroy(m);
      break;
    }
    const auto r = parse_key_count(std::string(static_cast<const char*>(m->payload), m->len));
    rd_kafka_message_destroy(m);
    if (!r) {
      st = Status::corruption("Kafka: a malformed result record in " + topic);
      break;
    }
    if (out.upserted) {
      last_per_key[r->key] = *r;  // the table view of a keyed topic: the last record per key
    } else {
      out.rows.push_back(*r);
    }
  }
  rd_kafka_consumer_close(c.get());
  SLUICE_RETURN_IF_ERROR(st);
  for (const auto& [k, r] : last_per_key) out.rows.push_back(r);
  return out;
}

}  // namespace sluice::guarantees
