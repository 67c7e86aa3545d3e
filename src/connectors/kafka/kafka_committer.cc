// KafkaSink's committer: commits pre-committed transactions in checkpoint order, through the producer that
// pre-committed them; transactions restored from a checkpoint (no producer in this process) are recovered:
// fenced, their markers looked up, the aborted ones written again from the state and committed (kafka_sink.h).
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "kafka_fencing.h"
#include "kafka_markers.h"
#include "kafka_producer_pool.h"
#include "kafka_transactions.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::detail {
namespace {

class KafkaCommitter final : public Committer<KafkaCommittable> {
 public:
  KafkaCommitter(const KafkaSinkOptions& options, std::shared_ptr<ProducerPool> pool,
                 std::optional<internal::FenceScope> scope)
      : options_(options), pool_(std::move(pool)), scope_(scope) {}

  void commit(const std::vector<KafkaCommittable>& committables) override {
    std::vector<KafkaCommittable> restored;
    for (const auto& c : committables) {
      if (c.transactional_id.empty()) continue;
      if (auto p = pool_->take_in_flight(c.transactional_id, c.attempt)) {
        p->commit_transaction();  // throws (the producer is dropped): the restore recovers the transaction
        pool_->give_back(std::move(p), c.subtask, c.attempt);
      } else {
        restored.push_back(c);
      }
    }
    if (!restored.empty()) recover(restored);
  }

 private:
  void recover(const std::vector<KafkaCommittable>& restored) {
    // 1. Fence every id that may hold a transaction of the restored run, so that each one is decided (committed
    //    or aborted) and no zombie can commit later.
    std::set<std::string> keep;
    for (const auto& c : restored) keep.insert(c.transactional_id);
    auto producers = internal::fence(
        options_, internal::ids_to_fence(options_.transactional_id_prefix, restored, options_.lingering_checkpoints,
                               scope_ ? &*scope_ : nullptr),
        keep);
    // 2. Which markers are committed: read each marker partition from its earliest restored marker on.
    std::map<std::pair<std::string, int32_t>, int64_t> from;
    for (const auto& c : restored) {
      auto [it, fresh] = from.emplace(std::make_pair(c.marker_topic, c.marker_partition), c.marker_offset);
      if (!fresh) it->second = std::min(it->second, c.marker_offset);
    }
    std::set<std::string> found;
    for (const auto& [where, offset] : from) {
      found.merge(internal::committed_markers(options_, where.first, where.second, offset));
    }
    // 3. Write the aborted ones again, each under its own id with its own marker, and commit, in order.
    for (const auto& c : internal::to_rewrite(restored, found)) {
      internal::Producer& p = *producers.at(c.transactional_id);
      p.begin_transaction();
      for (const auto& r : c.records) p.produce(r);
      KafkaProducerRecord marker;
      marker.topic = c.marker_topic;
      marker.partition = c.marker_partition;
      marker.value = internal::marker_value(c);
      p.produce(marker);
      p.commit_transaction();
      spdlog::info("kafka sink: transaction {} of checkpoint {} (subtask {}) was aborted; wrote its {} records again "
                   "and committed them",
                   c.transactional_id, c.checkpoint_id, c.subtask, c.records.size());
    }
  }

  KafkaSinkOptions options_;
  std::shared_ptr<ProducerPool> pool_;
  std::optional<internal::FenceScope> scope_;
};

}  // namespace

std::unique_ptr<Committer<KafkaCommittable>> make_kafka_committer(const KafkaSinkOptions& options,
                                                                  std::shared_ptr<ProducerPool> pool,
                                                                  TwoPhaseCommitContext* ctx) {
  std::optional<internal::FenceScope> scope;
  if (ctx != nullptr) scope = internal::FenceScope{ctx->subtask_index(), ctx->parallelism(), ctx->next_checkpoint_id() - 1};
  return std::make_unique<KafkaCommitter>(options, std::move(pool), scope);
}

}  // namespace sluice::kafka::detail
