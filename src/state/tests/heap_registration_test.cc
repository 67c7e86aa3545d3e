// State registration on every backend: same name returns the same object; conflicting registrations fail
// loudly.
#include <gtest/gtest.h>

#include <string>

#include "backend_test_util.h"

namespace sluice {
namespace {

class StateRegistration : public testing_backends::BackendTest {};

// Runs fn, expects a StatusError (kInvalidArgument) whose message contains every needle.
template <class F>
void expect_invalid_argument(F&& fn, std::initializer_list<std::string> needles) {
  try {
    fn();
    FAIL() << "expected a StatusError";
  } catch (const StatusError& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST_P(StateRegistration, SameNameReturnsSameObject) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  auto& a = b.get_state(ValueStateDescriptor<int64_t>("count"));
  auto& again = b.get_state(ValueStateDescriptor<int64_t>("count"));
  EXPECT_EQ(&a, &again);
  auto& l1 = b.get_list_state(ListStateDescriptor<std::string>("list"));
  auto& l2 = b.get_list_state(ListStateDescriptor<std::string>("list"));
  EXPECT_EQ(&l1, &l2);
  b.set_current_key(1);
  a.update(5);
  EXPECT_EQ(again.value(), 5);
  auto names = b.registered_state_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"count", "list"}));
}

TEST_P(StateRegistration, OtherKindFails) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  (void)b.get_state(ValueStateDescriptor<int64_t>("count"));
  expect_invalid_argument([&] { (void)b.get_list_state(ListStateDescriptor<int64_t>("count")); },
                          {"'count'", "ValueState<i64>", "ListState<i64>"});
  expect_invalid_argument(
      [&] {
        (void)b.get_reducing_state(
            ReducingStateDescriptor<int64_t>("count", [](const int64_t& x, const int64_t& y) { return x + y; }));
      },
      {"'count'", "ReducingState<i64>"});
}

TEST_P(StateRegistration, OtherTypeFails) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  (void)b.get_state(ValueStateDescriptor<int64_t>("count"));
  expect_invalid_argument([&] { (void)b.get_state(ValueStateDescriptor<std::string>("count")); },
                          {"'count'", "ValueState<i64>", "ValueState<string>"});
  (void)b.get_map_state(MapStateDescriptor<std::string, int64_t>("m"));
  expect_invalid_argument([&] { (void)b.get_map_state(MapStateDescriptor<std::string, int32_t>("m")); },
                          {"'m'", "MapState<string, i64>", "MapState<string, i32>"});
  // Same serializer snapshot, different C++ type (long long vs int64_t on LP64).
  expect_invalid_argument([&] { (void)b.get_state(ValueStateDescriptor<long long>("count")); },
                          {"'count'", "different C++ type"});
}

TEST_P(StateRegistration, OtherNamespaceFails) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  (void)b.get_list_state(ListStateDescriptor<int64_t>("window-contents"));
  expect_invalid_argument(
      [&] { (void)b.get_internal_state<int64_t>(ListStateDescriptor<int64_t>("window-contents")); },
      {"'window-contents'", "in namespace i64"});
}

TEST_P(StateRegistration, FailedRegistrationRegistersNothing) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  expect_invalid_argument(
      [&] { (void)b.get_reducing_state(ReducingStateDescriptor<int64_t>("r", nullptr)); }, {"'r'", "reduce function"});
  expect_invalid_argument(
      [&] {
        (void)b.get_aggregating_state(AggregatingStateDescriptor<int64_t, int64_t, int64_t>("a", nullptr));
      },
      {"'a'", "aggregate function"});
  EXPECT_TRUE(b.registered_state_names().empty());
  // The name is still free.
  auto& r = b.get_reducing_state(
      ReducingStateDescriptor<int64_t>("r", [](const int64_t& x, const int64_t& y) { return x + y; }));
  b.set_current_key(1);
  r.add(2);
  r.add(3);
  EXPECT_EQ(r.get(), 5);
}

TEST_P(StateRegistration, EmptyNameFails) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  EXPECT_THROW((void)b.get_state(ValueStateDescriptor<int64_t>("")), StatusError);
}

SLUICE_INSTANTIATE_FOR_BACKENDS(StateRegistration);

}  // namespace
}  // namespace sluice
