// The exactly-once Kafka sink's decisions, as pure functions (unit-tested alone): transactional id and marker
// names, which ids a restore fences, which restored transactions must be written again, the marker partition.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::internal {

// "<prefix>-<subtask>-<checkpoint id>": the id created for the transaction of that checkpoint.
std::string transactional_id(const std::string& prefix, int32_t subtask, int64_t checkpoint_id);

// The marker record's value: "<job id>/<attempt>/<checkpoint id>/<subtask>", unique per transaction (a job id is
// per run; in-process restarts keep it and differ by attempt).
std::string marker_value(const KafkaCommittable& c);

// The marker topic of `options` (its marker_topic, or "<prefix>.markers").
std::string marker_topic_of(const KafkaSinkOptions& options);

// The partition of the marker topic a subtask writes its markers to.
int32_t marker_partition(int32_t subtask, int32_t num_partitions);

// Which subtask a committer serves: it fences the lingering ids of its own index (after the restored checkpoint)
// and of the restored transactions' indexes >= parallelism (a scale-down left nobody else to), but not those of
// other live subtasks, whose writers may already be using them again.
struct FenceScope {
  int32_t subtask = 0;
  int32_t parallelism = 1;
  int64_t restored_checkpoint_id = 0;
};

// The ids a restore fences before looking up markers: every restored transaction's id, every id of the pools
// that wrote them, and the ids named after the `window` checkpoints following the latest one a subtask
// pre-committed (they may hold lingering transactions opened or pre-committed after the restored checkpoint):
// with `scope`, for the subtasks it names; without, for every subtask that wrote a restored transaction.
// Sorted, no duplicates.
std::vector<std::string> ids_to_fence(const std::string& prefix, const std::vector<KafkaCommittable>& restored,
                                      int32_t window, const FenceScope* scope);

// The ids named after checkpoints restored+1 .. restored+window of `subtask`.
std::vector<std::string> window_ids(const std::string& prefix, int32_t subtask, int64_t restored_checkpoint_id,
                                    int32_t window);

// The restored transactions whose marker is absent (aborted): written again, in order.
std::vector<KafkaCommittable> to_rewrite(const std::vector<KafkaCommittable>& restored,
                                         const std::set<std::string>& markers_found);

}  // namespace sluice::kafka::internal
