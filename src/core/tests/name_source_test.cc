#include "sluice/core/name_source.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(NameSourceTest, SameSeedSameDrawsPerStream) {
  auto a = NameSource::seeded(42), b = NameSource::seeded(42);
  EXPECT_EQ(a->job_id(), b->job_id());
  // Interleaving other streams does not change a stream's sequence.
  (void)a->next("other");
  EXPECT_EQ(a->hex("s"), b->hex("s"));
  EXPECT_EQ(a->hex("s"), b->hex("s"));
  EXPECT_EQ(a->alphanumeric("e", 7), b->alphanumeric("e", 7));
  EXPECT_TRUE(a->is_seeded());
}

TEST(NameSourceTest, DifferentSeedsAndStreamsDiffer) {
  auto a = NameSource::seeded(1), b = NameSource::seeded(2);
  EXPECT_NE(a->job_id(), b->job_id());
  EXPECT_NE(a->next("x"), a->next("y"));
  EXPECT_NE(NameSource::random()->job_id(), NameSource::random()->job_id());
  EXPECT_FALSE(NameSource::random()->is_seeded());
}

TEST(NameSourceTest, Formats) {
  auto a = NameSource::seeded(7);
  EXPECT_EQ(a->hex("h", 6).size(), 6u);
  EXPECT_EQ(a->hex("h").size(), 16u);
  const std::string s = a->alphanumeric("e", 30);
  ASSERT_EQ(s.size(), 30u);
  for (char c : s) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) << s;
}

TEST(NameSourceTest, ConcurrentDrawsOfOneStreamAreDistinctAndTheSameSet) {
  auto draw_all = [](uint64_t seed) {
    auto src = NameSource::seeded(seed);
    std::vector<std::vector<uint64_t>> per(4);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < 500; ++i) per[t].push_back(src->next("shared"));
      });
    }
    for (auto& t : ts) t.join();
    std::set<uint64_t> all;
    for (auto& v : per) all.insert(v.begin(), v.end());
    return all;
  };
  auto x = draw_all(9);
  EXPECT_EQ(x.size(), 2000u);
  EXPECT_EQ(x, draw_all(9));
}

}  // namespace
}  // namespace sluice
