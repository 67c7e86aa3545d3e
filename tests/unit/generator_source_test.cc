// The generator source's split arithmetic (ranges tile [0, count) exactly, even for counts near 2^63) and
// its reader (positions, end of input).
#include <gtest/gtest.h>

#include <limits>

#include "sluice/sluice.h"

namespace sluice {
namespace {

struct Ctx final : SplitEnumeratorContext<IndexRangeSplit> {
  explicit Ctx(int32_t p) : p_(p) {}
  int32_t current_parallelism() const override { return p_; }
  void assign_split(IndexRangeSplit s, int32_t) override { assigned.push_back(s); }
  void signal_no_more_splits(int32_t) override { ++no_more; }
  void call_async(std::function<std::function<void()>()>, int64_t, int64_t) override {}  // the generator uses none
  int32_t p_;
  std::vector<IndexRangeSplit> assigned;
  int no_more = 0;
};

TEST(GeneratorSource, SplitsTileTheIndexSpace) {
  for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}, std::numeric_limits<int64_t>::max(),
                        int64_t{1} << 62}) {
    for (int32_t p : {1, 2, 3, 7, 64}) {
      Ctx ctx(p);
      IndexRangeEnumerator e(ctx, count);
      for (int32_t i = 0; i < p + 1; ++i) e.handle_split_request(0);
      int64_t next = 0;
      for (const auto& s : ctx.assigned) {
        EXPECT_EQ(s.start, next) << count << "/" << p;
        EXPECT_GT(s.end, s.start);
        EXPECT_EQ(s.next, s.start);
        next = s.end;
      }
      EXPECT_EQ(next, count) << count << "/" << p;
      EXPECT_GE(ctx.no_more, 1);
    }
  }
}

}  // namespace
}  // namespace sluice
