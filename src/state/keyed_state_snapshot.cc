#include "sluice/state/keyed_state_snapshot.h"

namespace sluice {

KeyedStateSnapshot::~KeyedStateSnapshot() = default;

Status write_all_key_groups(KeyedStateSnapshot& s, std::vector<uint8_t>* out, std::vector<uint64_t>* offsets) {
  const KeyGroupRange range = s.range();
  const size_t base = out->size();
  offsets->clear();
  offsets->reserve(static_cast<size_t>(range.num_key_groups()) + 1);
  for (KeyGroup kg : range) {
    offsets->push_back(out->size() - base);
    SLUICE_RETURN_IF_ERROR(s.write_key_group(kg, out));
  }
  offsets->push_back(out->size() - base);
  return Status::ok();
}

}  // namespace sluice
