// Helpers of the Kafka tests: clients of the test broker, topics, transactional producers, whole-partition
// reads. Header-only; failures are GoogleTest failures of the calling test.
#pragma once

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_servers.h"

namespace sluice::kafka::testutil {

using Clock = std::chrono::steady_clock;

inline std::string bootstrap() { return sluice::testing::kafka_test_server().address; }

// A name no other test (of this run or an earlier one on the same broker) has used.
inline std::string unique_name(const std::string& prefix) {
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

inline std::string error_text(const ErrorPtr& e) { return e ? rd_kafka_error_string(e.get()) : "ok"; }

// A client of `servers` (the test broker unless given, e.g. librdkafka's mock cluster) with `props`.
inline KafkaPtr make_client(rd_kafka_type_t type, const std::vector<std::pair<std::string, std::string>>& props,
                            const std::string& servers = bootstrap()) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const std::string& k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << k << "=" << v << ": " << err;
    }
  };
  set("bootstrap.servers", servers);
  for (const auto& [k, v] : props) set(k, v);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    ADD_FAILURE() << "rd_kafka_new: " << err;
    rd_kafka_conf_destroy(conf);
  }
  return KafkaPtr(rk);
}

inline void create_topic(const std::string& topic, int partitions) {
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

// Grows `topic` to `total` partitions.
inline void add_partitions(const std::string& topic, int total) {
  KafkaPtr admin = make_client(RD_KAFKA_PRODUCER, {});
  char err[512];
  rd_kafka_NewPartitions_t* np = rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), err, sizeof err);
  ASSERT_NE(np, nullptr) << err;
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin.get());
  rd_kafka_CreatePartitions(admin.get(), &np, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  ASSERT_NE(ev, nullptr) << "CreatePartitions: no answer in 30 s";
  const rd_kafka_CreatePartitions_result_t* res = rd_kafka_event_CreatePartitions_result(ev);
  ASSERT_NE(res, nullptr) << rd_kafka_event_error_string(ev);
  size_t n = 0;
  const rd_kafka_topic_result_t** tr = rd_kafka_CreatePartitions_result_topics(res, &n);
  ASSERT_EQ(n, 1U);
  EXPECT_EQ(rd_kafka_topic_result_error(tr[0]), RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_topic_result_error_string(tr[0]);
  rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewPartitions_destroy(np);
}

inline KafkaPtr transactional_producer(const std::string& transactional_id, int transaction_timeout_ms = 60000) {
  KafkaPtr p = make_client(RD_KAFKA_PRODUCER, {{"transactional.id", transactional_id},
                                               {"transaction.timeout.ms", std::to_string(transaction_timeout_ms)},
                                               {"linger.ms", "0"}});
  if (p) {
    ErrorPtr e(rd_kafka_init_transactions(p.get(), 30000));
    EXPECT_FALSE(e) << "init_transactions(" << transactional_id << "): " << error_text(e);
  }
  return p;
}

// Produces one record; timestamp_ms <= 0 lets the producer stamp it (librdkafka reads 0 as "now").
inline void produce(rd_kafka_t* p, const std::string& topic, int32_t partition, const std::string& value,
                    int64_t timestamp_ms = -1) {
  // rd_kafka_produceva, not the RD_KAFKA_V_* macros of rd_kafka_producev (they expand to C casts).
  rd_kafka_vu_t vus[5];
  size_t n = 0;
  vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[n++].u.cstr = topic.c_str();
  vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[n++].u.i32 = partition;
  vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[n].u.mem.ptr = const_cast<char*>(value.data());
  vus[n++].u.mem.size = value.size();
  vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
  if (timestamp_ms >= 0) {
    vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
    vus[n++].u.i64 = timestamp_ms;
  }
  ErrorPtr e(rd_kafka_produceva(p, vus, n));
  ASSERT_FALSE(e) << error_text(e);
}

// A producer without transactions (acks=all, idempotent), for plain test data.
// Idempotent so that a retried request (a new topic's first produce often meets a leader not yet elected) cannot
// reorder the records of a partition: tests rely on the offsets they produce in order.
inline KafkaPtr plain_producer() {
  return make_client(RD_KAFKA_PRODUCER, {{"linger.ms", "0"}, {"acks", "all"}, {"enable.idempotence", "true"}});
}

// Commits `offset` for `topic`/`partition` in consumer group `group` (without joining it).
inline void commit_group_offset(const std::string& group, const std::string& topic, int32_t partition,
                                int64_t offset) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER, {{"group.id", group}, {"enable.auto.commit", "false"}});
  ASSERT_TRUE(c);
  rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic.c_str(), partition)->offset = offset;
  rd_kafka_resp_err_t err = rd_kafka_commit(c.get(), l, 0);
  rd_kafka_topic_partition_list_destroy(l);
  ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << "commit for group " << group << ": " << rd_kafka_err2str(err);
  rd_kafka_consumer_close(c.get());
}

inline void begin(rd_kafka_t* p) {
  ErrorPtr e(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(e) << error_text(e);
}

inline void commit(rd_kafka_t* p) {
  ErrorPtr e(rd_kafka_commit_transaction(p, 30000));
  ASSERT_FALSE(e) << error_text(e);
}

struct Watermarks {
  int64_t low = -1;
  int64_t high = -1;  // with isolation.level=read_committed: the last stable offset
};

inline Watermarks query_watermarks(const std::string& topic, int32_t partition, const char* isolation) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER, {{"group.id", unique_name("wm")}, {"isolation.level", isolation}});
  Watermarks w;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(c.get(), topic.c_str(), partition, &w.low, &w.high, 10000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  return w;
}

// Waits until the high watermark of `partition` reaches `expected` (at most `timeout_ms`) and returns it. The
// transaction coordinator writes a transaction's markers after EndTxn has returned (KIP-98), so a test that counts
// a marker just written into the end offset must wait for it to land.
inline int64_t await_high_watermark(const std::string& topic, int32_t partition, int64_t expected,
                                    const char* isolation = "read_uncommitted", int64_t timeout_ms = 10000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int64_t high = query_watermarks(topic, partition, isolation).high;
  while (high < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    high = query_watermarks(topic, partition, isolation).high;
  }
  return high;
}

// Waits (at most `timeout_ms`) until no transaction on `partition` waits for its marker: the last stable offset
// (read_committed) has caught up with the high watermark. Returns whether it did.
inline bool await_stable(const std::string& topic, int32_t partition, int64_t timeout_ms = 10000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int64_t lso = query_watermarks(topic, partition, "read_committed").high;
    if (lso == query_watermarks(topic, partition, "read_uncommitted").high) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct ReadResult {
  std::vector<std::string> values;
  std::vector<int64_t> offsets;
  int64_t position = -1;  // the consumer's position at the partition's end
};

// Reads partition `partition` of `topic` (on `servers`) from offset 0 until the consumer reports the partition's end.
inline ReadResult read_partition(const std::string& topic, int32_t partition, const char* isolation,
                                 const std::string& servers = bootstrap()) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER,
                           {{"group.id", unique_name("reader")},
                            {"isolation.level", isolation},
                            {"enable.partition.eof", "true"},
                            {"enable.auto.commit", "false"},
                            {"fetch.wait.max.ms", "50"}},
                           servers);
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

}  // namespace sluice::kafka::testutil
