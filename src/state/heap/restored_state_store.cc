#include "sluice/detail/state/heap/restored_state_store.h"

namespace sluice {

const RestoredStateStore::State* RestoredStateStore::find(std::string_view name) const {
  auto it = states_.find(name);
  return it == states_.end() ? nullptr : &it->second;
}

void RestoredStateStore::erase(std::string_view name) {
  auto it = states_.find(name);
  if (it != states_.end()) states_.erase(it);
}

Status RestoredStateStore::check_consistent(const StateMetaInfo& meta) const {
  const State* held = find(meta.name);
  if (held == nullptr || held->meta == meta) return Status::ok();
  return Status::invalid_argument("state '" + meta.name + "': one key-group snapshot has it as " +
                                  held->meta.type_description() + ", another as " + meta.type_description() +
                                  " (snapshots from different programs mixed in one restore?)");
}

void RestoredStateStore::clear_key_group(KeyGroup kg) {
  for (auto it = states_.begin(); it != states_.end();) {
    it->second.key_groups.erase(kg.value());
    if (it->second.key_groups.empty()) {
      it = states_.erase(it);
    } else {
      ++it;
    }
  }
}

void RestoredStateStore::put_key_group(KeyGroup kg, const StateSnapshotView& view) {
  State& s = states_[view.meta.name];
  s.meta = view.meta;
  KeyGroupEntries& e = s.key_groups[kg.value()];
  e.count = view.entry_count;
  e.bytes = std::make_shared<const std::vector<uint8_t>>(view.entries, view.entries + view.entries_size_bytes);
}

std::vector<StateSnapshotView> RestoredStateStore::views_of_key_group(KeyGroup kg) const {
  std::vector<StateSnapshotView> out;
  for (const auto& [name, s] : states_) {
    auto it = s.key_groups.find(kg.value());
    if (it == s.key_groups.end()) continue;
    const std::vector<uint8_t>& bytes = *it->second.bytes;
    out.push_back(StateSnapshotView{s.meta, it->second.count, bytes.data(), bytes.size()});
  }
  return out;
}

int64_t RestoredStateStore::num_entries() const {
  int64_t n = 0;
  for (const auto& [name, s] : states_) {
    for (const auto& [kg, e] : s.key_groups) n += static_cast<int64_t>(e.count);
  }
  return n;
}

int64_t RestoredStateStore::size_bytes() const {
  int64_t n = 0;
  for (const auto& [name, s] : states_) {
    for (const auto& [kg, e] : s.key_groups) n += static_cast<int64_t>(e.bytes->capacity());
  }
  return n;
}

}  // namespace sluice
