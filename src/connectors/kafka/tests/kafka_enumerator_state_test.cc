// The Kafka source enumerator's checkpointed state read back (restore_enumerator): what it refuses.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/kafka/kafka_source.h"

namespace sluice::kafka {
namespace {

class NoContext final : public SplitEnumeratorContext<KafkaPartitionSplit> {
 public:
  int32_t current_parallelism() const override { return 2; }
  void assign_split(KafkaPartitionSplit split, int32_t subtask) override {
    assigned.emplace_back(std::move(split), subtask);
  }
  void signal_no_more_splits(int32_t) override {}
  void call_async(std::function<std::function<void()>()>, int64_t, int64_t) override {}
  std::vector<std::pair<KafkaPartitionSplit, int32_t>> assigned;
};

KafkaSourceOptions bounded_options() {
  KafkaSourceOptions o;
  o.bootstrap_servers = "localhost:1";  // never contacted: a restored enumerator does not list partitions
  o.topics = {"orders"};
  o.boundedness = Boundedness::kBounded;
  return o;
}

std::vector<uint8_t> state_of(const std::vector<KafkaPartitionSplit>& pending,
                              const std::vector<std::pair<std::string, int32_t>>& known) {
  std::vector<uint8_t> out = serialize_bytes(pending);
  serialize_append(known, out);
  return out;
}

TEST(KafkaEnumeratorState, RestoresAndAssignsValidSplits) {
  NoContext ctx;
  auto e = detail::restore_kafka_enumerator(ctx, bounded_options(),
                                            state_of({{"orders", 0, 5, kNoStoppingOffset}, {"orders", 1, 0, 9}},
                                                     {{"orders", 0}, {"orders", 1}}));
  e->add_reader(0);
  e->add_reader(1);
  EXPECT_EQ(ctx.assigned.size(), 2u);
}

// A split with a negative offset was restored and handed to a reader (which then failed); one with a negative
// partition was never assigned, its records silently never read (found by fuzz/kafka_record_fuzzer).
TEST(KafkaEnumeratorState, RefusesSplitsNoReaderCanTake) {
  const std::vector<std::pair<KafkaPartitionSplit, std::string>> bad = {
      {{"orders", 0, -5, kNoStoppingOffset}, "offset -5"},
      {{"orders", -1, 0, kNoStoppingOffset}, "partition -1"},
      {{"orders", 0, 0, -7}, "stopping offset -7"},
      {{"", 0, 0, kNoStoppingOffset}, "expected a topic"},
  };
  for (const auto& [split, message] : bad) {
    NoContext ctx;
    try {
      (void)detail::restore_kafka_enumerator(ctx, bounded_options(), state_of({split}, {}));
      ADD_FAILURE() << "restored " << split.split_id() << " at offset " << split.offset;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
    EXPECT_TRUE(ctx.assigned.empty());
  }
  NoContext ctx;
  EXPECT_THROW((void)detail::restore_kafka_enumerator(ctx, bounded_options(), state_of({}, {{"orders", -2}})),
               std::invalid_argument);
}

}  // namespace
}  // namespace sluice::kafka
