#include "sluice/state/key_group.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {
namespace {

// Values computed independently (a Python model of Flink's MathUtils.murmurHash with 32-bit wraparound).
TEST(MurmurHash, MatchesFlinkMathUtils) {
  static_assert(murmur_hash(0) == 593689054);
  EXPECT_EQ(murmur_hash(0), 593689054);
  EXPECT_EQ(murmur_hash(1), 68075478);
  EXPECT_EQ(murmur_hash(-1), 1982413648);
  EXPECT_EQ(murmur_hash(42), 1134849565);
  EXPECT_EQ(murmur_hash(123456789), 1088346449);
  EXPECT_EQ(murmur_hash(INT32_MAX), 1653689534);
  EXPECT_EQ(murmur_hash(INT32_MIN), 1718298732);
}

TEST(MurmurHash, NeverNegative) {
  for (int64_t i = -200000; i < 200000; i += 7) EXPECT_GE(murmur_hash(static_cast<int32_t>(i * 10007)), 0);
}

TEST(HashKeyBytes, IsXxh3) {
  // The published XXH3-64 (seed 0) of the empty input.
  EXPECT_EQ(hash_key_bytes("", 0), 0x2D06800538D394C2ull);
}

TEST(KeyGroupRange, EmptyAndBasics) {
  KeyGroupRange e;
  EXPECT_TRUE(e.is_empty());
  EXPECT_EQ(e.num_key_groups(), 0);
  EXPECT_FALSE(e.contains(KeyGroup(0)));
  EXPECT_EQ(e, KeyGroupRange::empty());
  EXPECT_EQ(KeyGroupRange(5, 3), KeyGroupRange::empty());  // end < start normalizes
  EXPECT_EQ(e.to_string(), "[]");

  KeyGroupRange r(43, 85);
  EXPECT_FALSE(r.is_empty());
  EXPECT_EQ(r.start(), 43);
  EXPECT_EQ(r.end_inclusive(), 85);
  EXPECT_EQ(r.num_key_groups(), 43);
  EXPECT_TRUE(r.contains(KeyGroup(43)));
  EXPECT_TRUE(r.contains(KeyGroup(85)));
  EXPECT_FALSE(r.contains(KeyGroup(42)));
  EXPECT_FALSE(r.contains(KeyGroup(86)));
  EXPECT_EQ(r.index_of(KeyGroup(50)), 7);
  EXPECT_EQ(r.to_string(), "[43, 85]");
  EXPECT_EQ(KeyGroupRange(7, 7).num_key_groups(), 1);
}

TEST(KeyGroupRange, Intersection) {
  EXPECT_EQ(KeyGroupRange(0, 42).intersection(KeyGroupRange(30, 60)), KeyGroupRange(30, 42));
  EXPECT_EQ(KeyGroupRange(30, 60).intersection(KeyGroupRange(0, 42)), KeyGroupRange(30, 42));
  EXPECT_EQ(KeyGroupRange(0, 42).intersection(KeyGroupRange(43, 60)), KeyGroupRange::empty());
  EXPECT_EQ(KeyGroupRange(0, 127).intersection(KeyGroupRange(10, 20)), KeyGroupRange(10, 20));
  EXPECT_EQ(KeyGroupRange(10, 20).intersection(KeyGroupRange::empty()), KeyGroupRange::empty());
  EXPECT_EQ(KeyGroupRange(10, 20).intersection(KeyGroupRange(20, 30)), KeyGroupRange(20, 20));
}

TEST(KeyGroupRange, Iteration) {
  std::vector<int32_t> seen;
  for (KeyGroup kg : KeyGroupRange(3, 6)) seen.push_back(kg.value());
  EXPECT_EQ(seen, (std::vector<int32_t>{3, 4, 5, 6}));
  int n = 0;
  for (KeyGroup kg : KeyGroupRange::empty()) {
    (void)kg;
    ++n;
  }
  EXPECT_EQ(n, 0);
}

struct RangeCase {
  int32_t max_p;
  int32_t p;
  std::vector<KeyGroupRange> expected;
};

TEST(KeyGroupAssignment, HandComputedRanges) {
  const std::vector<RangeCase> cases = {
      {128, 3, {KeyGroupRange(0, 42), KeyGroupRange(43, 85), KeyGroupRange(86, 127)}},
      {128, 1, {KeyGroupRange(0, 127)}},
      {128, 2, {KeyGroupRange(0, 63), KeyGroupRange(64, 127)}},
      {10, 3, {KeyGroupRange(0, 3), KeyGroupRange(4, 6), KeyGroupRange(7, 9)}},
      {128, 5,
       {KeyGroupRange(0, 25), KeyGroupRange(26, 51), KeyGroupRange(52, 76), KeyGroupRange(77, 102),
        KeyGroupRange(103, 127)}},
      {32768, 3, {KeyGroupRange(0, 10922), KeyGroupRange(10923, 21845), KeyGroupRange(21846, 32767)}},
      {4, 4, {KeyGroupRange(0, 0), KeyGroupRange(1, 1), KeyGroupRange(2, 2), KeyGroupRange(3, 3)}},
  };
  for (const auto& c : cases) {
    for (int32_t i = 0; i < c.p; ++i) {
      EXPECT_EQ(key_group_range_for_subtask(c.max_p, c.p, SubtaskIndex(i)), c.expected[static_cast<size_t>(i)])
          << "max_p " << c.max_p << " p " << c.p << " subtask " << i;
    }
  }
}

TEST(KeyGroupAssignment, EveryKeyGroupHasExactlyOneOwner) {
  for (int32_t max_p : {50, 128, 129, 1000, 32768}) {
    for (int32_t p = 1; p <= 50 && p <= max_p; ++p) {
      int32_t next = 0;  // ranges must tile [0, max_p) in subtask order
      for (int32_t i = 0; i < p; ++i) {
        KeyGroupRange r = key_group_range_for_subtask(max_p, p, SubtaskIndex(i));
        ASSERT_FALSE(r.is_empty()) << max_p << "/" << p << "/" << i;
        ASSERT_EQ(r.start(), next) << max_p << "/" << p << "/" << i;
        next = r.end_inclusive() + 1;
        for (KeyGroup kg : r) {
          ASSERT_EQ(subtask_for_key_group(max_p, p, kg), SubtaskIndex(i)) << max_p << "/" << p << " kg " << kg.value();
        }
      }
      ASSERT_EQ(next, max_p) << max_p << "/" << p;
    }
  }
}

TEST(KeyGroupAssignment, SubtaskForKeyGroupFormula) {
  EXPECT_EQ(subtask_for_key_group(128, 3, KeyGroup(42)), SubtaskIndex(0));
  EXPECT_EQ(subtask_for_key_group(128, 3, KeyGroup(43)), SubtaskIndex(1));
  EXPECT_EQ(subtask_for_key_group(128, 3, KeyGroup(127)), SubtaskIndex(2));
  EXPECT_EQ(subtask_for_key_group(32768, 32768, KeyGroup(32767)), SubtaskIndex(32767));
}

TEST(DefaultMaxParallelism, Table) {
  const std::vector<std::pair<int32_t, int32_t>> table = {
      {1, 128},     {2, 128},     {85, 128},     {86, 256},     {100, 256},       {171, 256},
      {172, 512},   {1000, 2048}, {21845, 32768}, {21846, 32768}, {30000, 32768}, {INT32_MAX, 32768},
  };
  for (auto [p, want] : table) EXPECT_EQ(default_max_parallelism(p), want) << "p=" << p;
}

TEST(CheckMaxParallelism, AcceptsAndRejects) {
  EXPECT_TRUE(check_max_parallelism(128, 1).is_ok());
  EXPECT_TRUE(check_max_parallelism(128, 128).is_ok());
  EXPECT_TRUE(check_max_parallelism(1, 1).is_ok());
  EXPECT_TRUE(check_max_parallelism(32768, 32768).is_ok());
  for (auto [m, p] : std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {-5, 1}, {32769, 2}, {10, 11}, {128, 0}}) {
    Status s = check_max_parallelism(m, p);
    ASSERT_FALSE(s.is_ok()) << m << "/" << p;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("max parallelism " + std::to_string(m)), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("parallelism " + std::to_string(p)), std::string::npos) << s.message();
  }
}

TEST(KeyGroupForKey, InPlaceHashEqualsSerializedBytes) {
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1} << 40, INT64_MIN}) {
    auto bytes = serialize_bytes(k);
    EXPECT_EQ(key_group_for_key(k, 128), key_group_for_key_bytes(bytes.data(), bytes.size(), 128));
  }
  for (int32_t k : {0, 7, -7}) {
    auto bytes = serialize_bytes(k);
    EXPECT_EQ(key_group_for_key(k, 1000), key_group_for_key_bytes(bytes.data(), bytes.size(), 1000));
  }
  for (const std::string& k : std::vector<std::string>{"", "a", "hello world", std::string(1000, 'x')}) {
    auto bytes = serialize_bytes(k);
    EXPECT_EQ(key_group_for_key(k, 128), key_group_for_key_bytes(bytes.data(), bytes.size(), 128));
  }
}

// Pinned: these must never change, or checkpoints stop restoring (keys would move to other key groups).
TEST(KeyGroupForKey, StablePinnedValues) {
  // Cross-checked against libxxhash's exported XXH3_64bits on the serialized bytes.
  EXPECT_EQ(hash_key(int64_t{0}), 0xc77b3abb6f87acd9ull);
  EXPECT_EQ(hash_key(std::string("auction-17")), 0x290cffd1a1ad262cull);
  EXPECT_EQ(key_group_for_key(int64_t{0}, 128).value(), 17);
  EXPECT_EQ(key_group_for_key(int64_t{1}, 128).value(), 12);
  EXPECT_EQ(key_group_for_key(int64_t{42}, 128).value(), 97);
  EXPECT_EQ(key_group_for_key(int64_t{1234567890123}, 32768).value(), 12518);
  EXPECT_EQ(key_group_for_key(std::string("auction-17"), 128).value(), 91);
  EXPECT_EQ(key_group_for_key(std::string(""), 256).value(), 80);
}

TEST(KeyGroupForKey, RoughlyUniform) {
  constexpr int32_t kMaxP = 128;
  constexpr int kKeys = 128 * 1000;
  std::vector<int> ints(kMaxP), strings(kMaxP);
  for (int64_t k = 0; k < kKeys; ++k) {
    ints[static_cast<size_t>(key_group_for_key(k, kMaxP).value())]++;
    strings[static_cast<size_t>(key_group_for_key("user-" + std::to_string(k), kMaxP).value())]++;
  }
  // Mean 1000 per group, standard deviation about 31: [800, 1200] is more than 6 sigma.
  for (int32_t g = 0; g < kMaxP; ++g) {
    EXPECT_GT(ints[static_cast<size_t>(g)], 800) << g;
    EXPECT_LT(ints[static_cast<size_t>(g)], 1200) << g;
    EXPECT_GT(strings[static_cast<size_t>(g)], 800) << g;
    EXPECT_LT(strings[static_cast<size_t>(g)], 1200) << g;
  }
  // Non-power-of-two max parallelism: all groups used.
  std::vector<int> odd(1000);
  for (int64_t k = 0; k < 200000; ++k) odd[static_cast<size_t>(key_group_for_key(k, 1000).value())]++;
  for (int c : odd) EXPECT_GT(c, 100);
}

}  // namespace
}  // namespace sluice
