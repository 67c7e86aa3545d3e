// Fencing transactional ids (internal to the exactly-once Kafka sink): init_transactions on an id bumps its
// producer epoch, so an older producer with that id (a zombie of an earlier attempt or process) can no longer
// write or commit, and the broker finishes that id's open transaction (aborts it; docs/kafka.md, test 3).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kafka_producer.h"

namespace sluice::kafka::internal {

// Fences every id in `ids` (in parallel, one producer each) and returns the producers of the ids in `keep`,
// initialized and ready for a transaction; the others are destroyed. Throws std::runtime_error naming the first
// id that failed.
std::map<std::string, std::unique_ptr<Producer>> fence(const KafkaSinkOptions& options,
                                                       const std::vector<std::string>& ids,
                                                       const std::set<std::string>& keep);

}  // namespace sluice::kafka::internal
