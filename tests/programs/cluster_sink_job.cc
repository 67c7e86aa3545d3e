// A `from_args` program for the cluster-mode tests of the two-phase-commit sinks other than the file sink
// (tests/integration/cluster_sinks_test.sh; docs/cluster.md): a bounded keyed job - a running count per key - whose
// output goes through the exactly-once Kafka sink or the PostgreSQL two-phase-commit sink, and whose committed
// output is checked against the failure-free result computed from the input.
//
//   cluster_sink_job prepare WORKLOAD SINK      creates the input topic (and fills it) / the output topic / table
//   cluster_sink_job run WORKLOAD SINK [--verify] [--checkpoint-dir DIR] [--role ...] [--kill-at POINT[@CHECKPOINT]]
//                        [-D key=value ...]
//
// WORKLOAD: --source kafka|generator --records N --keys K --seed S --rate R (records per second for the whole
//   job, 0: unlimited) -p P, and for --source kafka: --bootstrap HOST:PORT --input-topic T --partitions N.
// SINK: --sink kafka --bootstrap HOST:PORT --output-topic T --prefix P (the transactional-id prefix), or
//   --sink postgres --conninfo C --table T --prefix P (the transaction prefix).
//
// The input: record i (0 <= i < N) belongs to group g(i) - for a Kafka source the partition it is written to
// (seeded), for the generator the split of the source subtask that emits it - and its key is g + G * h(i), G the
// number of groups, so every key's records come from one group, in index order. The job emits "key,index,count"
// per record (count: the key's records up to this one), so the failure-free output is one known line per record
// whatever the interleaving of the groups: committed output equals it exactly when every record was counted and
// written once (a duplicate shows as a repeated line, a loss as a missing one and shifted counts).
//
// A TaskManager runs as `sluice demo`'s do (tools/sluice/task_manager_run.h), with --kill-at: the first of its
// subtasks to reach that failure point kills the process (SIGKILL). `run --verify` (given to the JobManager) reads the committed output once the job FINISHED - the output topic with
// isolation.level=read_committed through librdkafka, or the table through libpqxx, never through the connector
// under test - compares it with the expectation, checks that no transaction of the job is left open or prepared,
// and prints "verified: OK" or what differs (exit 1). The JobManager prints "checkpoints: C completed, F failed;
// R restarts; restored from: ...", which tests/integration/cluster_lib.sh reads as it reads `sluice demo`'s.
#include <librdkafka/rdkafka.h>

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/mini_cluster.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/options.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "sluice/sluice.h"
#include "task_manager_run.h"  // tools/sluice: how `sluice` runs a TaskManager

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kJobName = "cluster-sink-job";

// ---- the workload -------------------------------------------------------------------------------------------

struct Workload {
  std::string source = "generator";  // kafka | generator
  int64_t records = 40000;
  int64_t keys = 64;
  uint64_t seed = 1;
  double rate = 8000;  // records per second, whole job; 0 = unlimited
  int32_t parallelism = 2;
  std::string bootstrap;
  std::string input_topic;
  int32_t partitions = 4;

  int64_t groups() const { return source == "kafka" ? partitions : parallelism; }
  static uint64_t mix(uint64_t x) {  // splitmix64's finalizer: a fixed, well-spread hash of the index
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // The group of record i: a seeded partition, or the generator split that holds i (IndexRangeEnumerator cuts
  // [0, N) into `parallelism` contiguous ranges, floor(N * j / p) .. floor(N * (j + 1) / p)).
  int64_t group(int64_t i) const {
    if (source == "kafka") return static_cast<int64_t>(mix(seed * 2 + 1 + static_cast<uint64_t>(i) * 7919) % static_cast<uint64_t>(partitions));
    const int64_t p = parallelism;
    auto boundary = [&](int64_t j) { return (records / p) * j + (records % p) * j / p; };  // as the enumerator's
    int64_t g = 0;
    while (g + 1 < p && boundary(g + 1) <= i) ++g;
    return g;
  }
  int64_t key(int64_t i) const {
    const int64_t g = groups();
    const int64_t per_group = std::max<int64_t>(1, keys / g);
    return group(i) + g * static_cast<int64_t>(mix(seed ^ (static_cast<uint64_t>(i) << 1)) % static_cast<uint64_t>(per_group));
  }
  // The failure-free output: one "key,index,count" line per record.
  std::multiset<std::string> expected() const {
    std::map<int64_t, int64_t> count;
    std::multiset<std::string> out;
    for (int64_t i = 0; i < records; ++i) {
      const int64_t k = key(i);
      out.insert(std::to_string(k) + "," + std::to_string(i) + "," + std::to_string(++count[k]));
    }
    return out;
  }
};

struct SinkTarget {
  std::string kind;  // kafka | postgres
  std::string bootstrap;
  std::string output_topic;
  std::string conninfo;
  std::string table;
  std::string prefix;
};

struct Input {
  int64_t key = 0;
  int64_t index = 0;
  SLUICE_FIELDS(Input, key, index)
};

struct Update {
  int64_t key = 0;
  int64_t index = 0;
  int64_t count = 0;
  SLUICE_FIELDS(Update, key, index, count)
  std::string line() const { return std::to_string(key) + "," + std::to_string(index) + "," + std::to_string(count); }
};

// "key,index" (the Kafka input's values) -> Input; false for anything else (fails the job: the input is ours).
bool parse_input(std::string_view v, Input& out) {
  const size_t comma = v.find(',');
  if (comma == std::string_view::npos) return false;
  try {
    out.key = std::stoll(std::string(v.substr(0, comma)));
    out.index = std::stoll(std::string(v.substr(comma + 1)));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

struct InputDeserializer {
  bool operator()(const sluice::kafka::KafkaRecordView& v, Input& out) const {
    if (!parse_input(v.value, out)) throw std::runtime_error("input record '" + std::string(v.value) + "' is not 'key,index'");
    return true;
  }
};

// Paces its subtask at `rate / parallelism` records per second (the task's clock), so the job runs long enough for a
// TaskManager to be killed while it runs; records pass unchanged.
class Throttle final : public sluice::ProcessFunction<Input, Input> {
 public:
  explicit Throttle(double rate) : rate_(rate) {}
  void open(sluice::RuntimeContext& ctx) override {
    ProcessFunction::open(ctx);
    per_subtask_ = rate_ / ctx.parallelism();
    clock_ = &ctx.clock();
  }
  void process_element(const Input& in, sluice::ProcessContext&, sluice::Collector<Input>& out) override {
    if (per_subtask_ > 0) {
      const int64_t now = clock_->monotonic_ns();
      if (start_ns_ < 0) start_ns_ = now;
      const auto due = start_ns_ + static_cast<int64_t>(static_cast<double>(emitted_) * 1e9 / per_subtask_);
      if (due - now > 1'000'000) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
      ++emitted_;
    }
    out.collect(in);
  }

 private:
  double rate_;
  double per_subtask_ = 0;
  const sluice::Clock* clock_ = nullptr;
  int64_t start_ns_ = -1;
  int64_t emitted_ = 0;
};

class RunningCount final : public sluice::KeyedProcessFunction<int64_t, Input, Update> {
 public:
  void open(sluice::RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(sluice::ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const Input& in, sluice::KeyedProcessContext<int64_t>&, sluice::Collector<Update>& out) override {
    const int64_t n = count_->value().value_or(0) + 1;
    count_->update(n);
    out.collect(Update{in.key, in.index, n});
  }

 private:
  sluice::ValueState<int64_t>* count_ = nullptr;
};

// ---- command line -------------------------------------------------------------------------------------------

struct Args {
  std::string command;
  Workload workload;
  SinkTarget sink;
  std::string checkpoint_dir;
  bool verify = false;
  std::string kill_at;  // TaskManager: POINT[@CHECKPOINT] (runtime/fault_injection.h), as `sluice demo --kill-at`
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr, "cluster_sink_job: %s\nusage: cluster_sink_job prepare|run --source kafka|generator --records N "
               "--keys K --seed S --rate R -p P [--bootstrap B --input-topic T --partitions N] --sink kafka|postgres "
               "[--output-topic T] [--conninfo C --table T] --prefix P [--checkpoint-dir DIR] [--verify] "
               "[--role ROLE] [--kill-at POINT[@CHECKPOINT]] [-D key=value ...]\n",
               problem.c_str());
  std::exit(2);
}

// `rest`: what sluice::parse_program_args left of the command line (Sluice's own flags are gone).
Args parse_args(const std::vector<std::string>& rest) {
  if (rest.empty()) usage("no command");
  Args a;
  a.command = rest[0];
  if (a.command != "prepare" && a.command != "run") usage("unknown command '" + a.command + "'");
  for (size_t i = 1; i < rest.size(); ++i) {
    const std::string f = rest[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= rest.size()) usage(f + ": expected a value after it");
      return rest[++i];
    };
    auto number = [&]() -> int64_t {
      const std::string v = value();
      try {
        return std::stoll(v);
      } catch (const std::exception&) {
        usage(f + ": '" + v + "' is not a number");
      }
    };
    if (f == "--source") a.workload.source = value();
    else if (f == "--records") a.workload.records = number();
    else if (f == "--keys") a.workload.keys = number();
    else if (f == "--seed") a.workload.seed = static_cast<uint64_t>(number());
    else if (f == "--rate") a.workload.rate = static_cast<double>(number());
    else if (f == "-p") a.workload.parallelism = static_cast<int32_t>(number());
    else if (f == "--bootstrap") a.workload.bootstrap = a.sink.bootstrap = value();
    else if (f == "--input-topic") a.workload.input_topic = value();
    else if (f == "--partitions") a.workload.partitions = static_cast<int32_t>(number());
    else if (f == "--sink") a.sink.kind = value();
    else if (f == "--output-topic") a.sink.output_topic = value();
    else if (f == "--conninfo") a.sink.conninfo = value();
    else if (f == "--table") a.sink.table = value();
    else if (f == "--prefix") a.sink.prefix = value();
    else if (f == "--checkpoint-dir") a.checkpoint_dir = value();
    else if (f == "--verify") a.verify = true;
    else if (f == "--kill-at") a.kill_at = value();
    else usage("unknown argument '" + f + "'");
  }
  const Workload& w = a.workload;
  if (w.source != "kafka" && w.source != "generator") usage("--source must be kafka or generator");
  if (w.records < 1 || w.keys < 1 || w.parallelism < 1 || w.partitions < 1) usage("records, keys, -p and partitions must be >= 1");
  if (w.source == "kafka" && (w.bootstrap.empty() || w.input_topic.empty())) usage("--source kafka needs --bootstrap and --input-topic");
  if (a.sink.kind == "kafka" && (a.sink.bootstrap.empty() || a.sink.output_topic.empty())) usage("--sink kafka needs --bootstrap and --output-topic");
  if (a.sink.kind == "postgres" && (a.sink.conninfo.empty() || a.sink.table.empty())) usage("--sink postgres needs --conninfo and --table");
  if (a.sink.kind != "kafka" && a.sink.kind != "postgres") usage("--sink must be kafka or postgres");
  if (a.sink.prefix.empty()) usage("--prefix is required");
  return a;
}

// ---- librdkafka and libpqxx, directly (the checks must not depend on the connectors they check) -------------

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

KafkaPtr kafka_client(rd_kafka_type_t type, const std::string& bootstrap,
                      const std::vector<std::pair<std::string, std::string>>& props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(k + "=" + v + ": " + err);
    }
  }
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("bootstrap.servers: ") + err);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("rd_kafka_new: ") + err);
  }
  return KafkaPtr(rk);
}

void create_topic(const std::string& bootstrap, const std::string& topic, int32_t partitions) {
  KafkaPtr admin = kafka_client(RD_KAFKA_PRODUCER, bootstrap, {});
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  if (nt == nullptr) throw std::runtime_error(topic + ": " + err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin.get());
  rd_kafka_CreateTopics(admin.get(), &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  std::string problem;
  if (ev == nullptr) {
    problem = "no answer in 30 s";
  } else if (const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev); res == nullptr) {
    problem = rd_kafka_event_error_string(ev);
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
    if (n != 1 || rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      problem = n == 1 ? rd_kafka_topic_result_error_string(tr[0]) : "no result";
    }
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  if (!problem.empty()) throw std::runtime_error("creating topic " + topic + ": " + problem);
}

// Writes the input: record i as "key,index" to partition group(i), in index order, idempotently (a retried request
// cannot reorder a partition's records).
void fill_input(const Workload& w) {
  create_topic(w.bootstrap, w.input_topic, w.partitions);
  KafkaPtr p = kafka_client(RD_KAFKA_PRODUCER, w.bootstrap, {{"enable.idempotence", "true"}, {"acks", "all"}, {"linger.ms", "5"}});
  for (int64_t i = 0; i < w.records; ++i) {
    const std::string value = std::to_string(w.key(i)) + "," + std::to_string(i);
    const std::string topic = w.input_topic;
    // rd_kafka_produceva, not the RD_KAFKA_V_* macros of rd_kafka_producev (they expand to C casts).
    rd_kafka_vu_t vus[4];
    vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    vus[0].u.cstr = topic.c_str();
    vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    vus[1].u.i32 = static_cast<int32_t>(w.group(i));
    vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[2].u.mem.ptr = const_cast<char*>(value.data());
    vus[2].u.mem.size = value.size();
    vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[3].u.i = RD_KAFKA_MSG_F_COPY;
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(p.get(), vus, 4);
      if (error == nullptr) break;
      const rd_kafka_resp_err_t err = rd_kafka_error_code(error);
      const std::string text = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) throw std::runtime_error("produce: " + text);
      rd_kafka_poll(p.get(), 10);
    }
    rd_kafka_poll(p.get(), 0);
  }
  if (rd_kafka_flush(p.get(), 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("flush: not every input record was delivered in 60 s");
  if (const rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(p.get(), nullptr, 0); fatal != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error(std::string("producer: ") + rd_kafka_err2str(fatal));
  }
}

int32_t partition_count(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 10000);
  rd_kafka_topic_destroy(t);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("metadata of " + topic + ": " + rd_kafka_err2str(err));
  const int32_t n = md->topic_cnt == 1 ? md->topics[0].partition_cnt : 0;
  rd_kafka_metadata_destroy(md);
  return n;
}

// Every value of every partition of `topic` with `isolation`, read from the beginning to each partition's end.
std::vector<std::string> read_topic(const std::string& bootstrap, const std::string& topic, const char* isolation) {
  KafkaPtr c = kafka_client(RD_KAFKA_CONSUMER, bootstrap,
                            {{"group.id", "cluster-sink-job-check"}, {"isolation.level", isolation},
                             {"enable.partition.eof", "true"}, {"enable.auto.commit", "false"}, {"fetch.wait.max.ms", "50"}});
  const int32_t partitions = partition_count(c.get(), topic);
  if (partitions < 1) throw std::runtime_error("topic " + topic + " has no partitions");
  rd_kafka_topic_partition_list_t* tps = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(tps, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(c.get(), tps);
  rd_kafka_topic_partition_list_destroy(tps);
  std::set<int32_t> ended;
  std::vector<std::string> values;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (static_cast<int32_t>(ended.size()) < partitions) {
    if (Clock::now() > deadline) throw std::runtime_error("reading " + topic + ": no end of every partition within 60 s");
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ended.insert(m->partition);
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string e = rd_kafka_message_errstr(m);
      rd_kafka_message_destroy(m);
      throw std::runtime_error("reading " + topic + ": " + e);
    } else {
      values.emplace_back(static_cast<const char*>(m->payload), m->len);
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(c.get());
  return values;
}

// Partitions of `topic` whose last stable offset stays below the high watermark for 10 s: a transaction left open
// (it holds back every read_committed reader until the broker's transaction.timeout.ms aborts it). The markers of a
// transaction just committed land shortly after its EndTxn (KIP-98): hence the wait.
std::vector<std::string> open_transactions(const std::string& bootstrap, const std::string& topic) {
  KafkaPtr committed = kafka_client(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", "cluster-sink-job-check"}, {"isolation.level", "read_committed"}});
  KafkaPtr uncommitted = kafka_client(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", "cluster-sink-job-check"}, {"isolation.level", "read_uncommitted"}});
  const int32_t partitions = partition_count(committed.get(), topic);
  std::vector<std::string> open;
  for (int32_t p = 0; p < partitions; ++p) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      int64_t low = 0, lso = 0, hw = 0;
      rd_kafka_resp_err_t e1 = rd_kafka_query_watermark_offsets(committed.get(), topic.c_str(), p, &low, &lso, 10000);
      rd_kafka_resp_err_t e2 = rd_kafka_query_watermark_offsets(uncommitted.get(), topic.c_str(), p, &low, &hw, 10000);
      if (e1 != RD_KAFKA_RESP_ERR_NO_ERROR || e2 != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw std::runtime_error("watermarks of " + topic + ": " + rd_kafka_err2str(e1 != RD_KAFKA_RESP_ERR_NO_ERROR ? e1 : e2));
      }
      if (lso == hw) break;
      if (Clock::now() > deadline) {
        open.push_back(topic + "-" + std::to_string(p) + " (last stable offset " + std::to_string(lso) +
                       ", high watermark " + std::to_string(hw) + ")");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return open;
}

std::string quoted_name(const std::string& name) { return "\"" + name + "\""; }

void create_table(const SinkTarget& s) {
  pqxx::connection c(s.conninfo);
  pqxx::nontransaction tx(c);
  tx.exec("DROP TABLE IF EXISTS " + quoted_name(s.table));
  // No unique key: a duplicate must show as a second row, not as a failed insert that a restart hides.
  tx.exec("CREATE TABLE " + quoted_name(s.table) + " (k bigint NOT NULL, i bigint NOT NULL, n bigint NOT NULL)");
}

// ---- prepare / run / verify ---------------------------------------------------------------------------------

int prepare(const Args& a) {
  if (a.workload.source == "kafka") {
    fill_input(a.workload);
    std::printf("input: %lld records in %s (%d partitions)\n", static_cast<long long>(a.workload.records),
                a.workload.input_topic.c_str(), a.workload.partitions);
  }
  if (a.sink.kind == "kafka") {
    create_topic(a.sink.bootstrap, a.sink.output_topic, 2);
    std::printf("output: topic %s (2 partitions)\n", a.sink.output_topic.c_str());
  } else {
    create_table(a.sink);
    std::printf("output: table %s\n", a.sink.table.c_str());
  }
  return 0;
}

// Compares committed output with the expectation; prints what differs. True when equal.
bool compare(const std::multiset<std::string>& expected, const std::vector<std::string>& committed) {
  std::map<std::string, int64_t> diff;  // line -> committed copies minus expected copies
  for (const auto& l : expected) --diff[l];
  for (const auto& l : committed) ++diff[l];
  int64_t missing = 0, extra = 0;
  std::vector<std::string> examples;
  for (const auto& [line, d] : diff) {
    if (d == 0) continue;
    (d < 0 ? missing : extra) += d < 0 ? -d : d;
    if (examples.size() < 10) examples.push_back((d < 0 ? "missing '" : "extra '") + line + "' x" + std::to_string(d < 0 ? -d : d));
  }
  if (missing == 0 && extra == 0) return true;
  std::printf("verified: FAILED: %zu lines committed, %zu expected; %lld missing, %lld extra (duplicates or wrong counts)\n",
              committed.size(), expected.size(), static_cast<long long>(missing), static_cast<long long>(extra));
  for (const auto& e : examples) std::printf("  %s\n", e.c_str());
  return false;
}

bool verify(const Args& a) {
  const std::multiset<std::string> expected = a.workload.expected();
  if (a.sink.kind == "kafka") {
    const std::vector<std::string> committed = read_topic(a.sink.bootstrap, a.sink.output_topic, "read_committed");
    const size_t all = read_topic(a.sink.bootstrap, a.sink.output_topic, "read_uncommitted").size();
    if (!compare(expected, committed)) return false;
    const std::vector<std::string> open = open_transactions(a.sink.bootstrap, a.sink.output_topic);
    if (!open.empty()) {
      std::printf("verified: FAILED: a transaction is left open on");
      for (const auto& o : open) std::printf(" %s", o.c_str());
      std::printf("\n");
      return false;
    }
    std::printf("verified: OK: %zu records exactly once (read_committed); read_uncommitted also sees %zu aborted\n",
                committed.size(), all - committed.size());
    return true;
  }
  pqxx::connection c(a.sink.conninfo);
  pqxx::nontransaction tx(c);
  std::vector<std::string> committed;
  for (const auto& r : tx.exec("SELECT k, i, n FROM " + quoted_name(a.sink.table))) {
    committed.push_back(std::string(r[0].c_str()) + "," + r[1].c_str() + "," + r[2].c_str());
  }
  if (!compare(expected, committed)) return false;
  const pqxx::result prepared = tx.exec("SELECT gid FROM pg_prepared_xacts WHERE left(gid, " + std::to_string(a.sink.prefix.size() + 1) +
                                        ") = " + tx.quote(a.sink.prefix + ":"));
  if (!prepared.empty()) {
    std::printf("verified: FAILED: %zu prepared transactions left, e.g. %s\n", prepared.size(), prepared[0][0].c_str());
    return false;
  }
  std::printf("verified: OK: %zu rows exactly once; no prepared transaction left\n", committed.size());
  return true;
}

void build_job(sluice::StreamExecutionEnvironment& env, const Args& a) {
  const Workload& w = a.workload;
  env.set_parallelism(w.parallelism);
  // The workload decides what the output means: part of the JobGraph fingerprint, so a TaskManager started with
  // another one is refused (docs/cluster.md).
  env.set_job_property("source", w.source);
  env.set_job_property("records", std::to_string(w.records));
  env.set_job_property("keys", std::to_string(w.keys));
  env.set_job_property("seed", std::to_string(w.seed));
  env.set_job_property("sink", a.sink.kind);
  sluice::DataStream<Input> input = [&] {
    if (w.source == "kafka") {
      sluice::kafka::KafkaSourceOptions o;
      o.bootstrap_servers = w.bootstrap;
      o.topics = {w.input_topic};
      o.group_id = a.sink.prefix + "-source";
      o.boundedness = sluice::Boundedness::kBounded;
      return env.from_source(sluice::kafka::make_kafka_source<Input>(o, InputDeserializer{}), "input").uid("input");
    }
    return env.from_source(sluice::GeneratorSource<Input, std::function<Input(int64_t)>>(
                               w.records, [w](int64_t i) { return Input{w.key(i), i}; }),
                           "input")
        .uid("input");
  }();
  auto counts = input.process(Throttle(w.rate))
                    .name("throttle")
                    .uid("throttle")
                    .key_by([](const Input& in) { return in.key; })
                    .process(RunningCount{})
                    .name("running-count")
                    .uid("running-count");
  if (a.sink.kind == "kafka") {
    sluice::kafka::KafkaSinkOptions o;
    o.bootstrap_servers = a.sink.bootstrap;
    o.topic = a.sink.output_topic;
    o.delivery_guarantee = sluice::kafka::DeliveryGuarantee::kExactlyOnce;
    o.transactional_id_prefix = a.sink.prefix;
    // The test broker's transaction.max.timeout.ms: a transaction the job leaves open is never aborted by the broker
    // while the test runs, so verify() sees it (it holds back read_committed readers) instead of its timeout hiding it.
    o.transaction_timeout_ms = 600000;
    counts
        .sink_to(sluice::kafka::make_kafka_sink<Update>(o, [](const Update& u, sluice::kafka::KafkaProducerRecord& r) {
          r.key = std::to_string(u.key);
          r.has_key = true;
          r.value = u.line();
        }))
        .name("kafka-sink")
        .uid("kafka-sink");
  } else {
    sluice::postgres::PostgresTwoPhaseCommitSinkOptions o;
    o.connection.conninfo = a.sink.conninfo;
    o.table = {.table = a.sink.table, .columns = {"k", "i", "n"}, .key_columns = {}, .mode = sluice::postgres::WriteMode::kInsert};
    o.transaction_id_prefix = a.sink.prefix;
    counts
        .sink_to(sluice::postgres::PostgresTwoPhaseCommitSink<Update>(o, [](const Update& u, sluice::postgres::Row& row) {
          row.push_back(std::to_string(u.key));
          row.push_back(std::to_string(u.index));
          row.push_back(std::to_string(u.count));
        }))
        .name("postgres-sink")
        .uid("postgres-sink");
  }
}

int run(sluice::StreamExecutionEnvironment* env, const Args& a) {
  sluice::Configuration& config = env->configuration();
  if (!config.contains(sluice::options::kCheckpointingInterval.key)) {
    (void)config.try_set(sluice::options::kCheckpointingInterval, std::chrono::milliseconds(100));
  }
  if (!config.contains(sluice::options::kCheckpointingTimeout.key)) {
    // Below the Kafka sink's transaction.timeout.ms (the test broker's 10 min maximum) with the restart delay, so the
    // job's settings cannot let the broker abort a transaction before its checkpoint commits it (docs/kafka.md).
    (void)config.try_set(sluice::options::kCheckpointingTimeout, std::chrono::milliseconds(60000));
  }
  if (!a.checkpoint_dir.empty()) (void)config.try_set(sluice::options::kCheckpointsDirectory, a.checkpoint_dir);
  build_job(*env, a);
  if (config.get(sluice::options::kProcessRole) == sluice::ProcessRole::kTaskManager) {
    // As `sluice demo` runs its TaskManagers: --kill-at, and "TaskManager ended: job STATUS" at the end.
    return sluice::cli::run_task_manager(*env, kJobName, a.kill_at);
  }
  if (!a.kill_at.empty()) usage("--kill-at is for a TaskManager (--role taskmanager)");
  auto client = env->execute_async(kJobName);
  if (!client.is_ok()) {
    std::fprintf(stderr, "%s\n", client.status().to_string().c_str());
    return 2;
  }
  const sluice::JobExecutionResult result = (*client)->wait();
  std::printf("job %s: %s in %lld ms\n", result.job_id.to_hex().c_str(), sluice::job_status_name(result.status),
              static_cast<long long>(result.runtime_ms));
  if (const auto* cp = dynamic_cast<const sluice::cluster::CheckpointingJobClient*>(client->get())) {
    const auto stats = cp->checkpoint_stats();
    std::printf("checkpoints: %lld completed, %lld failed; %d restarts; restored from:",
                static_cast<long long>(stats.num_completed), static_cast<long long>(stats.num_failed), cp->restarts());
    for (const auto& [checkpoint, ms] : cp->recoveries()) std::printf(" %lld (%lld ms)", static_cast<long long>(checkpoint), static_cast<long long>(ms));
    std::printf("\n");
  }
  std::fflush(stdout);
  if (!result.error.is_ok()) std::fprintf(stderr, "%s\n", result.error.to_string().c_str());
  if (result.status != sluice::JobStatus::kFinished) return 1;
  if (a.verify && !verify(a)) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto program_args = sluice::parse_program_args(argc, argv);
  if (!program_args.is_ok()) {
    std::fprintf(stderr, "%s\n", program_args.status().to_string().c_str());
    return 2;
  }
  const Args a = parse_args(program_args->remaining);
  try {
    return a.command == "prepare" ? prepare(a) : run(&program_args->env, a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cluster_sink_job %s: %s\n", a.command.c_str(), e.what());
    return 2;
  }
}
