// librdkafka handles for the Kafka connector (internal): RAII owners and the consumer configuration that the
// source's enumerator and readers share.
#pragma once

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/core/status.h"

namespace sluice::kafka::internal {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

const char* isolation_level_name(IsolationLevel level);
std::string effective_group_id(const KafkaSourceOptions& options);

// What a caller adds to a consumer's configuration: properties applied after the user's (settings the caller's
// protocol depends on), and a rebalance callback with its opaque (librdkafka's rd_kafka_conf_set_rebalance_cb).
struct ConsumerExtras {
  std::vector<std::pair<std::string, std::string>> properties;
  void (*rebalance_cb)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*, void*) = nullptr;
  void* opaque = nullptr;
};

// The properties of a sink (KafkaSinkOptions::properties) that apply to a consumer the sink makes for itself (its
// marker reader, its prefix claim): all but librdkafka's producer-only ones (scope "P" in librdkafka's
// CONFIGURATION.md, v2.0), which a consumer would log as ignored one by one. Connection and security settings stay.
std::map<std::string, std::string> consumer_properties_of_sink(const std::map<std::string, std::string>& properties);

// A consumer for `options` (bootstrap servers, group id, isolation level, the user's properties, then `extras`),
// named client.id = sluice-<role>. InvalidArgument names a property librdkafka refused.
Result<RdKafkaPtr> make_consumer(const KafkaSourceOptions& options, const std::string& role,
                                 const ConsumerExtras& extras = {});

}  // namespace sluice::kafka::internal
