// Kafka source throughput next to a plain librdkafka consumer loop on the same broker and topic (README.md).
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdlib.h>  // mkdtemp
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../common/kafka_bench_util.h"
#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/sluice.h"

namespace {

using SteadyClock = std::chrono::steady_clock;
using sluice::bench::env_or;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kafka_source_bench: %s\n", what.c_str());
  std::exit(1);
}

void set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) die(key + (": " + std::string(err)));
}

// Writes `records` copies of `value` (no key: librdkafka spreads them over the partitions) and waits for every ack.
void fill(const std::string& bootstrap, const std::string& topic, int64_t records, const std::string& value) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "enable.idempotence", "true");
  set(conf, "linger.ms", "20");
  char err[512];
  rd_kafka_t* p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (p == nullptr) die(err);
  auto vus = sluice::bench::value_record(topic, value);
  for (int64_t i = 0; i < records; ++i) {
    while (rd_kafka_error_t* e = rd_kafka_produceva(p, vus.data(), vus.size())) {
      const bool full = rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__QUEUE_FULL;
      const std::string what = rd_kafka_error_string(e);
      rd_kafka_error_destroy(e);
      if (!full) die("produce: " + what);
      rd_kafka_poll(p, 10);
    }
  }
  if (rd_kafka_flush(p, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR) die("flush of the input timed out");
  rd_kafka_destroy(p);
}

// Plain librdkafka: one consumer (read_committed, as the Sluice source by default), every partition assigned by
// hand from the beginning, messages taken one at a time (rd_kafka_consumer_poll) or `batch` at a time from the
// consumer queue (rd_kafka_consume_batch_queue, as the Sluice source reads) until `records` were read. Returns
// records/s, the consumer's creation included.
double librdkafka_loop(const std::string& bootstrap, const std::string& topic, int partitions, int64_t records,
                       int batch) {
  const auto start = SteadyClock::now();
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "group.id", topic + "-loop");
  set(conf, "enable.auto.commit", "false");
  set(conf, "isolation.level", "read_committed");
  char err[512];
  rd_kafka_t* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (c == nullptr) die(err);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  if (rd_kafka_assign(c, parts) != RD_KAFKA_RESP_ERR_NO_ERROR) die("assign");
  rd_kafka_topic_partition_list_destroy(parts);
  int64_t read = 0;
  uint64_t bytes = 0;
  auto take = [&](rd_kafka_message_t* m) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++read;
      bytes += m->len;
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      die("consume: " + std::string(rd_kafka_message_errstr(m)));
    }
    rd_kafka_message_destroy(m);
  };
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(c);
  std::vector<rd_kafka_message_t*> msgs(static_cast<size_t>(std::max(batch, 1)));
  while (read < records) {
    if (batch <= 1) {
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 100)) take(m);
      continue;
    }
    const ssize_t n = rd_kafka_consume_batch_queue(queue, 100, msgs.data(), msgs.size());
    if (n < 0) die("consume_batch_queue: " + std::string(rd_kafka_err2str(rd_kafka_last_error())));
    for (ssize_t i = 0; i < n; ++i) take(msgs[static_cast<size_t>(i)]);
  }
  rd_kafka_queue_destroy(queue);
  const double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  rd_kafka_consumer_close(c);
  rd_kafka_destroy(c);
  if (bytes == 0) die("read no bytes");
  return static_cast<double>(records) / s;
}

// A bounded Sluice job: KafkaSource (earliest, read_committed) -> map to the value's size -> DiscardingSink.
// Checkpoints every second when `checkpointing` (the source's split offsets in each). Checks that the map saw
// exactly `records` records, then returns records/s of the whole execute() (start-up included).
double sluice_job(const std::string& bootstrap, const std::string& topic, int parallelism, int64_t records,
                  bool checkpointing) {
  using namespace sluice;  // NOLINT: bench
  kafka::KafkaSourceOptions o;
  o.bootstrap_servers = bootstrap;
  o.topics = {topic};
  o.group_id = topic + "-sluice";
  o.boundedness = Boundedness::kBounded;
  Configuration config;
  std::string dir;
  if (checkpointing) {
    char tmpl[] = "/tmp/sluice-kafka-source-bench-XXXXXX";
    dir = mkdtemp(tmpl);
    (void)config.set_string("execution.checkpointing.interval", "1s");
    (void)config.set_string("execution.checkpointing.dir", dir);
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  auto seen = std::make_shared<std::atomic<int64_t>>(0);  // shared by the subtasks' copies of the map
  env.from_source(kafka::make_kafka_source<std::string>(o, kafka::ValueStringDeserializer{}), "kafka")
      .map([seen](std::string&& v) {
        seen->fetch_add(1, std::memory_order_relaxed);
        return static_cast<int64_t>(v.size());
      })
      .sink_to(DiscardingSink<int64_t>{});
  const auto start = SteadyClock::now();
  auto r = env.execute("kafka-source-bench");
  const double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!dir.empty()) std::filesystem::remove_all(dir);
  if (!r.is_ok() || r->status != JobStatus::kFinished) {
    die("job failed: " + (r.is_ok() ? r->error.to_string() : r.status().to_string()));
  }
  if (seen->load() != records) {
    die("the job read " + std::to_string(seen->load()) + " records, expected " + std::to_string(records));
  }
  return static_cast<double>(records) / s;
}

}  // namespace

int main() {
  const std::string bootstrap = sluice::bench::bootstrap_from_env();
  const int64_t records = std::stoll(env_or("SLUICE_KAFKA_BENCH_RECORDS", "1000000"));
  const int partitions = 2;
  const std::string topic = sluice::bench::fresh_topic(bootstrap, "source", partitions);
  fill(bootstrap, topic, records, std::string(100, 'x'));
  std::printf("%-36s %12s %10s\n", "run", "records/s", "vs loop");
  const double loop = librdkafka_loop(bootstrap, topic, partitions, records, 1);
  std::printf("%-36s %12.0f %10.2f\n", "librdkafka poll loop", loop, 1.0);
  auto row = [&](const char* name, double rate) {
    std::printf("%-36s %12.0f %10.2f\n", name, rate, rate / loop);
    std::fflush(stdout);
  };
  row("librdkafka batch loop (256)", librdkafka_loop(bootstrap, topic, partitions, records, 256));
  row("sluice p1, no checkpoints", sluice_job(bootstrap, topic, 1, records, false));
  row("sluice p1, checkpoints every 1 s", sluice_job(bootstrap, topic, 1, records, true));
  row("sluice p2, checkpoints every 1 s", sluice_job(bootstrap, topic, 2, records, true));
  return 0;
}
