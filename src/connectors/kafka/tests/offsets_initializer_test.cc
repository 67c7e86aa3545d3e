// The pure decisions of the Kafka source: which offset each OffsetsInitializer starts a partition at, which
// subtask owns a partition, and the split's serialized form.
#include <gtest/gtest.h>

#include <set>

#include "sluice/connectors/kafka/kafka_source.h"

namespace sluice::kafka {
namespace {

const TopicPartition kTp{"orders", 2};
const PartitionOffsets kFound{/*earliest=*/10, /*latest=*/50, /*committed=*/30, /*by_timestamp=*/20};

TEST(ChooseStartOffset, EarliestAndLatestAreTheWatermarks) {
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::earliest(), kTp, kFound).offset, 10);
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::latest(), kTp, kFound).offset, 50);
}

TEST(ChooseStartOffset, CommittedFallsBackToTheResetStrategy) {
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::committed(), kTp, kFound).offset, 30);
  PartitionOffsets none = kFound;
  none.committed = -1;
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::committed(OffsetResetStrategy::kEarliest), kTp, none).offset, 10);
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::committed(OffsetResetStrategy::kLatest), kTp, none).offset, 50);
  StartOffset fail = choose_start_offset(OffsetsInitializer::committed(OffsetResetStrategy::kNone), kTp, none);
  EXPECT_EQ(fail.offset, -1);
  EXPECT_NE(fail.error.find("partition 2 of topic 'orders'"), std::string::npos) << fail.error;
  EXPECT_NE(fail.error.find("no committed offset"), std::string::npos) << fail.error;
}

TEST(ChooseStartOffset, TimestampWithoutALaterRecordStartsAtTheEnd) {
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::timestamp(1234), kTp, kFound).offset, 20);
  PartitionOffsets none = kFound;
  none.by_timestamp = -1;
  EXPECT_EQ(choose_start_offset(OffsetsInitializer::timestamp(1234), kTp, none).offset, 50);
}

TEST(ChooseStartOffset, SpecificOffsetsAndTheResetStrategyForOthers) {
  auto init = OffsetsInitializer::specific({{{"orders", 2}, 42}, {{"orders", 3}, 7}}, OffsetResetStrategy::kLatest);
  EXPECT_EQ(choose_start_offset(init, kTp, kFound).offset, 42);
  EXPECT_EQ(choose_start_offset(init, TopicPartition{"orders", 5}, kFound).offset, 50);
  EXPECT_EQ(choose_start_offset(init, TopicPartition{"other", 2}, kFound).offset, 50);
  auto strict = OffsetsInitializer::specific({{{"orders", 2}, 42}}, OffsetResetStrategy::kNone);
  EXPECT_FALSE(choose_start_offset(strict, TopicPartition{"orders", 0}, kFound).error.empty());
}

TEST(KafkaSplitOwner, SpreadsATopicsPartitionsRoundRobin) {
  for (int32_t parallelism : {1, 2, 3, 7}) {
    std::vector<int> per_subtask(static_cast<size_t>(parallelism));
    const int32_t first = kafka_split_owner("events", 0, parallelism);
    for (int32_t p = 0; p < 4 * parallelism; ++p) {
      const int32_t owner = kafka_split_owner("events", p, parallelism);
      ASSERT_GE(owner, 0);
      ASSERT_LT(owner, parallelism);
      EXPECT_EQ(owner, (first + p) % parallelism);
      ++per_subtask[static_cast<size_t>(owner)];
    }
    for (int n : per_subtask) EXPECT_EQ(n, 4);
  }
  // Fixed values: the owner must not change between processes or builds (restored state relies on nothing else,
  // but a change would move partitions on every upgrade).
  EXPECT_EQ(kafka_split_owner("events", 0, 1000), kafka_split_owner("events", 1000, 1000));
  std::set<int32_t> starts;
  for (const char* t : {"a", "b", "c", "d", "e", "f"}) starts.insert(kafka_split_owner(t, 0, 64));
  EXPECT_GT(starts.size(), 1U) << "different topics should start at different subtasks";
}

TEST(KafkaPartitionSplit, RoundTripsThroughItsSerializer) {
  KafkaPartitionSplit s{"orders", 3, 12345, 20000};
  EXPECT_EQ(s.split_id(), "orders-3");
  auto bytes = serialize_bytes(std::vector<KafkaPartitionSplit>{s, {"x", 0, 0, kNoStoppingOffset}});
  auto back = deserialize_bytes<std::vector<KafkaPartitionSplit>>(bytes.data(), bytes.size(), "test");
  ASSERT_TRUE(back.is_ok());
  ASSERT_EQ(back->size(), 2U);
  EXPECT_EQ((*back)[0], s);
  EXPECT_EQ((*back)[1].stopping_offset, kNoStoppingOffset);
}

}  // namespace
}  // namespace sluice::kafka
