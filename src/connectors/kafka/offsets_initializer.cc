#include "sluice/connectors/kafka/offsets_initializer.h"

#include "sluice/connectors/kafka/kafka_source.h"

namespace sluice::kafka {
namespace {

StartOffset reset(OffsetResetStrategy strategy, const TopicPartition& tp, const PartitionOffsets& found,
                  const char* what_is_missing) {
  switch (strategy) {
    case OffsetResetStrategy::kEarliest:
      return {found.earliest, {}};
    case OffsetResetStrategy::kLatest:
      return {found.latest, {}};
    case OffsetResetStrategy::kNone:
      break;
  }
  return {-1, "kafka source: " + std::string(what_is_missing) + " for partition " + std::to_string(tp.partition) +
                  " of topic '" + tp.topic + "' and the offset reset strategy is none (expected earliest or latest)"};
}

}  // namespace

StartOffset choose_start_offset(const OffsetsInitializer& init, const TopicPartition& tp, const PartitionOffsets& found) {
  switch (init.kind()) {
    case OffsetsInitializer::Kind::kEarliest:
      return {found.earliest, {}};
    case OffsetsInitializer::Kind::kLatest:
      return {found.latest, {}};
    case OffsetsInitializer::Kind::kCommitted:
      if (found.committed >= 0) return {found.committed, {}};
      return reset(init.reset_strategy(), tp, found, "no committed offset");
    case OffsetsInitializer::Kind::kTimestamp:
      // No record at or after the timestamp: start at the end, as Kafka's ListOffsets answer means.
      return {found.by_timestamp >= 0 ? found.by_timestamp : found.latest, {}};
    case OffsetsInitializer::Kind::kSpecific: {
      auto it = init.offsets().find(tp);
      if (it != init.offsets().end()) return {it->second, {}};
      return reset(init.reset_strategy(), tp, found, "no specific offset");
    }
  }
  return {-1, "kafka source: unknown offsets initializer"};
}

int32_t kafka_split_owner(const std::string& topic, int32_t partition, int32_t parallelism) {
  // FNV-1a: fixed across processes and platforms (std::hash is not).
  uint32_t h = 2166136261U;
  for (unsigned char c : topic) {
    h ^= c;
    h *= 16777619U;
  }
  const int64_t start = static_cast<int64_t>(h & 0x7fffffffU);
  return static_cast<int32_t>((start + partition) % parallelism);
}

}  // namespace sluice::kafka
