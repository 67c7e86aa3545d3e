#include "kafka_transactions.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

namespace sluice::kafka::internal {

std::string transactional_id(const std::string& prefix, int32_t subtask, int64_t checkpoint_id) {
  return prefix + "-" + std::to_string(subtask) + "-" + std::to_string(checkpoint_id);
}

std::string marker_value(const KafkaCommittable& c) {
  return c.job_id + "/" + std::to_string(c.attempt) + "/" + std::to_string(c.checkpoint_id) + "/" +
         std::to_string(c.subtask);
}

std::string marker_topic_of(const KafkaSinkOptions& options) {
  return options.marker_topic.empty() ? options.transactional_id_prefix + ".markers" : options.marker_topic;
}

int32_t marker_partition(int32_t subtask, int32_t num_partitions) {
  return num_partitions <= 0 ? 0 : subtask % num_partitions;
}

std::vector<std::string> ids_to_fence(const std::string& prefix, const std::vector<KafkaCommittable>& restored,
                                      int32_t window, const FenceScope* scope) {
  std::set<std::string> ids;
  std::map<int32_t, int64_t> latest;  // subtask -> latest pre-committed checkpoint
  for (const auto& c : restored) {
    ids.insert(c.transactional_id);
    ids.insert(c.pool_ids.begin(), c.pool_ids.end());
    auto [it, fresh] = latest.emplace(c.subtask, c.checkpoint_id);
    if (!fresh) it->second = std::max(it->second, c.checkpoint_id);
  }
  if (scope != nullptr) {
    for (auto it = latest.begin(); it != latest.end();) {
      it = it->first < scope->parallelism ? latest.erase(it) : std::next(it);
    }
    auto [own, fresh] = latest.emplace(scope->subtask, scope->restored_checkpoint_id);
    if (!fresh) own->second = std::max(own->second, scope->restored_checkpoint_id);
  }
  for (const auto& [subtask, cp] : latest) {
    for (const auto& id : window_ids(prefix, subtask, cp, window)) ids.insert(id);
  }
  return {ids.begin(), ids.end()};
}

std::vector<std::string> window_ids(const std::string& prefix, int32_t subtask, int64_t restored_checkpoint_id,
                                    int32_t window) {
  std::vector<std::string> out;
  // Counted from the restored id without adding to it: a damaged committable's id near INT64_MAX overflowed.
  for (int64_t i = 1; i <= window && restored_checkpoint_id <= std::numeric_limits<int64_t>::max() - i; ++i) {
    out.push_back(transactional_id(prefix, subtask, restored_checkpoint_id + i));
  }
  return out;
}

std::vector<KafkaCommittable> to_rewrite(const std::vector<KafkaCommittable>& restored,
                                         const std::set<std::string>& markers_found) {
  std::vector<KafkaCommittable> out;
  for (const auto& c : restored) {
    if (markers_found.count(marker_value(c)) == 0) out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KafkaCommittable& a, const KafkaCommittable& b) { return a.checkpoint_id < b.checkpoint_id; });
  return out;
}

}  // namespace sluice::kafka::internal
