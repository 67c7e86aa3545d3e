// Kafka helpers the benchmark harnesses share (bench/kafka, bench/visibility).
#pragma once

#include <librdkafka/rdkafka.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace sluice::bench {

// The environment variable `name`, or `fallback` when it is unset or empty.
inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// The broker from SLUICE_KAFKA_BOOTSTRAP; exits with 2 and a hint when it is not set.
inline std::string bootstrap_from_env() {
  const std::string bootstrap = env_or("SLUICE_KAFKA_BOOTSTRAP", "");
  if (bootstrap.empty()) {
    std::fprintf(stderr, "set SLUICE_KAFKA_BOOTSTRAP=host:port (a broker, e.g. scripts/test-servers/kafka-start)\n");
    std::exit(2);
  }
  return bootstrap;
}

// Creates a fresh topic "bench-<name>-<random>" with `partitions` partitions on `bootstrap` and returns its name
// (waits up to 30 s for the broker's answer; a failure shows later as a produce error).
inline std::string fresh_topic(const std::string& bootstrap, const std::string& name, int partitions = 1) {
  static std::mt19937_64 rng{std::random_device{}()};
  std::string topic = "bench-" + name + "-" + std::to_string(rng() % 1000000000);
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_t* admin = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin);
  rd_kafka_CreateTopics(admin, &nt, 1, nullptr, q);
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000)) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_destroy(admin);
  return topic;
}

// The arguments of rd_kafka_produceva for one copied value without key to `topic` (both must outlive the calls).
inline std::array<rd_kafka_vu_t, 3> value_record(const std::string& topic, const std::string& value) {
  std::array<rd_kafka_vu_t, 3> vus{};
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[1].u.mem.ptr = const_cast<char*>(value.data());
  vus[1].u.mem.size = value.size();
  vus[2].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[2].u.i = RD_KAFKA_MSG_F_COPY;
  return vus;
}

}  // namespace sluice::bench
