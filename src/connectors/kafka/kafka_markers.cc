#include "kafka_markers.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "kafka_producer.h"
#include "rdkafka_client.h"

namespace sluice::kafka::internal {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A consumer with the sink's connection properties (security settings and the like apply to both).
RdKafkaPtr marker_consumer(const KafkaSinkOptions& options, IsolationLevel isolation) {
  KafkaSourceOptions so;
  so.bootstrap_servers = options.bootstrap_servers;
  so.group_id = "sluice-kafka-sink-markers";  // never joined nor committed to
  so.isolation = isolation;
  so.properties = consumer_properties_of_sink(options.properties);
  auto c = make_consumer(so, "sink-markers");
  if (!c.is_ok()) throw StatusError(c.status());  // a property librdkafka refused: not healed by a restart
  return std::move(c).value();
}

// The topic's partition count from the metadata: -1 when the topic is missing or not ready (e.g.
// LEADER_NOT_AVAILABLE right after its creation); `request_error` when the metadata request itself failed.
struct TopicPartitions {
  rd_kafka_resp_err_t request_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  int32_t partitions = -1;
};

TopicPartitions partition_count(rd_kafka_t* rk, const std::string& topic, int32_t timeout_ms) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  TopicPartitions out;
  out.request_error = rd_kafka_metadata(rk, 0, t, &md, timeout_ms);
  if (out.request_error == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
      md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.partitions = md->topics[0].partition_cnt;
  }
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);
  return out;
}

}  // namespace

int32_t ensure_topic(const KafkaSinkOptions& options, const std::string& topic, int32_t partitions,
                     const std::string& what) {
  // Metadata first, through a consumer (allow.auto.create.topics is false for consumers, so asking does not create
  // the topic with the broker's default partition count): a topic that exists is used as it is, so a user without
  // the CREATE permission can pre-create it, and a cluster without CreateTopics (librdkafka's mock) works.
  {
    RdKafkaPtr probe = marker_consumer(options, IsolationLevel::kReadUncommitted);
    const TopicPartitions found = partition_count(probe.get(), topic, options.request_timeout_ms);
    if (found.request_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("kafka sink: cannot read the metadata of " + what + " '" + topic + "' within " +
                               std::to_string(options.request_timeout_ms) + " ms (request_timeout_ms): " +
                               rd_kafka_err2str(found.request_error));
    }
    if (found.partitions > 0) return found.partitions;
  }
  Producer admin(options, "", "sink-admin");
  rd_kafka_t* rk = admin.handle();
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, err, sizeof err);
  if (nt == nullptr) throw std::runtime_error("kafka sink: " + what + " '" + topic + "': " + err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, options.request_timeout_ms);
  std::string failure;
  if (ev == nullptr) {
    failure = "no answer to CreateTopics within request_timeout_ms";
  } else if (const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev); res == nullptr) {
    failure = rd_kafka_event_error_string(ev);
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
    if (n == 1 && rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_NO_ERROR &&
        rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      failure = rd_kafka_topic_result_error_string(tr[0]);
    }
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  if (!failure.empty()) throw std::runtime_error("kafka sink: cannot create " + what + " '" + topic + "': " + failure);
  // A topic just created may take a moment to appear in the metadata.
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(options.request_timeout_ms);
  while (true) {
    const int32_t n = partition_count(rk, topic, 5000).partitions;
    if (n > 0) return n;
    if (SteadyClock::now() > deadline) {
      throw std::runtime_error("kafka sink: " + what + " '" + topic + "' has no partitions in the metadata");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::set<std::string> committed_markers(const KafkaSinkOptions& options, const std::string& topic, int32_t partition,
                                        int64_t from_offset) {
  const std::string where = "partition " + std::to_string(partition) + " of marker topic '" + topic + "'";
  int64_t low = 0;
  int64_t high = 0;
  {
    RdKafkaPtr probe = marker_consumer(options, IsolationLevel::kReadUncommitted);  // the high watermark
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(probe.get(), topic.c_str(), partition, &low, &high,
                                                               options.request_timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("kafka sink: cannot read the end of " + where + ": " + rd_kafka_err2str(err));
    }
  }
  std::set<std::string> found;
  if (from_offset < low) {
    throw std::runtime_error("kafka sink: the marker at offset " + std::to_string(from_offset) + " of " + where +
                             " was deleted by retention (log start " + std::to_string(low) +
                             "): cannot tell whether its transaction committed");
  }
  if (from_offset >= high) return found;
  RdKafkaPtr c = marker_consumer(options, IsolationLevel::kReadCommitted);
  PartitionListPtr tps(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(tps.get(), topic.c_str(), partition)->offset = from_offset;
  if (rd_kafka_resp_err_t err = rd_kafka_assign(c.get(), tps.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("kafka sink: cannot read " + where + ": " + rd_kafka_err2str(err));
  }
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(options.request_timeout_ms);
  while (true) {
    MessagePtr m(rd_kafka_consumer_poll(c.get(), 100));
    if (m && m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      found.emplace(static_cast<const char*>(m->payload), m->len);
      if (m->offset + 1 >= high) break;
      continue;
    }
    if (m && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      throw std::runtime_error("kafka sink: reading " + where + ": " + rd_kafka_message_errstr(m.get()));
    }
    // At the last stable offset: done once it passed the high watermark seen at the start (the position moves
    // past aborted records and transaction markers).
    rd_kafka_position(c.get(), tps.get());
    if (tps->elems[0].offset >= high) break;
    if (SteadyClock::now() > deadline) {
      throw std::runtime_error("kafka sink: " + where + " stayed undecided at offset " +
                               std::to_string(tps->elems[0].offset) + " (high watermark " + std::to_string(high) +
                               ") for request_timeout_ms: a transaction there is still open");
    }
  }
  rd_kafka_consumer_close(c.get());
  return found;
}

}  // namespace sluice::kafka::internal
