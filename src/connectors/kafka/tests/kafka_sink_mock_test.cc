// The exactly-once Kafka sink on librdkafka 2.0.2's mock cluster (rdkafka_mock.h), with protocol errors injected
// into a running job. No server needed (label integration). The mock keeps no transaction state - EndTxn writes no
// markers, Fetch ignores isolation.level, a second producer with the same transactional id fences nobody - so what
// these tests prove is the sink's and librdkafka's handling of the errors, not read_committed visibility: that is
// proven on the broker (kafka_sink_test.cc, label kafka). docs/kafka.md, "librdkafka's mock cluster", says which
// property each test proves.
//
// Two jobs (sequence -> map -> sink, parallelism 2, a checkpoint every 100 ms), each with one kind of error after the
// other while it runs:
//  - Retried errors (coordinator loss: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, CONCURRENT_TRANSACTIONS and
//    dropped connections on AddPartitionsToTxn and EndTxn, COORDINATOR_NOT_AVAILABLE on FindCoordinator, then the
//    coordinator moved and its broker down; REQUEST_TIMED_OUT after a delay on Produce and InitProducerId): no
//    task fails, every pre-committed transaction's commit returns, and the mock holds each record and each
//    transaction's marker exactly once.
//  - Errors that end a transaction (fenced: PRODUCER_FENCED / INVALID_PRODUCER_EPOCH on Produce,
//    AddPartitionsToTxn or EndTxn; REQUEST_TIMED_OUT on AddPartitionsToTxn or EndTxn, which librdkafka makes
//    abortable): each fails the task once with an error naming the transactional id, the restart strategy restarts
//    the job, the restore recovers the restored transactions (init_transactions on their ids, the marker lookup),
//    and after the seven failures the job finishes with no record missing from the mock.
// Injections are seeded (SLUICE_KAFKA_MOCK_SEED, default 1; each test prints its seed): after how many commits
// they start, the order of the failures, and the order and delays of the retried errors.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "../../../config/tests/log_capture.h"
#include "../kafka_producer.h"
#include "../kafka_transactions.h"
#include "cluster/mini_cluster.h"
#include "hooked_kafka_sink.h"
#include "kafka_test_util.h"
#include "sluice/sluice.h"

namespace sluice::kafka {
namespace {

using namespace testutil;  // NOLINT: test helpers
using SteadyClock = std::chrono::steady_clock;

// Kafka protocol request types (ApiKey), as rdkafka_mock.h takes them.
constexpr int16_t kProduce = 0;
constexpr int16_t kFindCoordinator = 10;
constexpr int16_t kInitProducerId = 22;
constexpr int16_t kAddPartitionsToTxn = 24;
constexpr int16_t kEndTxn = 26;

// Brokers of the mock: partition leaders on 1, transaction coordinators on 2 (3 takes over when 2 is lost).
constexpr int32_t kLeader = 1;
constexpr int32_t kCoordinator = 2;
constexpr int32_t kStandbyCoordinator = 3;
constexpr int32_t kParallelism = 2;
// Coordinators are pinned (to a known broker) for the ids of checkpoints 1..kPinnedCheckpoints: every id the sink
// uses before the injections (lingering_checkpoints 2 keeps the ids fenced at the start among them). Each pin is a
// round trip to the mock's thread of up to ~100 ms, so not more.
constexpr int64_t kPinnedCheckpoints = 8;
constexpr int kRecords = 100000;  // ~10 s of input while held: more than the injections need
const std::string kDataTopic = "data";

uint64_t base_seed() {
  const char* env = std::getenv("SLUICE_KAFKA_MOCK_SEED");
  return env != nullptr ? std::stoull(env) : 1;
}

class MockCluster {
 public:
  MockCluster() {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[512];
    // The handle only hosts the cluster: no bootstrap.servers, and no notice saying so.
    EXPECT_EQ(rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err), RD_KAFKA_CONF_OK) << err;
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (handle_ == nullptr) ADD_FAILURE() << "rd_kafka_new: " << err;
    mc_ = rd_kafka_mock_cluster_new(handle_, 3);
    if (mc_ == nullptr) ADD_FAILURE() << "rd_kafka_mock_cluster_new failed";
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(mc_);
    rd_kafka_destroy(handle_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(mc_); }

  void create_topic(const std::string& topic, int32_t partitions) {
    ASSERT_EQ(rd_kafka_mock_topic_create(mc_, topic.c_str(), partitions, 1), RD_KAFKA_RESP_ERR_NO_ERROR) << topic;
    for (int32_t p = 0; p < partitions; ++p) {
      ASSERT_EQ(rd_kafka_mock_partition_set_leader(mc_, topic.c_str(), p, kLeader), RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }
  // The transaction coordinator of the ids of every subtask and checkpoints 1..kPinnedCheckpoints.
  void set_coordinator(const std::string& prefix, int32_t broker) {
    for (int32_t s = 0; s < kParallelism; ++s) {
      for (int64_t cp = 1; cp <= kPinnedCheckpoints; ++cp) {
        const std::string id = internal::transactional_id(prefix, s, cp);
        ASSERT_EQ(rd_kafka_mock_coordinator_set(mc_, "transaction", id.c_str(), broker), RD_KAFKA_RESP_ERR_NO_ERROR);
      }
    }
  }
  // The next request of type `api` that `broker` receives waits `rtt_ms`, then fails with `err` (in push order).
  void push(int32_t broker, int16_t api, rd_kafka_resp_err_t err, int rtt_ms) {
    EXPECT_EQ(rd_kafka_mock_broker_push_request_error_rtts(mc_, broker, api, 1, err, rtt_ms),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  // The next request of type `api` that any broker receives fails with `err`.
  void push_any(int16_t api, rd_kafka_resp_err_t err) { rd_kafka_mock_push_request_errors(mc_, api, 1, err); }
  // Errors pushed on `broker` for `api` that no request consumed yet.
  size_t pending(int32_t broker, int16_t api) const {
    size_t n = 0;
    EXPECT_EQ(rd_kafka_mock_broker_error_stack_cnt(mc_, broker, api, &n), RD_KAFKA_RESP_ERR_NO_ERROR);
    return n;
  }
  void set_down(int32_t broker) { EXPECT_EQ(rd_kafka_mock_broker_set_down(mc_, broker), RD_KAFKA_RESP_ERR_NO_ERROR); }
  void set_up(int32_t broker) { EXPECT_EQ(rd_kafka_mock_broker_set_up(mc_, broker), RD_KAFKA_RESP_ERR_NO_ERROR); }

 private:
  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
};

// Holds the job back while the test injects, so the job cannot end before the injected errors were consumed:
// 1 ms per 5 records and subtask (the source polls 256 records between mailbox turns: a barrier waits ~50 ms);
// released, the rest of the input runs at full speed. Static: a job's functions are copied into its tasks.
struct Pace {
  static inline std::atomic<bool> held{true};
  static std::string pass(int64_t v) {
    if (held.load() && v % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::to_string(v);
  }
};

// Every commit the sink's committer returned from, per transaction.
struct Commit {
  int32_t committer_attempt;
  int32_t attempt;  // of the writer that pre-committed it: earlier than the committer's when recovered on restore
  int64_t checkpoint;
  int32_t subtask;
  std::string marker;
};
struct Ledger {
  std::mutex mu;
  std::vector<Commit> commits;
  size_t size() {
    std::lock_guard lock(mu);
    return commits.size();
  }
  std::vector<Commit> all() {
    std::lock_guard lock(mu);
    return commits;
  }
};

struct MockRun {
  JobExecutionResult result;
  int32_t restarts = -1;
  std::vector<std::pair<int64_t, int64_t>> recoveries;
  int64_t completed_checkpoints = 0;
  std::vector<Commit> commits;
  std::string log;
  std::string prefix;
};

struct JobControl {
  cluster::CheckpointingJobClient& client;
  Ledger& ledger;
  // Waits until `done` holds, the job ended, or 30 s passed; false (a test failure naming `what`) unless done.
  bool wait_until(const std::function<bool()>& done, const std::string& what) {
    const auto deadline = SteadyClock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (is_globally_terminal(client.status()) || SteadyClock::now() > deadline) {
        ADD_FAILURE() << "the job ended or 30 s passed before " << what;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
};

// Up to ten restarts, 10 ms apart.
Configuration ten_restarts_config() {
  Configuration config;
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "10").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  return config;
}

enum class Coordinators { kHashed, kPinned };

// Runs the job "sequence 0..kRecords-1 -> map (Pace) -> exactly-once Kafka sink" on the mock, with `inject` on the
// test thread while it runs; the pace is released when `inject` returns. kPinned: the coordinator of the first
// ids is broker kCoordinator (else the mock hashes the id onto a broker).
MockRun run_job(MockCluster& mock, const std::string& prefix, Coordinators coordinators,
                const std::function<void(JobControl&)>& inject) {
  MockRun run;
  run.prefix = prefix;
  const std::string dir = ::testing::TempDir() + "kafka-mock-" + prefix;
  std::filesystem::remove_all(dir);
  Configuration config = ten_restarts_config();
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "100ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", dir + "/ck").is_ok());

  KafkaSinkOptions o;
  o.bootstrap_servers = mock.bootstrap();
  o.topic = kDataTopic;
  o.delivery_guarantee = DeliveryGuarantee::kExactlyOnce;
  o.transactional_id_prefix = prefix;
  o.request_timeout_ms = 10000;
  o.marker_topic_partitions = kParallelism;
  o.lingering_checkpoints = 2;
  mock.create_topic(kDataTopic, 2);
  mock.create_topic(prefix + ".markers", kParallelism);  // the mock does not answer CreateTopics
  mock.create_topic(o.claims_topic, 1);  // the job's claim of its prefix runs against the mock's group coordinator
  if (coordinators == Coordinators::kPinned) mock.set_coordinator(prefix, kCoordinator);

  auto ledger = std::make_shared<Ledger>();
  Pace::held = true;
  testing::LogCapture log;
  {
    StreamExecutionEnvironment env(config);
    env.set_parallelism(kParallelism);
    env.from_sequence(0, kRecords - 1)
        .uid("numbers")
        .map([](const int64_t& v) { return Pace::pass(v); })
        .uid("pace")
        .sink_to(HookedSink(o, [ledger](const std::vector<KafkaCommittable>& cs, Committer<KafkaCommittable>& inner,
                                        int32_t committer_attempt) {
          inner.commit(cs);  // an exception fails the task: not recorded
          std::lock_guard lock(ledger->mu);
          for (const auto& c : cs) {
            ledger->commits.push_back(
                {committer_attempt, c.attempt, c.checkpoint_id, c.subtask, internal::marker_value(c)});
          }
        }))
        .uid("kafka-sink");
    auto submitted = env.execute_async("kafka-sink-mock");
    if (!submitted.is_ok()) {
      ADD_FAILURE() << submitted.status().to_string();
      return run;
    }
    auto* client = dynamic_cast<cluster::CheckpointingJobClient*>(submitted->get());
    if (client == nullptr) {
      ADD_FAILURE() << "not a checkpointing job client";
      return run;
    }
    JobControl control{*client, *ledger};
    inject(control);
    Pace::held = false;
    run.result = client->wait();
    run.restarts = client->restarts();
    run.recoveries = client->recoveries();
    run.completed_checkpoints = client->checkpoint_stats().num_completed;
  }
  run.commits = ledger->all();
  run.log = log.text();
  std::filesystem::remove_all(dir);
  return run;
}

// Everything the mock holds in `topic` (all partitions, whatever isolation: the mock has no transaction state).
std::vector<std::string> held_values(MockCluster& mock, const std::string& topic, int32_t partitions) {
  std::vector<std::string> all;
  for (int32_t p = 0; p < partitions; ++p) {
    ReadResult r = read_partition(topic, p, "read_uncommitted", mock.bootstrap());
    all.insert(all.end(), r.values.begin(), r.values.end());
  }
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<std::string> numbers(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  std::sort(v.begin(), v.end());
  return v;
}

void print(const MockRun& run, uint64_t seed) {
  std::printf("seed %llu: %s, %d restarts, %lld checkpoints completed, %zu transactions committed\n",
              static_cast<unsigned long long>(seed), job_status_name(run.result.status), run.restarts,
              static_cast<long long>(run.completed_checkpoints), run.commits.size());
}

// No task failed, and every transaction the sink pre-committed (its marker is in the mock) was committed, once;
// each subtask's committed checkpoints are 1..n without a gap; the mock holds every record once.
void expect_no_failure_and_every_transaction_committed(MockCluster& mock, const MockRun& run) {
  EXPECT_EQ(run.result.status, JobStatus::kFinished) << run.result.error.to_string();
  EXPECT_EQ(run.restarts, 0) << run.log;
  EXPECT_GE(run.completed_checkpoints, 5);
  std::vector<std::string> committed;
  std::map<int32_t, std::vector<int64_t>> per_subtask;
  for (const auto& c : run.commits) {
    committed.push_back(c.marker);
    per_subtask[c.subtask].push_back(c.checkpoint);
  }
  std::sort(committed.begin(), committed.end());
  EXPECT_EQ(std::adjacent_find(committed.begin(), committed.end()), committed.end()) << "a transaction committed twice";
  EXPECT_EQ(held_values(mock, run.prefix + ".markers", kParallelism), committed)
      << "the markers in the mock (pre-committed transactions) differ from the committed transactions";
  EXPECT_EQ(per_subtask.size(), static_cast<size_t>(kParallelism));
  for (auto& [subtask, ids] : per_subtask) {
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(ids[i], static_cast<int64_t>(i) + 1) << "subtask " << subtask << ": a checkpoint's transaction missing";
    }
  }
  EXPECT_EQ(held_values(mock, kDataTopic, 2), numbers(kRecords)) << "a record lost or written twice";
}

// Errors librdkafka retries, in one job, one kind after the other: REQUEST_TIMED_OUT after a delay on
// InitProducerId (the start's fencing and first producers); once some transactions committed, coordinator errors
// on the coordinator's AddPartitionsToTxn and EndTxn (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
// CONCURRENT_TRANSACTIONS, a dropped connection; seeded order and delays) and COORDINATOR_NOT_AVAILABLE on a
// FindCoordinator; REQUEST_TIMED_OUT after a delay on the leader's Produce requests; then coordinator loss: the
// coordinator moves to another broker and its broker goes down for a while.
TEST(KafkaSinkMock, RetriedErrorsFailNoTaskAndEveryTransactionCommits) {
  const uint64_t seed = base_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("seed %llu (SLUICE_KAFKA_MOCK_SEED)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  auto delay = [&] { return 50 + static_cast<int>(rng() % 300); };
  MockCluster mock;
  const std::string prefix = unique_name("mock-retried");
  for (int i = 0; i < 2; ++i) mock.push(kCoordinator, kInitProducerId, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, delay());
  size_t commits_while_down = 0;
  MockRun run = run_job(mock, prefix, Coordinators::kPinned, [&](JobControl& job) {
    const size_t start_after = 2 + rng() % 4;
    if (!job.wait_until([&] { return job.ledger.size() >= start_after; }, "the first commits")) return;
    EXPECT_EQ(mock.pending(kCoordinator, kInitProducerId), 0U) << "no InitProducerId met the injected timeouts";
    std::vector<rd_kafka_resp_err_t> add = {RD_KAFKA_RESP_ERR_NOT_COORDINATOR, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
                                            RD_KAFKA_RESP_ERR__TRANSPORT};
    std::vector<rd_kafka_resp_err_t> end = {RD_KAFKA_RESP_ERR_NOT_COORDINATOR, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
                                            RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, RD_KAFKA_RESP_ERR__TRANSPORT};
    std::shuffle(add.begin(), add.end(), rng);
    std::shuffle(end.begin(), end.end(), rng);
    for (auto e : add) mock.push(kCoordinator, kAddPartitionsToTxn, e, delay());
    for (auto e : end) mock.push(kCoordinator, kEndTxn, e, delay());
    mock.push_any(kFindCoordinator, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE);
    if (!job.wait_until([&] { return mock.pending(kCoordinator, kAddPartitionsToTxn) == 0 &&
                                     mock.pending(kCoordinator, kEndTxn) == 0; },
                        "the coordinator's requests met the injected errors")) {
      return;
    }
    for (int i = 0; i < 3; ++i) mock.push(kLeader, kProduce, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, delay());
    if (!job.wait_until([&] { return mock.pending(kLeader, kProduce) == 0; }, "the Produce requests met the timeouts")) {
      return;
    }
    // Coordinator loss: another broker takes over the pinned ids, the old one goes down until each subtask committed
    // twice more (or 5 s passed: an id created since is not pinned, and the mock may hash it onto that broker).
    const size_t before = job.ledger.size();
    mock.set_coordinator(prefix, kStandbyCoordinator);
    mock.set_down(kCoordinator);
    const auto until = SteadyClock::now() + std::chrono::seconds(5);
    job.wait_until([&] { return job.ledger.size() >= before + 2 * kParallelism || SteadyClock::now() > until; },
                   "commits after the coordinator moved");
    commits_while_down = job.ledger.size() - before;
    mock.set_up(kCoordinator);
  });
  print(run, seed);
  std::printf("  %zu transactions committed while the old coordinator was down\n", commits_while_down);
  expect_no_failure_and_every_transaction_committed(mock, run);
}

// An error that ends a transaction, injected into whichever request of its type comes next.
struct FatalInjection {
  const char* name;
  int16_t api;
  rd_kafka_resp_err_t error;
  const char* expected_text;  // in the task failure's message, besides the transactional id
};

const FatalInjection kFatalInjections[] = {
    {"PRODUCER_FENCED on EndTxn", kEndTxn, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, "fenced"},
    {"INVALID_PRODUCER_EPOCH on EndTxn", kEndTxn, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, "fenced"},
    {"PRODUCER_FENCED on AddPartitionsToTxn", kAddPartitionsToTxn, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, "fenced"},
    {"INVALID_PRODUCER_EPOCH on Produce", kProduce, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, "fenced"},
    {"PRODUCER_FENCED on Produce", kProduce, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, "fences the current one"},
    {"REQUEST_TIMED_OUT on EndTxn", kEndTxn, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, "Request timed out"},
    {"REQUEST_TIMED_OUT on AddPartitionsToTxn", kAddPartitionsToTxn, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, "Purged"},
};

// Each error that ends a transaction, once, in a seeded order, in one job: each fails the task with an error
// naming the transactional id; the restart strategy restarts the job; the restore recovers the restored
// transactions (fences their ids, looks up their markers - on the mock always found - and commits nothing again);
// the new attempt commits transactions of its own before the next injection. The job finishes, and the mock
// holds every record at least once (an open transaction's records stay in its log and are written again after
// the restore: the mock cannot abort them; on the broker read_committed readers see each once).
TEST(KafkaSinkMock, EachFatalErrorFailsTheTaskNamingTheTransactionAndTheJobFinishesAfterRestore) {
  const uint64_t seed = base_seed() + 1;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("seed %llu (SLUICE_KAFKA_MOCK_SEED + 1)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<FatalInjection> order(std::begin(kFatalInjections), std::end(kFatalInjections));
  std::shuffle(order.begin(), order.end(), rng);
  MockCluster mock;
  const std::string prefix = unique_name("mock-fatal");
  MockRun run = run_job(mock, prefix, Coordinators::kHashed, [&](JobControl& job) {
    for (size_t i = 0; i < order.size(); ++i) {
      const int32_t attempt = static_cast<int32_t>(i);
      // Transactions of the current attempt committed: its writers are running.
      const size_t wanted = 1 + rng() % 2;
      if (!job.wait_until([&] {
            size_t n = 0;
            for (const auto& c : job.ledger.all()) n += c.attempt == attempt ? 1 : 0;
            return n >= wanted;
          }, "commits of attempt " + std::to_string(attempt))) {
        return;
      }
      std::printf("  injection %zu: %s\n", i + 1, order[i].name);
      mock.push_any(order[i].api, order[i].error);
      if (!job.wait_until([&] { return job.client.restarts() > attempt; }, std::string("the failure: ") + order[i].name)) {
        return;
      }
    }
    job.wait_until([&] {
      for (const auto& c : job.ledger.all())
        if (c.attempt == static_cast<int32_t>(order.size())) return true;
      return false;
    }, "a commit of the last attempt");
  });
  print(run, seed);
  EXPECT_EQ(run.result.status, JobStatus::kFinished) << run.result.error.to_string();
  EXPECT_EQ(run.restarts, static_cast<int32_t>(order.size())) << run.log;
  ASSERT_EQ(run.recoveries.size(), order.size());
  // The failures, as the job logged them when it handed each to the restart strategy, in order.
  std::vector<std::string> failures;
  for (size_t at = 0; (at = run.log.find("warning: job kafka-sink-mock: ", at)) != std::string::npos;) {
    const size_t end = run.log.find('\n', at);
    failures.push_back(run.log.substr(at, end - at));
    at = end;
  }
  ASSERT_EQ(failures.size(), order.size()) << run.log;
  for (size_t i = 0; i < order.size(); ++i) {
    SCOPED_TRACE(order[i].name);
    std::printf("  %zu. %s -> restored checkpoint %lld\n     %s\n", i + 1, order[i].name,
                static_cast<long long>(run.recoveries[i].first), failures[i].c_str());
    EXPECT_NE(failures[i].find("kafka sink: "), std::string::npos) << failures[i];
    EXPECT_NE(failures[i].find("transactional id " + prefix + "-"), std::string::npos) << failures[i];
    EXPECT_NE(failures[i].find(order[i].expected_text), std::string::npos) << failures[i];
    EXPECT_GE(run.recoveries[i].first, 1) << "restored from no checkpoint";
    // The restore of attempt i+1 recovered transactions of an earlier attempt.
    bool recovered = false;
    for (const auto& c : run.commits) recovered = recovered || (c.committer_attempt == static_cast<int32_t>(i) + 1 && c.attempt <= static_cast<int32_t>(i));
    EXPECT_TRUE(recovered) << "no restored transaction went through the restore's recovery";
  }
  std::vector<std::string> values = held_values(mock, kDataTopic, 2);
  EXPECT_GE(values.size(), static_cast<size_t>(kRecords));
  values.erase(std::unique(values.begin(), values.end()), values.end());
  EXPECT_EQ(values, numbers(kRecords)) << "a record is missing";
  // Every committed transaction's marker is in the mock, once: found on restore, so not written again.
  const std::vector<std::string> markers = held_values(mock, prefix + ".markers", kParallelism);
  for (const auto& c : run.commits) EXPECT_EQ(std::count(markers.begin(), markers.end(), c.marker), 1) << c.marker;
}

// A Produce request fenced inside a transaction puts it in an abortable state: whether the refusal reaches the
// writer as the failed records' delivery report or as the next record refused, the error names the broker's cause
// (not just librdkafka's "Producing not allowed in transactional state").
TEST(KafkaSinkMockFatal, ARecordRefusedAfterAFencedProduceNamesTheCause) {
  MockCluster mock;
  mock.create_topic(kDataTopic, 2);
  KafkaSinkOptions options;
  options.bootstrap_servers = mock.bootstrap();
  options.topic = kDataTopic;
  options.request_timeout_ms = 10'000;
  internal::Producer producer(options, unique_name("fenced-produce"), "fenced-produce-test");
  producer.init_transactions();
  producer.begin_transaction();
  mock.push(kLeader, kProduce, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, 0);
  std::string error;
  const auto give_up = SteadyClock::now() + std::chrono::seconds(20);
  for (int i = 0; error.empty() && SteadyClock::now() < give_up; ++i) {
    try {
      KafkaProducerRecord record;
      record.value = std::to_string(i);
      producer.produce(record);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  }
  ASSERT_FALSE(error.empty()) << "no record was refused within 20 s of the fenced Produce";
  std::printf("refused: %s\n", error.c_str());
  EXPECT_NE(error.find("fences the current one"), std::string::npos) << error;
  EXPECT_NE(error.find("transactional id fenced-produce"), std::string::npos) << error;
}

// A sink configuration that no restart can fix, met when the writers start: the job fails at once with
// InvalidArgument, whatever restart attempts are left (docs/safety.md, failure classes).
TEST(KafkaSinkConfigErrors, FailTheJobAtOnceInsteadOfRestarting) {
  MockCluster mock;
  mock.create_topic(kDataTopic, 2);
  const std::string prefix = "config-errors";
  mock.create_topic(prefix + ".markers", kParallelism);  // the mock does not answer CreateTopics
  struct Case {
    const char* name;
    std::function<void(KafkaSinkOptions&)> edit;
    std::string expected;
  };
  const Case cases[] = {
      {"an exactly-once sink without a prefix (and no claim to refuse it at submission)",
       [](KafkaSinkOptions& o) {
         o.transactional_id_prefix = "";
         o.claims_topic = "";
       },
       "needs a transactional_id_prefix"},
      {"a property librdkafka refuses", [](KafkaSinkOptions& o) { o.properties["linger.ms"] = "soon"; },
       "property linger.ms=soon"},
      {"an at-least-once sink without a topic",
       [](KafkaSinkOptions& o) {
         o.delivery_guarantee = DeliveryGuarantee::kAtLeastOnce;
         o.topic = "";
       },
       "a record has no topic"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Configuration config = ten_restarts_config();
    KafkaSinkOptions o;
    o.bootstrap_servers = mock.bootstrap();
    o.topic = kDataTopic;
    o.delivery_guarantee = DeliveryGuarantee::kExactlyOnce;
    o.transactional_id_prefix = prefix;
    o.claims_topic = "";
    c.edit(o);
    StreamExecutionEnvironment env(config);
    env.set_parallelism(kParallelism);
    auto encode = [](const int64_t& v, KafkaProducerRecord& out) { out.value = std::to_string(v); };
    env.from_sequence(0, 99).uid("numbers").sink_to(KafkaSink<int64_t, decltype(encode)>(o, encode)).uid("kafka-sink");
    auto submitted = env.execute_async("kafka-config-errors");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    auto* client = dynamic_cast<cluster::CheckpointingJobClient*>(submitted->get());
    ASSERT_NE(client, nullptr);
    const JobExecutionResult r = client->wait();
    EXPECT_EQ(r.status, JobStatus::kFailed);
    EXPECT_EQ(r.error.code(), StatusCode::kInvalidArgument) << r.error.to_string();
    EXPECT_NE(r.error.message().find(c.expected), std::string::npos) << r.error.to_string();
    EXPECT_EQ(client->restarts(), 0) << r.error.to_string();
  }
}

}  // namespace
}  // namespace sluice::kafka
