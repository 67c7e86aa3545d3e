#include "sluice/state/operator_state_store.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace sluice {
namespace {

std::vector<uint8_t> subtask_snapshot(int32_t subtask, int32_t n_elements) {
  OperatorStateStore store;
  auto& offsets = store.get_list_state(ListStateDescriptor<int64_t>("offsets"));
  for (int32_t i = 0; i < n_elements; ++i) offsets.add(subtask * 1000 + i);
  store.get_union_list_state(ListStateDescriptor<std::string>("seen")).add("s" + std::to_string(subtask));
  store.get_broadcast_state(MapStateDescriptor<std::string, int32_t>("rules")).put("limit", 7);
  return store.snapshot();
}

TEST(OperatorState, RoundTripKeepsEveryStateAndMode) {
  auto bytes = subtask_snapshot(0, 3);
  OperatorStateStore restored;
  ASSERT_TRUE(restored.restore(bytes, "test").is_ok());
  EXPECT_TRUE(restored.is_restored());
  EXPECT_EQ(restored.get_list_state(ListStateDescriptor<int64_t>("offsets")).get(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(restored.get_union_list_state(ListStateDescriptor<std::string>("seen")).get(), std::vector<std::string>{"s0"});
  EXPECT_EQ(restored.get_broadcast_state(MapStateDescriptor<std::string, int32_t>("rules")).get("limit"), 7);
  EXPECT_EQ(restored.snapshot(), bytes);
}

TEST(OperatorState, UnregisteredRestoredStateSurvivesTheNextSnapshot) {
  auto bytes = subtask_snapshot(0, 2);
  OperatorStateStore restored;
  ASSERT_TRUE(restored.restore(bytes, "test").is_ok());
  EXPECT_EQ(restored.snapshot(), bytes);
}

TEST(OperatorState, RedistributionSplitsUnionsAndBroadcasts) {
  std::vector<std::vector<uint8_t>> old{subtask_snapshot(0, 4), subtask_snapshot(1, 3), subtask_snapshot(2, 0)};
  std::vector<int64_t> all_offsets;
  for (int32_t p : {1, 2, 4, 7}) {
    all_offsets.clear();
    for (int32_t i = 0; i < p; ++i) {
      auto bytes = redistribute_operator_state(old, i, p);
      ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      OperatorStateStore s;
      ASSERT_TRUE(s.restore(*bytes, "r").is_ok());
      auto mine = s.get_list_state(ListStateDescriptor<int64_t>("offsets")).get();
      EXPECT_LE(mine.size(), 7u / static_cast<size_t>(p) + 1);
      all_offsets.insert(all_offsets.end(), mine.begin(), mine.end());
      auto seen = s.get_union_list_state(ListStateDescriptor<std::string>("seen")).get();
      EXPECT_EQ(seen, (std::vector<std::string>{"s0", "s1", "s2"}));
      EXPECT_EQ(s.get_broadcast_state(MapStateDescriptor<std::string, int32_t>("rules")).get("limit"), 7);
    }
    std::sort(all_offsets.begin(), all_offsets.end());
    EXPECT_EQ(all_offsets, (std::vector<int64_t>{0, 1, 2, 3, 1000, 1001, 1002})) << "parallelism " << p;
  }
}

// Flink's round-robin repartitioner keeps the old assignment when the parallelism does not change: region failover
// restores one subtask while the others keep running, so each must get back its own elements, not a share.
TEST(OperatorState, AnUnchangedParallelismGivesEverySubtaskItsOwnElements) {
  std::vector<std::vector<uint8_t>> old{subtask_snapshot(0, 4), subtask_snapshot(1, 1), subtask_snapshot(2, 0), {}};
  const std::vector<std::vector<int64_t>> own = {{0, 1, 2, 3}, {1000}, {}, {}};
  for (int32_t i = 0; i < 4; ++i) {
    auto bytes = redistribute_operator_state(old, i, 4);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    OperatorStateStore s;
    ASSERT_TRUE(s.restore(*bytes, "r").is_ok());
    EXPECT_EQ(s.get_list_state(ListStateDescriptor<int64_t>("offsets")).get(), own[static_cast<size_t>(i)])
        << "subtask " << i;
    EXPECT_EQ(s.get_union_list_state(ListStateDescriptor<std::string>("seen")).get(),
              (std::vector<std::string>{"s0", "s1", "s2"}))
        << "union state still goes to every subtask";
    EXPECT_EQ(s.get_broadcast_state(MapStateDescriptor<std::string, int32_t>("rules")).get("limit"), 7);
  }
}

TEST(OperatorState, CorruptBytesFailLoudly) {
  auto bytes = subtask_snapshot(0, 3);
  for (size_t cut = 0; cut < bytes.size(); cut += 3) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    OperatorStateStore s;
    EXPECT_FALSE(s.restore(truncated.empty() ? std::vector<uint8_t>{1} : truncated, "x").is_ok()) << cut;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto flipped = bytes;
    flipped[i] ^= 0x10;
    OperatorStateStore s;
    Status st = s.restore(flipped, "chk-3 operator 'src'");
    ASSERT_FALSE(st.is_ok()) << i;
    EXPECT_EQ(st.code(), StatusCode::kCorruption);
    EXPECT_NE(st.message().find("chk-3 operator 'src'"), std::string::npos);
  }
}

TEST(OperatorState, TypeOrModeMismatchNamesTheState) {
  auto bytes = subtask_snapshot(0, 1);
  OperatorStateStore s;
  ASSERT_TRUE(s.restore(bytes, "x").is_ok());
  EXPECT_THROW(s.get_list_state(ListStateDescriptor<std::string>("offsets")), StatusError);
  EXPECT_THROW(s.get_union_list_state(ListStateDescriptor<int64_t>("offsets")), StatusError);
  OperatorStateStore fresh;
  fresh.get_list_state(ListStateDescriptor<int64_t>("a"));
  try {
    fresh.get_list_state(ListStateDescriptor<double>("a"));
    FAIL() << "expected a type mismatch";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice
