// The exactly-once Kafka sink's marker topic (internal): creating it (and the claims topic), and finding which
// markers are committed.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::internal {

// Returns the partition count of `topic`, creating it with `partitions` partitions when the metadata (read through
// a consumer, which does not auto-create topics) shows it missing: an existing topic is used as it is, so it can be
// pre-created, and CreateTopics is sent only when needed. Throws std::runtime_error naming `what` ("marker topic",
// "claims topic") and the topic when the cluster cannot be reached or refuses (within options.request_timeout_ms).
int32_t ensure_topic(const KafkaSinkOptions& options, const std::string& topic, int32_t partitions,
                     const std::string& what);

// The marker values committed in partition `partition` of `topic` from `from_offset` on, read with a
// read_committed consumer up to the high watermark seen when the call starts: every transaction that wrote
// there before the call is decided (committed or aborted) by the time the read passes it. Callers fence the ids
// of lingering transactions first; an open transaction below that watermark makes the read wait for it, up to
// options.request_timeout_ms, then throw std::runtime_error.
std::set<std::string> committed_markers(const KafkaSinkOptions& options, const std::string& topic, int32_t partition,
                                        int64_t from_offset);

}  // namespace sluice::kafka::internal
