// Kafka helpers the benchmark harnesses share (bench/kafka, bench/visibility).
#pragma once

#include <librdkafka/rdkafka.h>

#include <random>
#include <string>

namespace sluice::bench {

// Creates a fresh single-partition topic "bench-<name>-<random>" on `bootstrap` and returns its name (waits up to
// 30 s for the broker's answer; a failure shows later as a produce error).
inline std::string fresh_topic(const std::string& bootstrap, const std::string& name) {
  static std::mt19937_64 rng{std::random_device{}()};
  std::string topic = "bench-" + name + "-" + std::to_string(rng() % 1000000000);
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_t* admin = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), 1, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin);
  rd_kafka_CreateTopics(admin, &nt, 1, nullptr, q);
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000)) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_destroy(admin);
  return topic;
}

}  // namespace sluice::bench
