// Key-group snapshot and restore, from each backend into each backend (heap <-> RocksDB).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backend_test_util.h"

namespace sluice {
namespace {

class KeyedSnapshot : public testing_backends::CrossBackendTest {};
using testing_backends::expect_entry_count;
using testing_backends::snapshot_entries;
constexpr int32_t kMaxP = 128;

struct SnapshotWindow {
  int64_t start = 0;
  bool operator==(const SnapshotWindow&) const = default;
  SLUICE_FIELDS(SnapshotWindow, start)
};

struct Count final : AggregateFunction<std::string, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const std::string&, int64_t& acc) const override { ++acc; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& t, const int64_t& o) const override { t += o; }
};

// All five kinds plus a namespaced one, registered on a backend.
struct States {
  explicit States(KeyedStateBackend<std::string>& b)
      : value(b.get_state(ValueStateDescriptor<int64_t>("value"))),
        list(b.get_list_state(ListStateDescriptor<std::string>("list"))),
        map(b.get_map_state(MapStateDescriptor<std::string, int64_t>("map"))),
        reducing(b.get_reducing_state(
            ReducingStateDescriptor<int64_t>("reducing", [](const int64_t& x, const int64_t& y) { return x + y; }))),
        aggregating(b.get_aggregating_state(
            AggregatingStateDescriptor<std::string, int64_t, int64_t>("aggregating", std::make_shared<Count>()))),
        windowed(b.get_internal_state<SnapshotWindow>(ValueStateDescriptor<std::string>("windowed"))) {}
  ValueState<int64_t>& value;
  ListState<std::string>& list;
  MapState<std::string, int64_t>& map;
  ReducingState<int64_t>& reducing;
  AggregatingState<std::string, int64_t>& aggregating;
  InternalValueState<SnapshotWindow, std::string>& windowed;
};

std::string key_of(int i) { return "key-" + std::to_string(i); }

void fill(KeyedStateBackend<std::string>& b, States& s, int keys) {
  for (int i = 0; i < keys; ++i) {
    b.set_current_key(key_of(i));
    s.value.update(i);
    s.list.add_all({"a" + std::to_string(i), "b"});
    s.map.put("x", i);
    s.map.put("y", -i);
    s.reducing.add(i);
    s.reducing.add(1);
    s.aggregating.add("e");
    s.windowed.set_current_namespace(SnapshotWindow{i % 3});
    s.windowed.update("w" + std::to_string(i));
  }
}

// Checks the state of key i, or that it is absent.
void expect_key(KeyedStateBackend<std::string>& b, States& s, int i, bool present) {
  b.set_current_key(key_of(i));
  if (!present) {
    EXPECT_FALSE(s.value.value().has_value()) << i;
    EXPECT_TRUE(s.list.get().empty()) << i;
    EXPECT_TRUE(s.map.is_empty()) << i;
    return;
  }
  EXPECT_EQ(s.value.value(), i);
  EXPECT_EQ(s.list.get(), (std::vector<std::string>{"a" + std::to_string(i), "b"}));
  EXPECT_EQ(s.map.get("x"), i);
  EXPECT_EQ(s.map.get("y"), -i);
  EXPECT_EQ(s.reducing.get(), i + 1);
  EXPECT_EQ(s.aggregating.get(), 1);
  s.windowed.set_current_namespace(SnapshotWindow{i % 3});
  EXPECT_EQ(s.windowed.value(), "w" + std::to_string(i));
  s.windowed.set_current_namespace(SnapshotWindow{(i + 1) % 3});
  EXPECT_FALSE(s.windowed.value().has_value());
}

std::map<int32_t, std::vector<uint8_t>> snapshot_all(const KeyedStateBackend<std::string>& b) {
  std::map<int32_t, std::vector<uint8_t>> out;
  for (KeyGroup kg : b.key_group_range()) {
    Status st = b.snapshot_key_group(kg, &out[kg.value()]);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
  }
  return out;
}

TEST_P(KeyedSnapshot, RoundTripEveryKeyGroup) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States s(src);
  fill(src, s, 500);
  auto snaps = snapshot_all(src);

  auto& dst = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States d(dst);  // registered before the restore
  for (const auto& [kg, bytes] : snaps) {
    Status st = dst.restore_key_group(bytes.data(), bytes.size());
    ASSERT_TRUE(st.is_ok()) << st.to_string();
  }
  expect_entry_count(dst, snapshot_entries(src));
  for (int i = 0; i < 500; ++i) expect_key(dst, d, i, true);
  expect_key(dst, d, 500, false);
}

TEST_P(KeyedSnapshot, RestoreBeforeRegistration) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States s(src);
  fill(src, s, 200);
  auto snaps = snapshot_all(src);

  auto& dst = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  for (const auto& [kg, bytes] : snaps) ASSERT_TRUE(dst.restore_key_group(bytes.data(), bytes.size()).is_ok());
  expect_entry_count(dst, snapshot_entries(src));  // held as bytes until registered
  States d(dst);
  for (int i = 0; i < 200; ++i) expect_key(dst, d, i, true);
  expect_entry_count(dst, snapshot_entries(src));
}

TEST_P(KeyedSnapshot, UnregisteredRestoredStateIsCarriedIntoTheNextSnapshot) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States s(src);
  fill(src, s, 100);
  auto first = snapshot_all(src);

  // A program that only uses "value" for a while.
  auto& mid = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  for (const auto& [kg, bytes] : first) ASSERT_TRUE(mid.restore_key_group(bytes.data(), bytes.size()).is_ok());
  auto& v = mid.get_state(ValueStateDescriptor<int64_t>("value"));
  mid.set_current_key(key_of(0));
  v.update(1000);
  auto second = snapshot_all(mid);

  auto& last = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);  // and back
  for (const auto& [kg, bytes] : second) ASSERT_TRUE(last.restore_key_group(bytes.data(), bytes.size()).is_ok());
  States d(last);
  for (int i = 1; i < 100; ++i) expect_key(last, d, i, true);
  last.set_current_key(key_of(0));
  EXPECT_EQ(d.value.value(), 1000);
  EXPECT_EQ(d.list.get().size(), 2u);
}

TEST_P(KeyedSnapshot, RestoreIntoIntersectingRangeTakesOnlyItsGroups) {
  // Old: parallelism 2 over 128 groups; new: parallelism 3.
  std::vector<std::vector<uint8_t>> all;
  for (int32_t sub = 0; sub < 2; ++sub) {
    auto& old = source<std::string>(key_group_range_for_subtask(kMaxP, 2, SubtaskIndex(sub)), kMaxP);
    States s(old);
    for (int i = 0; i < 600; ++i) {
      KeyGroup kg = key_group_for_key(key_of(i), kMaxP);
      if (!old.key_group_range().contains(kg)) continue;
      old.set_current_key(key_of(i));
      s.value.update(i);
      s.map.put("x", i);
    }
    for (auto& [kg, bytes] : snapshot_all(old)) all.push_back(std::move(bytes));
  }
  for (int32_t sub = 0; sub < 3; ++sub) {
    KeyGroupRange range = key_group_range_for_subtask(kMaxP, 3, SubtaskIndex(sub));
    auto& b = target<std::string>(range, kMaxP);
    // Restoring a group outside the range directly is refused...
    for (const auto& bytes : all) {
      auto h = peek_key_group_snapshot(bytes.data(), bytes.size());
      ASSERT_TRUE(h.is_ok());
      if (!range.contains(h->key_group)) {
        Status st = b.restore_key_group(bytes.data(), bytes.size());
        EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
        EXPECT_NE(st.message().find("outside"), std::string::npos) << st.to_string();
        break;
      }
    }
    // ...and skipped by restore_intersecting_key_groups.
    ASSERT_TRUE(b.restore_intersecting_key_groups(all).is_ok());
    auto& v = b.get_state(ValueStateDescriptor<int64_t>("value"));
    auto& m = b.get_map_state(MapStateDescriptor<std::string, int64_t>("map"));
    int64_t mine = 0;
    for (int i = 0; i < 600; ++i) {
      if (!range.contains(key_group_for_key(key_of(i), kMaxP))) continue;
      ++mine;
      b.set_current_key(key_of(i));
      EXPECT_EQ(v.value(), i);
      EXPECT_EQ(m.get("x"), i);
    }
    expect_entry_count(b, 2 * mine);
  }
}

TEST_P(KeyedSnapshot, RestoreReplacesTheKeyGroup) {
  auto& b = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  auto& v = b.get_state(ValueStateDescriptor<int64_t>("value"));
  auto& l = b.get_list_state(ListStateDescriptor<int64_t>("list"));
  b.set_current_key("a");
  v.update(1);
  const KeyGroup kg = b.current_key_group();
  std::vector<uint8_t> snap;
  ASSERT_TRUE(b.snapshot_key_group(kg, &snap).is_ok());
  v.update(2);
  l.add(5);  // not in the snapshot
  ASSERT_TRUE(b.restore_key_group(snap.data(), snap.size()).is_ok());
  ASSERT_TRUE(b.restore_key_group(snap.data(), snap.size()).is_ok());  // idempotent
  b.set_current_key("a");
  EXPECT_EQ(v.value(), 1);
  EXPECT_TRUE(l.get().empty());
}

TEST_P(KeyedSnapshot, CorruptBytesFailLoudlyAndChangeNothing) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States s(src);
  fill(src, s, 50);
  src.set_current_key(key_of(0));
  const KeyGroup kg = src.current_key_group();
  std::vector<uint8_t> good;
  ASSERT_TRUE(src.snapshot_key_group(kg, &good).is_ok());

  auto& dst = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  auto& v = dst.get_state(ValueStateDescriptor<int64_t>("value"));
  dst.set_current_key(key_of(0));
  v.update(-1);

  std::vector<std::vector<uint8_t>> damaged;
  damaged.emplace_back(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));  // truncated
  damaged.emplace_back(good.begin(), good.end() - 1);
  damaged.push_back(good);
  damaged.back()[good.size() / 3] ^= 0x40;  // a flipped bit
  damaged.emplace_back();                   // empty
  for (const auto& bad : damaged) {
    Status st = dst.restore_key_group(bad.data(), bad.size());
    ASSERT_FALSE(st.is_ok());
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
  }
  dst.set_current_key(key_of(0));
  EXPECT_EQ(v.value(), -1);
  expect_entry_count(dst, 1);
}

TEST_P(KeyedSnapshot, MismatchedRegistrationIsRejectedNamingTheState) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  States s(src);
  fill(src, s, 20);
  src.set_current_key(key_of(0));
  std::vector<uint8_t> snap;
  ASSERT_TRUE(src.snapshot_key_group(src.current_key_group(), &snap).is_ok());

  // Registered first with another type: restore fails with kInvalidArgument, nothing changes.
  auto& a = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  auto& wrong = a.get_state(ValueStateDescriptor<std::string>("value"));
  a.set_current_key(key_of(0));
  wrong.update("keep");
  Status st = a.restore_key_group(snap.data(), snap.size());
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("state 'value'"), std::string::npos) << st.to_string();
  a.set_current_key(key_of(0));
  EXPECT_EQ(wrong.value(), "keep");

  // Restored first, registered with another kind afterwards: registration throws.
  auto& c = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  ASSERT_TRUE(c.restore_key_group(snap.data(), snap.size()).is_ok());
  try {
    (void)c.get_list_state(ListStateDescriptor<int64_t>("value"));
    FAIL() << "expected a StatusError";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("state 'value'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ValueState<i64>"), std::string::npos) << e.what();
  }
  // The restored contents are still there for a correct registration.
  auto& right = c.get_state(ValueStateDescriptor<int64_t>("value"));
  c.set_current_key(key_of(0));
  EXPECT_EQ(right.value(), 0);
}

TEST_P(KeyedSnapshot, OtherMaxParallelismOrKeyTypeIsRejected) {
  auto& src = source<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  auto& v = src.get_state(ValueStateDescriptor<int64_t>("value"));
  src.set_current_key("a");
  v.update(1);
  std::vector<uint8_t> snap;
  ASSERT_TRUE(src.snapshot_key_group(src.current_key_group(), &snap).is_ok());

  auto& other_max = target<std::string>(KeyGroupRange(0, 255), 256);
  Status st = other_max.restore_key_group(snap.data(), snap.size());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("max parallelism 128"), std::string::npos) << st.to_string();

  auto& other_key = target<int64_t>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  st = other_key.restore_key_group(snap.data(), snap.size());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("key serializer"), std::string::npos) << st.to_string();

  std::vector<uint8_t> out;
  EXPECT_EQ(src.snapshot_key_group(KeyGroup(kMaxP), &out).code(), StatusCode::kInvalidArgument);
}

TEST_P(KeyedSnapshot, EmptyKeyGroupSnapshotRestores) {
  auto& b = target<std::string>(KeyGroupRange(0, kMaxP - 1), kMaxP);
  (void)b.get_state(ValueStateDescriptor<int64_t>("value"));
  std::vector<uint8_t> snap;
  ASSERT_TRUE(b.snapshot_key_group(KeyGroup(3), &snap).is_ok());
  auto view = parse_key_group_snapshot(snap.data(), snap.size());
  ASSERT_TRUE(view.is_ok());
  EXPECT_TRUE(view->states.empty());
  ASSERT_TRUE(b.restore_key_group(snap.data(), snap.size()).is_ok());
}

SLUICE_INSTANTIATE_FOR_BACKEND_PAIRS(KeyedSnapshot);

}  // namespace
}  // namespace sluice
