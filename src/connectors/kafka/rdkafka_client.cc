#include "rdkafka_client.h"

#include <functional>
#include <set>
#include <utility>

namespace sluice::kafka::internal {

const char* isolation_level_name(IsolationLevel level) {
  return level == IsolationLevel::kReadCommitted ? "read_committed" : "read_uncommitted";
}

std::string effective_group_id(const KafkaSourceOptions& options) {
  return options.group_id.empty() ? std::string("sluice-kafka-source") : options.group_id;
}

std::map<std::string, std::string> consumer_properties_of_sink(const std::map<std::string, std::string>& properties) {
  static const std::set<std::string, std::less<>> kProducerOnly = {
      "transactional.id", "transaction.timeout.ms", "enable.idempotence", "enable.gapless.guarantee",
      "queue.buffering.max.messages", "queue.buffering.max.kbytes", "queue.buffering.max.ms", "linger.ms",
      "message.send.max.retries", "retries", "retry.backoff.ms", "queue.buffering.backpressure.threshold",
      "compression.codec", "compression.type", "compression.level", "batch.num.messages", "batch.size",
      "delivery.report.only.error", "dr_cb", "dr_msg_cb", "sticky.partitioning.linger.ms", "request.required.acks",
      "acks", "request.timeout.ms", "message.timeout.ms", "delivery.timeout.ms", "queuing.strategy",
      "produce.offset.report", "partitioner", "partitioner_cb", "msg_order_cmp"};
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : properties) {
    if (!kProducerOnly.contains(key)) out.emplace(key, value);
  }
  return out;
}

Result<RdKafkaPtr> make_consumer(const KafkaSourceOptions& options, const std::string& role,
                                 const ConsumerExtras& extras) {
  if (options.bootstrap_servers.empty()) {
    return Status::invalid_argument("kafka source: bootstrap_servers is empty (expected host:port[,host:port])");
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const std::string& key, const std::string& value) -> Status {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      return Status::invalid_argument("kafka source: property " + key + "=" + value + ": " + err);
    }
    return Status::ok();
  };
  const std::pair<const char*, std::string> ours[] = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"group.id", effective_group_id(options)},
      {"client.id", "sluice-" + role},
      {"isolation.level", isolation_level_name(options.isolation)},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      // Partition EOF events tell a bounded reader its position passed trailing markers (docs/kafka.md).
      {"enable.partition.eof", "true"},
      // An offset no longer in the log (removed by retention while the job was down) resumes at the first
      // record still there: nothing after the checkpoint is skipped. The user's properties may override it.
      {"auto.offset.reset", "earliest"},
  };
  for (const auto& [key, value] : ours) {
    if (Status s = set(key, value); !s.is_ok()) {
      rd_kafka_conf_destroy(conf);
      return s;
    }
  }
  std::vector<std::pair<std::string, std::string>> later(options.properties.begin(), options.properties.end());
  later.insert(later.end(), extras.properties.begin(), extras.properties.end());
  for (const auto& [key, value] : later) {
    if (Status s = set(key, value); !s.is_ok()) {
      rd_kafka_conf_destroy(conf);
      return s;
    }
  }
  if (extras.rebalance_cb != nullptr) rd_kafka_conf_set_rebalance_cb(conf, extras.rebalance_cb);
  if (extras.opaque != nullptr) rd_kafka_conf_set_opaque(conf, extras.opaque);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);  // takes conf on success
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::invalid_argument(std::string("kafka source: cannot create a consumer: ") + err);
  }
  return RdKafkaPtr(rk);
}

}  // namespace sluice::kafka::internal
