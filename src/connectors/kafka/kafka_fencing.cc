#include "kafka_fencing.h"

#include <exception>
#include <stdexcept>
#include <thread>

namespace sluice::kafka::internal {

std::map<std::string, std::unique_ptr<Producer>> fence(const KafkaSinkOptions& options,
                                                       const std::vector<std::string>& ids,
                                                       const std::set<std::string>& keep) {
  // Each init_transactions is a round trip to the transaction coordinator, and waits while the broker aborts the
  // id's open transaction: in parallel, a restore costs about one of them, not one per id.
  std::vector<std::unique_ptr<Producer>> producers(ids.size());
  std::vector<std::exception_ptr> errors(ids.size());
  std::vector<std::thread> threads;
  threads.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        auto p = std::make_unique<Producer>(options, ids[i], "sink-fence");
        p->init_transactions();
        producers[i] = std::move(p);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::map<std::string, std::unique_ptr<Producer>> kept;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (keep.count(ids[i]) > 0) kept[ids[i]] = std::move(producers[i]);
  }
  return kept;
}

}  // namespace sluice::kafka::internal
