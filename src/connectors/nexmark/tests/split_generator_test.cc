#include <gtest/gtest.h>

#include <vector>

#include "sluice/connectors/nexmark/generator.h"

namespace sluice::nexmark {
namespace {

GeneratorConfig bounded_config(int64_t max_events) {
  GeneratorConfig c;
  c.max_events = max_events;
  return c;
}

TEST(NexmarkSplitGenerator, UnionOfSplitsIsExactlyTheSingleStream) {
  const int64_t total = 10'000;
  const Generator single(bounded_config(total));
  std::vector<Event> expected;
  for (int64_t n = 0; n < total; ++n) expected.push_back(single.event_at(n));

  for (int32_t num_splits : {1, 2, 3, 7}) {
    std::vector<Event> merged(total);
    std::vector<int> seen(total, 0);
    int64_t emitted = 0;
    for (int32_t i = 0; i < num_splits; ++i) {
      SplitGenerator split(bounded_config(total), i, num_splits);
      int64_t own = 0;
      Event e;
      while (split.has_next()) {
        const int64_t n = split.next_event_number();
        ASSERT_EQ(n % num_splits, i);
        ASSERT_TRUE(split.next(e));
        merged[n] = e;
        ++seen[n];
        ++own;
      }
      EXPECT_FALSE(split.next(e));
      EXPECT_EQ(own, split.num_events()) << "split " << i << " of " << num_splits;
      EXPECT_EQ(split.offset(), own);
      emitted += own;
    }
    ASSERT_EQ(emitted, total) << num_splits << " splits";
    for (int64_t n = 0; n < total; ++n) {
      ASSERT_EQ(seen[n], 1) << "event " << n << " with " << num_splits << " splits";
      ASSERT_EQ(merged[n], expected[n]) << "event " << n << " with " << num_splits << " splits";
    }
  }
}

TEST(NexmarkSplitGenerator, SeekThenNextEqualsEventAt) {
  const Generator single(bounded_config(5000));
  SplitGenerator split(bounded_config(5000), 2, 7);
  std::vector<Event> first_pass;
  Event e;
  while (split.next(e)) first_pass.push_back(e);
  ASSERT_EQ(static_cast<int64_t>(first_pass.size()), split.num_events());
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{500}, split.num_events() - 1}) {
    split.seek(k);
    EXPECT_EQ(split.offset(), k);
    EXPECT_EQ(split.next_event_number(), 2 + k * 7);
    ASSERT_TRUE(split.next(e));
    EXPECT_EQ(e, single.event_at(2 + k * 7));
    EXPECT_EQ(e, first_pass[k]);  // a replay after recovery sees the same events
    EXPECT_EQ(split.offset(), k + 1);
  }
  split.seek(split.num_events());
  Event untouched(Bid{1, 2, 3, "c", "u", 4, "x"});
  const Event before = untouched;
  EXPECT_FALSE(split.next(untouched));
  EXPECT_EQ(untouched, before);
}

TEST(NexmarkSplitGenerator, EventCountsPerSplit) {
  EXPECT_EQ(SplitGenerator(bounded_config(10), 0, 3).num_events(), 4);  // 0 3 6 9
  EXPECT_EQ(SplitGenerator(bounded_config(10), 1, 3).num_events(), 3);  // 1 4 7
  EXPECT_EQ(SplitGenerator(bounded_config(10), 2, 3).num_events(), 3);  // 2 5 8
  EXPECT_EQ(SplitGenerator(bounded_config(2), 5, 7).num_events(), 0);
  EXPECT_FALSE(SplitGenerator(bounded_config(2), 5, 7).has_next());
  EXPECT_EQ(SplitGenerator(bounded_config(0), 0, 1).num_events(), 0);
  SplitGenerator unbounded(GeneratorConfig{}, 3, 4);
  EXPECT_EQ(unbounded.num_events(), -1);
  unbounded.seek(int64_t{1} << 40);
  Event e;
  EXPECT_TRUE(unbounded.next(e));
  EXPECT_EQ(e, Generator(GeneratorConfig{}).event_at(3 + (int64_t{1} << 40) * 4));
}

TEST(NexmarkSplitGenerator, CreateValidatesTheSplit) {
  EXPECT_TRUE(SplitGenerator::create(GeneratorConfig{}, 0, 1).is_ok());
  EXPECT_TRUE(SplitGenerator::create(GeneratorConfig{}, 6, 7).is_ok());
  auto bad_index = SplitGenerator::create(GeneratorConfig{}, 7, 7);
  ASSERT_FALSE(bad_index.is_ok());
  EXPECT_NE(bad_index.status().message().find("split index"), std::string::npos);
  EXPECT_FALSE(SplitGenerator::create(GeneratorConfig{}, -1, 7).is_ok());
  EXPECT_FALSE(SplitGenerator::create(GeneratorConfig{}, 0, 0).is_ok());
  GeneratorConfig bad;
  bad.hot_bidders_ratio = 0;
  EXPECT_FALSE(SplitGenerator::create(bad, 0, 1).is_ok());
}

}  // namespace
}  // namespace sluice::nexmark
