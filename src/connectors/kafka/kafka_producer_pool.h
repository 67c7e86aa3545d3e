// The transactional producers of one exactly-once KafkaSink, shared by its subtasks' writers and committers
// (internal). A producer is "in flight" from its pre-commit until its commit (found by transactional id and
// attempt), then "free" for its subtask's next transaction. Thread-safe (one mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kafka_producer.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::detail {

class ProducerPool {
 public:
  using ProducerPtr = std::unique_ptr<internal::Producer>;
  // A committed producer of this subtask and attempt, ready for a new transaction; null when none.
  ProducerPtr take_free(int32_t subtask, int32_t attempt);
  // Committed: ready for the subtask's next transaction.
  void give_back(ProducerPtr producer, int32_t subtask, int32_t attempt);
  // Pre-committed, awaiting its commit.
  void park(ProducerPtr producer, int32_t subtask, int32_t attempt);
  // The in-flight producer of transactional id `id` written by `attempt`; null when this process has none
  // (a restored transaction).
  ProducerPtr take_in_flight(const std::string& id, int32_t attempt);
  // The writer of (subtask, attempt) closed: its producers are destroyed (open transactions linger until fenced).
  void drop(int32_t subtask, int32_t attempt);

 private:
  struct Key {
    int32_t subtask;
    int32_t attempt;
    auto operator<=>(const Key&) const = default;
  };
  std::mutex mu_;
  std::map<Key, std::vector<ProducerPtr>> free_;
  std::map<std::pair<std::string, int32_t>, std::pair<Key, ProducerPtr>> in_flight_;
};

}  // namespace sluice::kafka::detail
