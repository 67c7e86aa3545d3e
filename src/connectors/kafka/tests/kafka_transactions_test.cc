// The exactly-once Kafka sink's pure decisions: transactional id and marker names, the ids a restore fences
// (restored ids, pool ids, the window after the restored checkpoint, scoped to the committer's subtask), which
// transactions are written again, the committable's serialized form, and the transaction-timeout warning.
#include <gtest/gtest.h>

#include <limits>

#include "../kafka_transactions.h"
#include "../rdkafka_client.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::internal {
namespace {

KafkaCommittable committable(int32_t subtask, int64_t cp, std::string id, std::vector<std::string> pool = {}) {
  KafkaCommittable c;
  c.transactional_id = std::move(id);
  c.job_id = "j1";
  c.attempt = 2;
  c.checkpoint_id = cp;
  c.subtask = subtask;
  c.pool_ids = std::move(pool);
  return c;
}

TEST(KafkaTransactions, IdsAndMarkersNameSubtaskAndCheckpoint) {
  EXPECT_EQ(transactional_id("job-sink", 3, 17), "job-sink-3-17");
  EXPECT_EQ(marker_value(committable(1, 9, "x")), "j1/2/9/1");
  KafkaSinkOptions o;
  o.transactional_id_prefix = "p";
  EXPECT_EQ(marker_topic_of(o), "p.markers");
  o.marker_topic = "m";
  EXPECT_EQ(marker_topic_of(o), "m");
  EXPECT_EQ(marker_partition(5, 4), 1);
  EXPECT_EQ(marker_partition(5, 0), 0);
}

TEST(KafkaTransactions, UnscopedFencingCoversStatePoolAndEveryWritersWindow) {
  const std::vector<KafkaCommittable> restored{committable(0, 4, "p-0-3", {"p-0-1", "p-0-3"}),
                                               committable(1, 4, "p-1-4", {"p-1-4"}),
                                               committable(0, 3, "p-0-1", {"p-0-1"})};
  const std::vector<std::string> expected{"p-0-1", "p-0-3", "p-0-5", "p-0-6", "p-1-4", "p-1-5", "p-1-6"};
  EXPECT_EQ(ids_to_fence("p", restored, 2, nullptr), expected);
}

TEST(KafkaTransactions, ScopedFencingLeavesOtherLiveSubtasksWindowsToThem) {
  const std::vector<KafkaCommittable> restored{committable(1, 4, "p-1-4"), committable(3, 4, "p-3-2")};
  // Committer of subtask 0 of 2, restored from checkpoint 5: its own window (6, 7), the vanished subtask 3's
  // window after its latest transaction (5, 6), not live subtask 1's (its writer may use p-1-6 again already).
  const FenceScope scope{0, 2, 5};
  const std::vector<std::string> expected{"p-0-6", "p-0-7", "p-1-4", "p-3-2", "p-3-5", "p-3-6"};
  EXPECT_EQ(ids_to_fence("p", restored, 2, &scope), expected);
  EXPECT_EQ(window_ids("p", 2, 10, 3), (std::vector<std::string>{"p-2-11", "p-2-12", "p-2-13"}));
}

// A restored committable carries its checkpoint id from the checkpoint's bytes; one near INT64_MAX made the window
// bound (id + window) overflow, undefined behaviour that UBSan reports (found writing fuzz/kafka_record_fuzzer).
TEST(KafkaTransactions, WindowEndsAtTheLastCheckpointId) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(window_ids("p", 0, kMax - 1, 3), std::vector<std::string>{"p-0-" + std::to_string(kMax)});
  EXPECT_TRUE(window_ids("p", 0, kMax, 3).empty());
  const std::vector<KafkaCommittable> restored{committable(1, kMax, "p-1-x")};
  EXPECT_EQ(ids_to_fence("p", restored, 2, nullptr), std::vector<std::string>{"p-1-x"});
}

TEST(KafkaTransactions, OnlyTransactionsWithoutACommittedMarkerAreRewrittenInCheckpointOrder) {
  const std::vector<KafkaCommittable> restored{committable(0, 7, "a"), committable(0, 5, "b"),
                                               committable(0, 6, "c")};
  auto again = to_rewrite(restored, {marker_value(restored[2])});
  ASSERT_EQ(again.size(), 2U);
  EXPECT_EQ(again[0].transactional_id, "b");
  EXPECT_EQ(again[1].transactional_id, "a");
  EXPECT_TRUE(to_rewrite(restored, {marker_value(restored[0]), marker_value(restored[1]), marker_value(restored[2])})
                  .empty());
}

TEST(KafkaTransactions, CommittableRoundTripsWithItsRecords) {
  KafkaCommittable c = committable(1, 8, "p-1-8", {"p-1-8", "p-1-2"});
  c.marker_topic = "m";
  c.marker_partition = 1;
  c.marker_offset = 42;
  KafkaProducerRecord r;
  r.topic = "out";
  r.key = "k";
  r.has_key = true;
  r.value = std::string("v\0w", 3);
  r.timestamp_ms = 1000;
  c.records = {r, KafkaProducerRecord{}};
  auto bytes = serialize_bytes(c);
  auto back = deserialize_bytes<KafkaCommittable>(bytes.data(), bytes.size(), "committable");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, c);
}

TEST(KafkaTransactions, TimeoutWarningWhenShorterThanIntervalPlusTimeoutPlusRestartDelay) {
  EXPECT_EQ(kafka_transaction_timeout_warning(60000, 10000, 30000, 20000), "");
  const std::string w = kafka_transaction_timeout_warning(60000, 10000, 600000, 1000);
  EXPECT_NE(w.find("611000 ms"), std::string::npos) << w;
  EXPECT_NE(w.find("transaction.timeout.ms 60000 ms"), std::string::npos) << w;
}

// The consumers a sink makes for itself get its connection settings, not its producer settings (which librdkafka
// would log as ignored, one line each).
TEST(KafkaClient, ASinksConsumersTakeItsConnectionPropertiesOnly) {
  const std::map<std::string, std::string> sink = {
      {"linger.ms", "5"}, {"acks", "all"}, {"compression.type", "zstd"}, {"transaction.timeout.ms", "60000"},
      {"security.protocol", "SASL_SSL"}, {"sasl.mechanism", "PLAIN"}, {"socket.timeout.ms", "30000"},
      {"client.rack", "r1"}};
  const std::map<std::string, std::string> expected = {{"security.protocol", "SASL_SSL"},
                                                       {"sasl.mechanism", "PLAIN"},
                                                       {"socket.timeout.ms", "30000"},
                                                       {"client.rack", "r1"}};
  EXPECT_EQ(consumer_properties_of_sink(sink), expected);
}

}  // namespace
}  // namespace sluice::kafka::internal
