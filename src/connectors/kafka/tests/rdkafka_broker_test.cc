// librdkafka (Debian's 2.0.2) against the pinned Apache Kafka broker of scripts/test-servers/kafka-start:
// transactions, read_committed visibility, fencing, the broker's abort on transaction timeout, and where a
// read_committed consumer's position ends when a partition ends with a transaction marker. The facts found
// here are recorded in docs/kafka.md; the Kafka source and sinks rely on them.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_util.h"

namespace {

using namespace sluice::kafka::testutil;  // NOLINT: test helpers

using Values = std::vector<std::string>;

TEST(RdKafkaBroker, ReadCommittedSeesCommittedTransactionsOnly) {
  const std::string topic = unique_name("txn");
  create_topic(topic, 1);
  KafkaPtr p = transactional_producer(unique_name("tid"));
  ASSERT_TRUE(p);
  begin(p.get());
  produce(p.get(), topic, 0, "c1");
  produce(p.get(), topic, 0, "c2");
  commit(p.get());
  begin(p.get());
  produce(p.get(), topic, 0, "a1");
  produce(p.get(), topic, 0, "a2");
  ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);  // on the broker before the abort
  {
    ErrorPtr e(rd_kafka_abort_transaction(p.get(), 30000));
    ASSERT_FALSE(e) << error_text(e);
  }
  begin(p.get());
  produce(p.get(), topic, 0, "c3");
  commit(p.get());
  ASSERT_EQ(await_high_watermark(topic, 0, 8), 8) << "the last commit marker did not land";

  // Offsets: c1 0, c2 1, commit marker 2, a1 3, a2 4, abort marker 5, c3 6, commit marker 7.
  const ReadResult all = read_partition(topic, 0, "read_uncommitted");
  EXPECT_EQ(all.values, (Values{"c1", "c2", "a1", "a2", "c3"}));
  EXPECT_EQ(all.offsets, (std::vector<int64_t>{0, 1, 3, 4, 6}));

  const ReadResult committed = read_partition(topic, 0, "read_committed");
  EXPECT_EQ(committed.values, (Values{"c1", "c2", "c3"}));
  EXPECT_EQ(committed.offsets, (std::vector<int64_t>{0, 1, 6}));

  // The partition ends with a commit marker: the end offset is 8, one past the marker, for both isolation
  // levels. A bounded source that stops at the end offset must therefore not wait for a record at offset 7.
  EXPECT_EQ(query_watermarks(topic, 0, "read_uncommitted").high, 8);
  EXPECT_EQ(query_watermarks(topic, 0, "read_committed").high, 8);
  // Where the consumer's position stands after the last record: recorded in docs/kafka.md.
  RecordProperty("read_committed_position_at_eof", std::to_string(committed.position));
  RecordProperty("read_uncommitted_position_at_eof", std::to_string(all.position));
  EXPECT_EQ(committed.position, 8) << "position of a read_committed consumer at the end of the partition";
  EXPECT_EQ(all.position, 8) << "position of a read_uncommitted consumer at the end of the partition";
}

TEST(RdKafkaBroker, OpenTransactionIsInvisibleUntilCommitted) {
  const std::string topic = unique_name("open");
  create_topic(topic, 1);
  KafkaPtr p = transactional_producer(unique_name("tid"));
  ASSERT_TRUE(p);
  begin(p.get());
  produce(p.get(), topic, 0, "o1");
  produce(p.get(), topic, 0, "o2");
  ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  // Written (high watermark 2) but not stable: the last stable offset stays at the open transaction's start.
  EXPECT_EQ(query_watermarks(topic, 0, "read_uncommitted").high, 2);
  EXPECT_EQ(query_watermarks(topic, 0, "read_committed").high, 0);
  EXPECT_EQ(read_partition(topic, 0, "read_uncommitted").values, (Values{"o1", "o2"}));
  EXPECT_TRUE(read_partition(topic, 0, "read_committed").values.empty());

  commit(p.get());
  EXPECT_EQ(await_high_watermark(topic, 0, 3, "read_committed"), 3);
  EXPECT_EQ(read_partition(topic, 0, "read_committed").values, (Values{"o1", "o2"}));
}

TEST(RdKafkaBroker, InitTransactionsOnTheSameIdFencesTheOldProducerAndAbortsItsTransaction) {
  const std::string topic = unique_name("fence");
  create_topic(topic, 1);
  const std::string tid = unique_name("tid");
  KafkaPtr zombie = transactional_producer(tid);
  ASSERT_TRUE(zombie);
  begin(zombie.get());
  produce(zombie.get(), topic, 0, "zombie");
  ASSERT_EQ(rd_kafka_flush(zombie.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  // The restored task's producer: init_transactions on the same id aborts the zombie's open transaction.
  KafkaPtr restored = transactional_producer(tid);
  ASSERT_TRUE(restored);
  begin(restored.get());
  produce(restored.get(), topic, 0, "restored");
  commit(restored.get());

  ErrorPtr e(rd_kafka_commit_transaction(zombie.get(), 30000));
  ASSERT_TRUE(e) << "the fenced producer's commit succeeded";
  EXPECT_TRUE(rd_kafka_error_is_fatal(e.get())) << error_text(e);
  RecordProperty("fenced_commit_error", rd_kafka_error_name(e.get()));
  std::printf("fenced producer's commit: %s (%s), fatal=%d\n", rd_kafka_error_name(e.get()),
              rd_kafka_error_string(e.get()), rd_kafka_error_is_fatal(e.get()));

  EXPECT_EQ(read_partition(topic, 0, "read_committed").values, (Values{"restored"}));
  EXPECT_EQ(read_partition(topic, 0, "read_uncommitted").values, (Values{"zombie", "restored"}));
}

TEST(RdKafkaBroker, BrokerAbortsATransactionThatOutlivesItsTimeout) {
  const std::string topic = unique_name("timeout");
  create_topic(topic, 1);
  constexpr int kTimeoutMs = 2000;
  KafkaPtr p = transactional_producer(unique_name("tid"), kTimeoutMs);
  ASSERT_TRUE(p);
  begin(p.get());
  produce(p.get(), topic, 0, "late");
  ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(query_watermarks(topic, 0, "read_committed").high, 0);

  // The broker's check runs every second (transaction.abort.timed.out.transaction.cleanup.interval.ms in
  // kafka-start): the abort marker makes the partition stable again. Wait for it without timing assertions.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  int64_t lso = 0;
  while (Clock::now() < deadline) {
    lso = query_watermarks(topic, 0, "read_committed").high;
    if (lso > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(lso, 2) << "the abort marker at offset 1 should end the transaction";
  EXPECT_TRUE(read_partition(topic, 0, "read_committed").values.empty());

  ErrorPtr e(rd_kafka_commit_transaction(p.get(), 30000));
  ASSERT_TRUE(e) << "a commit after the broker aborted the transaction succeeded";
  RecordProperty("timed_out_commit_error", rd_kafka_error_name(e.get()));
  std::printf("commit after the broker's timeout abort: %s (%s), fatal=%d, requires_abort=%d\n",
              rd_kafka_error_name(e.get()), rd_kafka_error_string(e.get()), rd_kafka_error_is_fatal(e.get()),
              rd_kafka_error_txn_requires_abort(e.get()));
  EXPECT_TRUE(read_partition(topic, 0, "read_committed").values.empty());
}

}  // namespace
