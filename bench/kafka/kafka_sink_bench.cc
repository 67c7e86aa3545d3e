// Kafka sink throughput next to plain librdkafka loops on the same broker (README.md).
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <stdlib.h>  // mkdtemp
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../common/kafka_bench_util.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/sluice.h"

namespace {

using SteadyClock = std::chrono::steady_clock;
using sluice::bench::env_or;

using sluice::bench::fresh_topic;

// Plain librdkafka: `records` values of `value`, in transactions of `per_txn` records (0: no transactions).
double librdkafka_loop(const std::string& bootstrap, int64_t records, const std::string& value, int64_t per_txn) {
  const std::string topic = fresh_topic(bootstrap, per_txn > 0 ? "txn-loop" : "loop");
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof err);
  if (per_txn > 0) rd_kafka_conf_set(conf, "transactional.id", (topic + "-id").c_str(), err, sizeof err);
  rd_kafka_t* p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (per_txn > 0) rd_kafka_error_destroy(rd_kafka_init_transactions(p, 30000));
  auto vus = sluice::bench::value_record(topic, value);
  const auto start = SteadyClock::now();
  for (int64_t i = 0; i < records; ++i) {
    if (per_txn > 0 && i % per_txn == 0) {
      if (i > 0) rd_kafka_error_destroy(rd_kafka_commit_transaction(p, 60000));
      rd_kafka_error_destroy(rd_kafka_begin_transaction(p));
    }
    while (rd_kafka_error_t* e = rd_kafka_produceva(p, vus.data(), vus.size())) {
      const bool full = rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__QUEUE_FULL;
      rd_kafka_error_destroy(e);
      if (!full) {
        std::fprintf(stderr, "produce failed\n");
        std::exit(1);
      }
      rd_kafka_poll(p, 10);
    }
  }
  if (per_txn > 0) rd_kafka_error_destroy(rd_kafka_commit_transaction(p, 60000));
  rd_kafka_flush(p, 60000);
  const double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  rd_kafka_destroy(p);
  return static_cast<double>(records) / s;
}

double sluice_job(const std::string& bootstrap, int64_t records, const std::string& value,
                  sluice::kafka::DeliveryGuarantee guarantee) {
  using namespace sluice;  // NOLINT: bench
  kafka::KafkaSinkOptions o;
  o.bootstrap_servers = bootstrap;
  o.topic = fresh_topic(bootstrap, "sluice");
  o.delivery_guarantee = guarantee;
  o.transactional_id_prefix = o.topic;
  Configuration config;
  std::string dir;
  if (guarantee != kafka::DeliveryGuarantee::kNone) {
    // Filesystem checkpoint storage: an exactly-once checkpoint holds an interval of output (tens of MB here),
    // far above the JobManager storage's 5 MiB limit.
    char tmpl[] = "/tmp/sluice-kafka-bench-XXXXXX";
    dir = mkdtemp(tmpl);
    (void)config.set_string("execution.checkpointing.interval", "1s");
    (void)config.set_string("execution.checkpointing.dir", dir);
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.from_sequence(1, records)
      .map([value](int64_t) { return value; })
      .sink_to(kafka::make_kafka_sink<std::string>(o, kafka::ValueStringSerializer{}));
  const auto start = SteadyClock::now();
  auto r = env.execute("kafka-sink-bench");
  const double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!dir.empty()) std::filesystem::remove_all(dir);
  if (!r.is_ok() || r->status != JobStatus::kFinished) {
    std::fprintf(stderr, "job failed: %s\n", r.is_ok() ? r->error.to_string().c_str() : r.status().to_string().c_str());
    std::exit(1);
  }
  return static_cast<double>(records) / s;
}

}  // namespace

int main() {
  const std::string bootstrap = sluice::bench::bootstrap_from_env();
  const int64_t records = std::stoll(env_or("SLUICE_KAFKA_BENCH_RECORDS", "1000000"));
  const std::string only = env_or("SLUICE_KAFKA_BENCH_ONLY", "");  // a row's name: run just that one
  const std::string value(100, 'x');
  using sluice::kafka::DeliveryGuarantee;
  std::printf("%-32s %12s\n", "run", "records/s");
  auto row = [&](const char* name, auto run) {
    if (only.empty() || only == name) std::printf("%-32s %12.0f\n", name, run());
    std::fflush(stdout);
  };
  row("librdkafka loop", [&] { return librdkafka_loop(bootstrap, records, value, 0); });
  row("librdkafka transactional loop", [&] { return librdkafka_loop(bootstrap, records, value, 100000); });
  row("sluice NONE", [&] { return sluice_job(bootstrap, records, value, DeliveryGuarantee::kNone); });
  row("sluice AT_LEAST_ONCE", [&] { return sluice_job(bootstrap, records, value, DeliveryGuarantee::kAtLeastOnce); });
  row("sluice EXACTLY_ONCE", [&] { return sluice_job(bootstrap, records, value, DeliveryGuarantee::kExactlyOnce); });
  return 0;
}
