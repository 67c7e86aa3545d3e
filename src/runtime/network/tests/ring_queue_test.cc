#include "runtime/network/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>

namespace sluice::runtime {
namespace {

TEST(RingQueue, BehavesLikeADequeAcrossWrapAndGrowth) {
  RingQueue<int> q(4);
  std::deque<int> oracle;
  int next = 0;
  for (int round = 0; round < 200; ++round) {
    const int pushes = (round * 7) % 5 + 1;
    for (int i = 0; i < pushes; ++i) {
      if ((round + i) % 3 == 0) {
        q.push_front(next);
        oracle.push_front(next);
      } else {
        q.push_back(next);
        oracle.push_back(next);
      }
      ++next;
    }
    const int pops = (round * 3) % 5;
    for (int i = 0; i < pops && !oracle.empty(); ++i) {
      ASSERT_EQ(q.pop_front(), oracle.front());
      oracle.pop_front();
    }
    ASSERT_EQ(q.size(), oracle.size());
    for (size_t i = 0; i < oracle.size(); ++i) ASSERT_EQ(q[i], oracle[i]);
  }
}

TEST(RingQueue, InsertNearFrontKeepsEarlierPriorityElementsAhead) {
  RingQueue<int> q;
  for (int i = 10; i < 15; ++i) q.push_back(i);
  q.insert_near_front(0, 1);  // first priority element
  q.insert_near_front(1, 2);  // second goes behind the first
  std::vector<int> got;
  while (!q.empty()) got.push_back(q.pop_front());
  EXPECT_EQ(got, (std::vector<int>{1, 2, 10, 11, 12, 13, 14}));
}

TEST(RingQueue, SteadyStateDoesNotGrow) {
  RingQueue<int> q(8);
  for (int i = 0; i < 1000; ++i) {
    q.push_back(i);
    q.push_back(i);
    q.pop_front();
    q.pop_front();
  }
  EXPECT_EQ(q.capacity(), 8u);
}

}  // namespace
}  // namespace sluice::runtime
