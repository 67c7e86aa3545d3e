#include "sluice/detail/state/heap/heap_keyed_state_snapshot.h"

#include <string>
#include <utility>

namespace sluice {

HeapKeyedStateSnapshot::HeapKeyedStateSnapshot(KeyGroupRange range, int32_t max_parallelism,
                                               TypeSerializerSnapshot key_serializer,
                                               std::shared_ptr<StateVersions> versions, uint64_t version,
                                               std::vector<std::unique_ptr<StateTableSnapshot>> tables,
                                               RestoredStateStore restored)
    : KeyedStateSnapshot(range),
      max_parallelism_(max_parallelism),
      key_serializer_(std::move(key_serializer)),
      versions_(std::move(versions)),
      version_(version),
      tables_(std::move(tables)),
      restored_(std::move(restored)) {}

HeapKeyedStateSnapshot::~HeapKeyedStateSnapshot() { release(); }

Status HeapKeyedStateSnapshot::write_key_group(KeyGroup kg, std::vector<uint8_t>* out) {
  if (!range().contains(kg)) {
    return Status::invalid_argument("snapshot write_key_group: key group " + std::to_string(kg.value()) +
                                    " is outside the snapshot's range " + range().to_string());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (released_) {
    return Status::failed_precondition("snapshot write_key_group: snapshot version " + std::to_string(version_) +
                                       " was already released");
  }
  if (!versions_->acquire_reader()) {
    return Status::cancelled("snapshot write_key_group: the keyed state backend was disposed before snapshot "
                             "version " + std::to_string(version_) + " was written");
  }
  struct ReaderGuard {
    StateVersions& v;
    ~ReaderGuard() { v.release_reader(); }
  } guard{*versions_};
  std::vector<const StateTableSnapshot*> tables;
  tables.reserve(tables_.size());
  for (const auto& t : tables_) tables.push_back(t.get());
  detail::write_heap_key_group(out, max_parallelism_, kg, range().index_of(kg), key_serializer_, tables,
                               restored_.views_of_key_group(kg), /*write_if_empty=*/false, &scratch_);
  return Status::ok();
}

void HeapKeyedStateSnapshot::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    released_ = true;
    scratch_ = std::vector<uint8_t>();
  }
  versions_->release(version_);
}

}  // namespace sluice
