#include "kafka_producer_pool.h"

namespace sluice::kafka::detail {

std::shared_ptr<ProducerPool> make_producer_pool() { return std::make_shared<ProducerPool>(); }

ProducerPool::ProducerPtr ProducerPool::take_free(int32_t subtask, int32_t attempt) {
  std::lock_guard lock(mu_);
  auto it = free_.find(Key{subtask, attempt});
  if (it == free_.end() || it->second.empty()) return nullptr;
  ProducerPtr p = std::move(it->second.back());
  it->second.pop_back();
  return p;
}

void ProducerPool::give_back(ProducerPtr producer, int32_t subtask, int32_t attempt) {
  std::lock_guard lock(mu_);
  free_[Key{subtask, attempt}].push_back(std::move(producer));
}

void ProducerPool::park(ProducerPtr producer, int32_t subtask, int32_t attempt) {
  std::lock_guard lock(mu_);
  const std::string id = producer->transactional_id();
  in_flight_[{id, attempt}] = {Key{subtask, attempt}, std::move(producer)};
}

ProducerPool::ProducerPtr ProducerPool::take_in_flight(const std::string& id, int32_t attempt) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find({id, attempt});
  if (it == in_flight_.end()) return nullptr;
  ProducerPtr p = std::move(it->second.second);
  in_flight_.erase(it);
  return p;
}

void ProducerPool::drop(int32_t subtask, int32_t attempt) {
  std::vector<ProducerPtr> doomed;  // destroyed outside the lock (librdkafka's destroy joins its threads)
  {
    std::lock_guard lock(mu_);
    auto f = free_.find(Key{subtask, attempt});
    if (f != free_.end()) {
      for (auto& p : f->second) doomed.push_back(std::move(p));
      free_.erase(f);
    }
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
      if (it->second.first == Key{subtask, attempt}) {
        doomed.push_back(std::move(it->second.second));
        it = in_flight_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace sluice::kafka::detail
