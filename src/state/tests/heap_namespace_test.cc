// Namespaced (internal) state, as window operators use it, on every backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend_test_util.h"

namespace sluice {
namespace {

class NamespacedState : public testing_backends::BackendTest {};

// A stand-in for a time window.
struct Window {
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const Window&) const = default;
  SLUICE_FIELDS(Window, start, end)
};

struct Sum final : AggregateFunction<int64_t, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const int64_t& v, int64_t& acc) const override { acc += v; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& target, const int64_t& other) const override { target += other; }
};

TEST_P(NamespacedState, NamespacesAreIsolatedPerKey) {
  auto& b = backend<std::string>(KeyGroupRange(0, 127), 128);
  InternalValueState<Window, int64_t>& s = b.get_internal_state<Window>(ValueStateDescriptor<int64_t>("v"));
  const Window w1{0, 10}, w2{10, 20};
  b.set_current_key("alice");
  s.set_current_namespace(w1);
  s.update(1);
  s.set_current_namespace(w2);
  EXPECT_FALSE(s.value().has_value());
  s.update(2);
  b.set_current_key("bob");
  EXPECT_FALSE(s.value().has_value());  // namespace w2 stays set across keys
  EXPECT_EQ(s.current_namespace(), w2);
  s.update(3);
  b.set_current_key("alice");
  s.set_current_namespace(w1);
  EXPECT_EQ(s.value(), 1);
  s.clear();
  EXPECT_FALSE(s.value().has_value());
  s.set_current_namespace(w2);
  EXPECT_EQ(s.value(), 2);
  expect_entries(b, 2);
}

TEST_P(NamespacedState, ListMergeNamespaces) {
  auto& b = backend<std::string>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_internal_state<Window>(ListStateDescriptor<int64_t>("contents"));
  b.set_current_key("k");
  const Window a{0, 5}, c{5, 10}, d{10, 15}, merged{0, 15};
  s.set_current_namespace(merged);
  s.add(0);
  s.set_current_namespace(a);
  s.add(1);
  s.add(2);
  s.set_current_namespace(c);
  s.add(3);
  // d has no state: merging it is a no-op.
  s.merge_namespaces(merged, {a, c, d});
  EXPECT_EQ(s.current_namespace(), c);
  EXPECT_TRUE(s.get().empty());  // source cleared
  s.set_current_namespace(a);
  EXPECT_TRUE(s.get().empty());
  s.set_current_namespace(merged);
  EXPECT_EQ(s.get(), (std::vector<int64_t>{0, 1, 2, 3}));
  expect_entries(b, 1);
}

TEST_P(NamespacedState, ReducingAndAggregatingMergeNamespaces) {
  auto& b = backend<std::string>(KeyGroupRange(0, 127), 128);
  auto& r = b.get_internal_state<Window>(
      ReducingStateDescriptor<int64_t>("sum", [](const int64_t& x, const int64_t& y) { return x + y; }));
  auto& agg = b.get_internal_state<Window>(
      AggregatingStateDescriptor<int64_t, int64_t, int64_t>("agg", std::make_shared<Sum>()));
  b.set_current_key("k");
  const Window a{0, 5}, c{5, 10}, target{0, 10};
  for (auto [w, v] : std::vector<std::pair<Window, int64_t>>{{a, 1}, {a, 2}, {c, 10}}) {
    r.set_current_namespace(w);
    r.add(v);
    agg.set_current_namespace(w);
    agg.add(v);
  }
  r.merge_namespaces(target, {a, c});
  agg.merge_namespaces(target, {a, c});
  r.set_current_namespace(target);
  agg.set_current_namespace(target);
  EXPECT_EQ(r.get(), 13);
  EXPECT_EQ(agg.get(), 13);
  r.set_current_namespace(a);
  EXPECT_FALSE(r.get().has_value());
  // Merging into a target that has state combines with it.
  r.set_current_namespace(c);
  r.add(100);
  r.merge_namespaces(target, {c});
  r.set_current_namespace(target);
  EXPECT_EQ(r.get(), 113);
}

TEST_P(NamespacedState, UserStateIsVoidNamespace) {
  auto& b = backend<std::string>(KeyGroupRange(0, 127), 128);
  ValueState<int64_t>& user = b.get_state(ValueStateDescriptor<int64_t>("v"));
  auto& internal = b.get_internal_state<VoidNamespace>(ValueStateDescriptor<int64_t>("v"));
  EXPECT_EQ(static_cast<ValueState<int64_t>*>(&internal), &user);
}

TEST_P(NamespacedState, SnapshotEntriesCarryTheNamespace) {
  auto& b = backend<std::string>(KeyGroupRange(0, 127), 128);
  ValueStateDescriptor<int64_t> d("v");
  auto& s = b.get_internal_state<Window>(d);
  b.set_current_key("k");
  for (int64_t i = 0; i < 5; ++i) {
    s.set_current_namespace(Window{i, i + 1});
    s.update(i);
  }
  std::vector<int64_t> starts;
  testing_backends::for_each_snapshot_entry<std::string>(
      b, b.current_key_group(), "v", [&](const std::string& key, std::string_view ns, std::string_view value) {
        Window w = deserialize_bytes<Window>(reinterpret_cast<const uint8_t*>(ns.data()), ns.size()).value();
        int64_t v = deserialize_bytes<int64_t>(reinterpret_cast<const uint8_t*>(value.data()), value.size()).value();
        EXPECT_EQ(key, "k");
        EXPECT_EQ(w.start, v);
        starts.push_back(w.start);
      });
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(HeapNamespacedState, ForEachEntrySeesNamespaces) {
  HeapKeyedStateBackend<std::string> b(KeyGroupRange(0, 127), 128);
  ValueStateDescriptor<int64_t> d("v");
  auto& s = b.get_internal_state<Window>(d);
  b.set_current_key("k");
  for (int64_t i = 0; i < 5; ++i) {
    s.set_current_namespace(Window{i, i + 1});
    s.update(i);
  }
  std::vector<int64_t> starts;
  b.for_each_entry<Window>(d, b.current_key_group(), [&](const std::string& key, const Window& w, const int64_t& v) {
    EXPECT_EQ(key, "k");
    EXPECT_EQ(w.start, v);
    starts.push_back(w.start);
  });
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // Wrong namespace type: not this state.
  EXPECT_THROW(b.for_each_entry(d, b.current_key_group(), [](const auto&, const auto&, const auto&) {}),
               StatusError);
}

SLUICE_INSTANTIATE_FOR_BACKENDS(NamespacedState);

}  // namespace
}  // namespace sluice
