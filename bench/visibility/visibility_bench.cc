// Visibility delay of each exactly-once sink: from a record's production in the source to
// the moment a reader of the sink's target can read it. Transactional sinks make output readable only when its
// checkpoint completes - the cost of transactional writes (docs/guarantees.md); the idempotent upsert sink, for
// comparison, is readable as soon as it flushes (at each barrier). Prints one JSON object on stdout. README.md.
#include <librdkafka/rdkafka.h>

#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "../common/bench_util.h"
#include "../common/kafka_bench_util.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "sluice/connectors/postgres/postgres_upsert_sink.h"
#include "sluice/sluice.h"

namespace {

using namespace sluice;

struct Stamped {
  int64_t index = 0;
  int64_t produced_us = 0;  // system clock, microseconds since the epoch
  SLUICE_FIELDS(Stamped, index, produced_us)
};

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Flags {
  int64_t records = 20'000;
  int64_t rate = 5'000;  // records per second
  int64_t interval_ms = 200;
  std::string pg_conninfo, bootstrap, work_dir;
};

// A reader of a target: returns the records that became readable since its last call (index, produced_us).
using Poll = std::function<std::vector<Stamped>()>;

// Runs the job with `add_sink`, polls the target every millisecond, and summarises (visible - produced) in ms.
nlohmann::json measure(const Flags& f, const std::string& name,
                       const std::function<void(DataStream<Stamped>&)>& add_sink, const Poll& poll) {
  Configuration config;
  (void)config.set_string("execution.checkpointing.interval", std::to_string(f.interval_ms) + "ms");
  (void)config.set_string("execution.checkpointing.dir", f.work_dir + "/" + name + "-checkpoints");
  (void)config.set_string("execution.buffer-timeout.interval", "1ms");
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  auto stream = env.from_generator(f.records, [](int64_t i) { return Stamped{i, now_us()}; },
                                   static_cast<double>(f.rate));
  stream.uid("numbers");
  add_sink(stream);
  auto client = env.execute_async("visibility-" + name);
  if (!client.is_ok()) throw std::runtime_error(client.status().to_string());
  std::vector<double> delays_ms;
  std::set<int64_t> seen;
  auto take = [&] {
    const int64_t t = now_us();
    for (const auto& r : poll()) {
      if (seen.insert(r.index).second) delays_ms.push_back(static_cast<double>(t - r.produced_us) / 1000.0);
    }
  };
  while (!is_globally_terminal((*client)->status())) {
    take();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto result = (*client)->wait();
  take();
  if (result.status != JobStatus::kFinished) throw std::runtime_error(name + ": the job " + job_status_name(result.status));
  std::sort(delays_ms.begin(), delays_ms.end());
  auto q = [&](double p) {
    return delays_ms.empty() ? 0.0 : delays_ms[std::min(delays_ms.size() - 1, static_cast<size_t>(p * static_cast<double>(delays_ms.size())))];
  };
  double sum = 0;
  for (double d : delays_ms) sum += d;
  std::fprintf(stderr, "%s: %zu records readable, p50 %.1f ms, p99 %.1f ms\n", name.c_str(), delays_ms.size(), q(0.5), q(0.99));
  return {{"records_readable", delays_ms.size()},
          {"records", f.records},
          {"mean_ms", delays_ms.empty() ? 0.0 : sum / static_cast<double>(delays_ms.size())},
          {"p50_ms", q(0.5)},
          {"p90_ms", q(0.9)},
          {"p99_ms", q(0.99)},
          {"max_ms", delays_ms.empty() ? 0.0 : delays_ms.back()}};
}

void encode_line(const Stamped& s, std::string& out) { out += std::to_string(s.index) + "," + std::to_string(s.produced_us); }

nlohmann::json files_case(const Flags& f) {
  const std::string dir = f.work_dir + "/files-out";
  std::filesystem::create_directories(dir);
  std::set<std::string> read_files;
  return measure(
      f, "transactional_file_sink",
      [&](DataStream<Stamped>& s) {  // rolling at every checkpoint: visible one checkpoint after it was written
        s.sink_to(file::TransactionalFileSink<Stamped>(dir, encode_line, file::RollingPolicy::on_checkpoint())).uid("sink");
      },
      [&] {
        std::vector<Stamped> out;
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
          const std::string n = e.path().filename().string();
          if (n[0] == '.' || !read_files.insert(n).second) continue;  // committed files appear whole (rename)
          std::ifstream in(e.path());
          std::string line;
          while (std::getline(in, line)) {
            const size_t c = line.find(',');
            out.push_back({std::stoll(line.substr(0, c)), std::stoll(line.substr(c + 1))});
          }
        }
        return out;
      });
}

void pg_exec(const std::string& conninfo, const std::string& sql) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  tx.exec(sql);
}

nlohmann::json postgres_case(const Flags& f, bool two_phase) {
  const std::string table = two_phase ? "bench_visibility_2pc" : "bench_visibility_upsert";
  pg_exec(f.pg_conninfo, "DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
                             " (id bigint PRIMARY KEY, produced bigint NOT NULL)");
  postgres::PostgresTableOptions t{table, {"id", "produced"}, {"id"}, postgres::WriteMode::kUpsert};
  auto encode = [](const Stamped& s, postgres::Row& row) {
    row.push_back(std::to_string(s.index));
    row.push_back(std::to_string(s.produced_us));
  };
  auto conn = std::make_shared<pqxx::connection>(f.pg_conninfo);
  int64_t max_seen = -1;
  return measure(
      f, two_phase ? "postgres_two_phase_commit_sink" : "postgres_upsert_sink",
      [&](DataStream<Stamped>& s) {
        if (two_phase) {
          postgres::PostgresTwoPhaseCommitSinkOptions o;
          o.connection.conninfo = f.pg_conninfo;
          o.table = t;
          o.transaction_id_prefix = "bench-visibility-" + std::to_string(::getpid());
          s.sink_to(postgres::PostgresTwoPhaseCommitSink<Stamped>(o, encode)).uid("sink");
        } else {
          postgres::PostgresUpsertSinkOptions o;
          o.connection.conninfo = f.pg_conninfo;
          o.table = t;
          s.sink_to(postgres::PostgresUpsertSink<Stamped>(o, encode)).uid("sink");
        }
      },
      [&] {
        std::vector<Stamped> out;
        pqxx::nontransaction tx(*conn);
        // Rows of one transaction commit together, and ids grow with production: new rows are above the max seen.
        for (const auto& r : tx.exec("SELECT id, produced FROM " + table + " WHERE id > " + std::to_string(max_seen))) {
          out.push_back({r[0].as<int64_t>(), r[1].as<int64_t>()});
          max_seen = std::max(max_seen, out.back().index);
        }
        return out;
      });
}

// A read_committed consumer of a fresh single-partition topic.
class CommittedReader {
 public:
  CommittedReader(const std::string& bootstrap, const std::string& topic) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "group.id", (topic + "-reader").c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "isolation.level", "read_committed", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_conf_set(conf, "fetch.wait.max.ms", "1", err, sizeof err);
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (rk_ == nullptr) throw std::runtime_error(std::string("kafka consumer: ") + err);
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(rk_, list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  ~CommittedReader() {
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
  }
  std::vector<Stamped> poll() {
    std::vector<Stamped> out;
    while (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, 0)) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const std::string v(static_cast<const char*>(m->payload), m->len);
        const size_t c = v.find(',');
        out.push_back({std::stoll(v.substr(0, c)), std::stoll(v.substr(c + 1))});
      }
      rd_kafka_message_destroy(m);
    }
    return out;
  }

 private:
  rd_kafka_t* rk_ = nullptr;
};

nlohmann::json kafka_case(const Flags& f) {
  const std::string topic = bench::fresh_topic(f.bootstrap, "visibility");
  CommittedReader reader(f.bootstrap, topic);
  return measure(
      f, "kafka_exactly_once_sink",
      [&](DataStream<Stamped>& s) {
        kafka::KafkaSinkOptions o;
        o.bootstrap_servers = f.bootstrap;
        o.topic = topic;
        o.delivery_guarantee = kafka::DeliveryGuarantee::kExactlyOnce;
        o.transactional_id_prefix = topic;
        auto serialize = [](const Stamped& v, kafka::KafkaProducerRecord& out) {
          out.value.clear();
          encode_line(v, out.value);
        };
        s.sink_to(kafka::KafkaSink<Stamped, decltype(serialize)>(o, serialize)).uid("sink");
      },
      [&] { return reader.poll(); });
}

std::string env_or(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);  // stdout carries the JSON only (the engine logs to stdout)
  Flags f;
  f.pg_conninfo = env_or("SLUICE_PG_CONNINFO");
  f.bootstrap = env_or("SLUICE_KAFKA_BOOTSTRAP");
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[i + 1];
    Status st = Status::ok();
    auto number = [&](int64_t& into, int64_t max) {
      auto v = bench::parse_int<int64_t>(flag, value, 1, max);
      if (v.is_ok()) into = *v;
      st = v.status();
    };
    if (flag == "--records") number(f.records, 100'000'000);
    else if (flag == "--rate") number(f.rate, 10'000'000);
    else if (flag == "--interval-ms") number(f.interval_ms, 3'600'000);
    else if (flag == "--pg-conninfo") f.pg_conninfo = value;
    else if (flag == "--bootstrap") f.bootstrap = value;
    else st = Status::invalid_argument("unknown flag " + flag);
    if (!st.is_ok()) {
      std::fprintf(stderr, "error: %s\n", st.to_string().c_str());
      return 2;
    }
  }
  const char* tmp = std::getenv("TMPDIR");
  f.work_dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/sluice-visibility-" + std::to_string(::getpid());
  std::filesystem::create_directories(f.work_dir);
  nlohmann::json out = {{"benchmark", "visibility_delay"},
                        {"records", f.records},
                        {"rate_per_s", f.rate},
                        {"checkpoint_interval_ms", f.interval_ms},
                        {"sinks", nlohmann::json::object()}};
  try {
    out["sinks"]["transactional_file_sink"] = files_case(f);
    if (!f.pg_conninfo.empty()) {
      out["sinks"]["postgres_two_phase_commit_sink"] = postgres_case(f, true);
      out["sinks"]["postgres_upsert_sink"] = postgres_case(f, false);
    } else {
      std::fprintf(stderr, "PostgreSQL skipped: no --pg-conninfo / SLUICE_PG_CONNINFO\n");
    }
    if (!f.bootstrap.empty()) {
      out["sinks"]["kafka_exactly_once_sink"] = kafka_case(f);
    } else {
      std::fprintf(stderr, "Kafka skipped: no --bootstrap / SLUICE_KAFKA_BOOTSTRAP\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::filesystem::remove_all(f.work_dir);
    return 1;
  }
  std::filesystem::remove_all(f.work_dir);
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
