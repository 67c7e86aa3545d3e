// HeapKeyedStateBackend::clear_key_group (BATCH: the state of a key whose sorted input ended): it empties the key
// group's entries in every state and timer queue, leaves the other key groups alone, and refuses a key group
// outside the backend's range.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>

#include "sluice/state/keyed_state_backend.h"

namespace sluice {
namespace {

TEST(HeapClearKeyGroupTest, EmptiesOneKeyGroupsStatesAndTimers) {
  constexpr int32_t kMaxParallelism = 16;
  auto made = make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, KeyGroupRange(0, 15), kMaxParallelism);
  ASSERT_TRUE(made.is_ok()) << made.status().to_string();
  KeyedStateBackend<int64_t>& b = **made;
  ValueState<int64_t>& value = b.get_state(ValueStateDescriptor<int64_t>("v"));
  ListState<int64_t>& list = b.get_list_state(ListStateDescriptor<int64_t>("l"));
  auto& timers = b.get_timer_queue<VoidNamespace>("_timer_state/event_t");
  std::map<int32_t, std::set<int64_t>> keys_by_group;
  for (int64_t k = 0; k < 200; ++k) {
    b.set_current_key(k);
    value.update(k);
    list.add(k);
    timers.add(b.current_key_context(), VoidNamespace{}, 1000 + k);
    keys_by_group[b.current_key_group().value()].insert(k);
  }
  const int64_t before = b.num_entries();
  b.set_current_key(7);
  const KeyGroup cleared = b.current_key_group();
  const auto& gone = keys_by_group[cleared.value()];
  ASSERT_FALSE(gone.empty());
  ASSERT_TRUE(b.clear_key_group(cleared).is_ok());
  EXPECT_EQ(b.num_entries(), before - 3 * static_cast<int64_t>(gone.size()));  // value, list and timer per key
  EXPECT_EQ(timers.num_timers(), 200 - static_cast<int64_t>(gone.size()));
  for (int64_t k = 0; k < 200; ++k) {
    b.set_current_key(k);
    const bool was_cleared = gone.count(k) > 0;
    EXPECT_EQ(value.value().has_value(), !was_cleared) << "key " << k;
    EXPECT_EQ(list.get().empty(), was_cleared) << "key " << k;
  }
  // The cleared key group takes new state again.
  b.set_current_key(7);
  value.update(70);
  EXPECT_EQ(value.value(), std::optional<int64_t>(70));

  auto narrow = make_keyed_state_backend<int64_t>(StateBackendKind::kHashMap, KeyGroupRange(0, 3), kMaxParallelism);
  ASSERT_TRUE(narrow.is_ok());
  EXPECT_EQ((*narrow)->clear_key_group(KeyGroup(9)).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
