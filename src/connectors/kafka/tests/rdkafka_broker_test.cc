// librdkafka (Debian's 2.0.2) against the pinned Apache Kafka broker of scripts/test-servers/kafka-start:
// transactions, read_committed visibility, fencing, the broker's abort on transaction timeout, and where a
// read_committed consumer's position ends when a partition ends with a transaction marker. The facts found
// here are recorded in docs/kafka.md; the Kafka source and sinks rely on them.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_servers.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string bootstrap() { return sluice::testing::kafka_test_server().address; }

// A name no other test (of this run or an earlier one on the same broker) has used.
std::string unique_name(const std::string& prefix) {
  static std::mt19937_64 rng{std::random_device{}()};
  return prefix + "-" + std::to_string(rng() % 1000000000);
}

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const {
    rd_kafka_flush(rk, 5000);
    rd_kafka_destroy(rk);
  }
};
using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

struct ErrorDeleter {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;

std::string error_text(const ErrorPtr& e) { return e ? rd_kafka_error_string(e.get()) : "ok"; }

KafkaPtr make_client(rd_kafka_type_t type, const std::vector<std::pair<std::string, std::string>>& props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const std::string& k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << k << "=" << v << ": " << err;
    }
  };
  set("bootstrap.servers", bootstrap());
  for (const auto& [k, v] : props) set(k, v);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    ADD_FAILURE() << "rd_kafka_new: " << err;
    rd_kafka_conf_destroy(conf);
  }
  return KafkaPtr(rk);
}

void create_topic(const std::string& topic, int partitions) {
  KafkaPtr admin = make_client(RD_KAFKA_PRODUCER, {});
  ASSERT_TRUE(admin);
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  ASSERT_NE(nt, nullptr) << err;
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin.get());
  rd_kafka_CreateTopics(admin.get(), &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  ASSERT_NE(ev, nullptr) << "CreateTopics: no answer in 30 s";
  const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
  ASSERT_NE(res, nullptr) << rd_kafka_event_error_string(ev);
  size_t n = 0;
  const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
  ASSERT_EQ(n, 1U);
  EXPECT_EQ(rd_kafka_topic_result_error(tr[0]), RD_KAFKA_RESP_ERR_NO_ERROR)
      << topic << ": " << rd_kafka_topic_result_error_string(tr[0]);
  rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
}

KafkaPtr transactional_producer(const std::string& transactional_id, int transaction_timeout_ms = 60000) {
  KafkaPtr p = make_client(RD_KAFKA_PRODUCER, {{"transactional.id", transactional_id},
                                               {"transaction.timeout.ms", std::to_string(transaction_timeout_ms)},
                                               {"linger.ms", "0"}});
  if (p) {
    ErrorPtr e(rd_kafka_init_transactions(p.get(), 30000));
    EXPECT_FALSE(e) << "init_transactions(" << transactional_id << "): " << error_text(e);
  }
  return p;
}

void produce(rd_kafka_t* p, const std::string& topic, int32_t partition, const std::string& value) {
  // rd_kafka_produceva, not the RD_KAFKA_V_* macros of rd_kafka_producev (they expand to C casts).
  rd_kafka_vu_t vus[4];
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[1].u.i32 = partition;
  vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[2].u.mem.ptr = const_cast<char*>(value.data());
  vus[2].u.mem.size = value.size();
  vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[3].u.i = RD_KAFKA_MSG_F_COPY;
  ErrorPtr e(rd_kafka_produceva(p, vus, 4));
  ASSERT_FALSE(e) << error_text(e);
}

void begin(rd_kafka_t* p) {
  ErrorPtr e(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(e) << error_text(e);
}

void commit(rd_kafka_t* p) {
  ErrorPtr e(rd_kafka_commit_transaction(p, 30000));
  ASSERT_FALSE(e) << error_text(e);
}

struct Watermarks {
  int64_t low = -1;
  int64_t high = -1;  // with isolation.level=read_committed: the last stable offset
};

Watermarks query_watermarks(const std::string& topic, int32_t partition, const char* isolation) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER, {{"group.id", unique_name("wm")}, {"isolation.level", isolation}});
  Watermarks w;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(c.get(), topic.c_str(), partition, &w.low, &w.high, 10000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  return w;
}

struct ReadResult {
  std::vector<std::string> values;
  std::vector<int64_t> offsets;
  int64_t position = -1;  // the consumer's position at the partition's end
};

// Reads partition `partition` of `topic` from offset 0 until the consumer reports the partition's end.
ReadResult read_partition(const std::string& topic, int32_t partition, const char* isolation) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER, {{"group.id", unique_name("reader")},
                                               {"isolation.level", isolation},
                                               {"enable.partition.eof", "true"},
                                               {"enable.auto.commit", "false"},
                                               {"fetch.wait.max.ms", "50"}});
  ReadResult out;
  rd_kafka_topic_partition_list_t* tps = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(tps, topic.c_str(), partition)->offset = RD_KAFKA_OFFSET_BEGINNING;
  EXPECT_EQ(rd_kafka_assign(c.get(), tps), RD_KAFKA_RESP_ERR_NO_ERROR);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  bool eof = false;
  while (!eof && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      eof = true;
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      ADD_FAILURE() << "consume: " << rd_kafka_message_errstr(m);
    } else {
      out.values.emplace_back(static_cast<const char*>(m->payload), m->len);
      out.offsets.push_back(m->offset);
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_TRUE(eof) << "no end of partition within 20 s";
  rd_kafka_position(c.get(), tps);
  out.position = tps->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(tps);
  rd_kafka_consumer_close(c.get());
  return out;
}

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
  EXPECT_EQ(read_partition(topic, 0, "read_committed").values, (Values{"o1", "o2"}));
  EXPECT_EQ(query_watermarks(topic, 0, "read_committed").high, 3);
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
