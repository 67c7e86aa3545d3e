// Which subtasks an edge connects (graph/edge_topology.h): pointwise ranges as Flink's connectPointwise, checked
// exhaustively for small parallelisms, and the all-to-all case.
#include "graph/edge_topology.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::graph {
namespace {

TEST(EdgeTopology, DistributionPatternOfEachPartitioning) {
  EXPECT_TRUE(is_pointwise(Partitioning::kForward));
  EXPECT_TRUE(is_pointwise(Partitioning::kRescale));
  for (Partitioning p : {Partitioning::kRebalance, Partitioning::kBroadcast, Partitioning::kHash,
                         Partitioning::kShuffle, Partitioning::kGlobal, Partitioning::kCustom}) {
    EXPECT_EQ(distribution_pattern(p), DistributionPattern::kAllToAll) << partitioning_name(p);
  }
}

TEST(EdgeTopology, RescaleFansOutAndInAsFlinksRescalePartitioner) {
  // 2 -> 4: producer 0 feeds consumers 0, 1; producer 1 feeds 2, 3.
  EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, 0, 2, 4), (SubtaskRange{0, 2}));
  EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, 1, 2, 4), (SubtaskRange{2, 4}));
  for (int32_t c = 0; c < 4; ++c) {
    EXPECT_EQ(producers_of_consumer(Partitioning::kRescale, c, 2, 4), (SubtaskRange{c / 2, c / 2 + 1})) << c;
  }
  // 4 -> 2: producers 0, 1 feed consumer 0; 2, 3 feed consumer 1.
  EXPECT_EQ(producers_of_consumer(Partitioning::kRescale, 0, 4, 2), (SubtaskRange{0, 2}));
  EXPECT_EQ(producers_of_consumer(Partitioning::kRescale, 1, 4, 2), (SubtaskRange{2, 4}));
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, p, 4, 2), (SubtaskRange{p / 2, p / 2 + 1})) << p;
  }
  // Uneven: 3 -> 5 gives {0}, {1, 2}, {3, 4}; 5 -> 3 the mirror image.
  EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, 0, 3, 5), (SubtaskRange{0, 1}));
  EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, 1, 3, 5), (SubtaskRange{1, 3}));
  EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, 2, 3, 5), (SubtaskRange{3, 5}));
  EXPECT_EQ(producers_of_consumer(Partitioning::kRescale, 1, 5, 3), (SubtaskRange{1, 3}));
  // Equal parallelism: i -> i, as forward.
  for (int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(consumers_of_producer(Partitioning::kRescale, i, 3, 3), (SubtaskRange{i, i + 1}));
    EXPECT_EQ(producers_of_consumer(Partitioning::kForward, i, 3, 3), (SubtaskRange{i, i + 1}));
  }
}

TEST(EdgeTopology, PointwiseRangesAreConsistentContiguousAndCoverEverySubtaskOnce) {
  for (int32_t producers = 1; producers <= 12; ++producers) {
    for (int32_t consumers = 1; consumers <= 12; ++consumers) {
      std::vector<int32_t> fed(static_cast<size_t>(consumers), 0);
      for (int32_t i = 0; i < producers; ++i) {
        const SubtaskRange to = consumers_of_producer(Partitioning::kRescale, i, producers, consumers);
        ASSERT_GT(to.size(), 0) << producers << "->" << consumers << " producer " << i;
        ASSERT_GE(to.begin, 0);
        ASSERT_LE(to.end, consumers);
        if (producers >= consumers) {
          EXPECT_EQ(to.size(), 1) << "fan-in: one consumer per producer";
        }
        for (int32_t j = to.begin; j < to.end; ++j) ++fed[static_cast<size_t>(j)];
      }
      std::vector<int32_t> read(static_cast<size_t>(producers), 0);
      for (int32_t j = 0; j < consumers; ++j) {
        const SubtaskRange from = producers_of_consumer(Partitioning::kRescale, j, producers, consumers);
        ASSERT_GT(from.size(), 0) << producers << "->" << consumers << " consumer " << j;
        if (producers <= consumers) {
          EXPECT_EQ(from.size(), 1) << "fan-out: one producer per consumer";
        }
        // The channel count a consumer sees equals the producers whose ranges contain it.
        EXPECT_EQ(from.size(), fed[static_cast<size_t>(j)]) << producers << "->" << consumers << " consumer " << j;
        for (int32_t i = 0; i < producers; ++i) {
          const bool linked = consumers_of_producer(Partitioning::kRescale, i, producers, consumers).contains(j);
          EXPECT_EQ(from.contains(i), linked) << producers << "->" << consumers << " " << i << "->" << j;
          if (linked) ++read[static_cast<size_t>(i)];
        }
      }
      for (int32_t i = 0; i < producers; ++i) {
        EXPECT_EQ(read[static_cast<size_t>(i)],
                  consumers_of_producer(Partitioning::kRescale, i, producers, consumers).size());
      }
    }
  }
}

TEST(EdgeTopology, AllToAllEdgesConnectEveryProducerToEveryConsumer) {
  for (Partitioning p : {Partitioning::kRebalance, Partitioning::kHash, Partitioning::kShuffle, Partitioning::kGlobal,
                         Partitioning::kCustom, Partitioning::kBroadcast}) {
    EXPECT_EQ(consumers_of_producer(p, 1, 2, 5), (SubtaskRange{0, 5})) << partitioning_name(p);
    EXPECT_EQ(producers_of_consumer(p, 4, 2, 5), (SubtaskRange{0, 2})) << partitioning_name(p);
  }
}

}  // namespace
}  // namespace sluice::graph
