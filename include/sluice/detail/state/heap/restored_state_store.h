// RestoredStateStore: restored key-group contents of states that the program has not registered yet.
// Implementation header of HashMapStateBackend; users do not include it.
//
// A restore happens before user open() registers states, and only a registration tells the C++ types. So the
// heap backend keeps each unregistered state's entries as the snapshot's (already framing-checked) bytes, per
// key group; registration checks the meta info and decodes them. A state that is never registered is carried
// into the next snapshot unchanged, so state is not lost when a program stops using it for a while.
//
// The bytes are immutable and shared: copying a store (what an asynchronous snapshot does) copies no bytes,
// and the copy's views stay valid whatever happens to the original.
// Thread-safety: none; distinct copies may be used on distinct threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group_snapshot.h"

namespace sluice {

class RestoredStateStore {
 public:
  struct KeyGroupEntries {
    uint64_t count = 0;
    std::shared_ptr<const std::vector<uint8_t>> bytes;  // entries in the snapshot entry encoding; never null
  };
  struct State {
    StateMetaInfo meta;
    std::map<int32_t, KeyGroupEntries> key_groups;  // by key group
  };

  bool empty() const { return states_.empty(); }
  const State* find(std::string_view name) const;
  void erase(std::string_view name);

  // kInvalidArgument if `name` is already held with different meta info (snapshots of one checkpoint
  // disagree about a state's types).
  Status check_consistent(const StateMetaInfo& meta) const;
  // Drops every state's entries of key group kg (the key group is being replaced by a restore).
  void clear_key_group(KeyGroup kg);
  // Keeps the entries of `view` as key group kg of its state. Call check_consistent first.
  void put_key_group(KeyGroup kg, const StateSnapshotView& view);

  // States holding entries for kg, in name order, as views into this store (valid until it changes).
  std::vector<StateSnapshotView> views_of_key_group(KeyGroup kg) const;

  int64_t num_entries() const;
  int64_t size_bytes() const;

 private:
  std::map<std::string, State, std::less<>> states_;
};

}  // namespace sluice
