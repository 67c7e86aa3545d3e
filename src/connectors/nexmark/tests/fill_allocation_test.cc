// Generator::fill reuses the Event's string capacity: once an Event has held long enough strings of each
// kind, refilling it allocates nothing. Counted by replacing the global operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "sluice/connectors/nexmark/generator.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

// These replace the global allocation functions on top of malloc/free; GCC cannot see that they pair up.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sluice::nexmark {
namespace {

TEST(NexmarkFill, RefillingOneEventAllocatesNothingInSteadyState) {
  GeneratorConfig config;
  config.max_events = 200'000;
  const Generator g(config);
  Event e;
  for (int64_t n = 0; n < 20'000; ++n) g.fill(n, e);  // warm up: every kind, long strings
  const int64_t before = g_allocations.load();
  for (int64_t n = 20'000; n < 200'000; ++n) g.fill(n, e);
  EXPECT_EQ(g_allocations.load() - before, 0);

  // Moving the Event out (as the engine does) takes its buffers along: the next fill allocates again.
  Event taken = std::move(e);
  const int64_t before_move = g_allocations.load();
  g.fill(4, e);  // a bid with a url longer than the small-string buffer
  EXPECT_GT(g_allocations.load() - before_move, 0);
  EXPECT_TRUE(taken.is_person() || taken.is_auction() || taken.is_bid());
}

}  // namespace
}  // namespace sluice::nexmark
