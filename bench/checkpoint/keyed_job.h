// The checkpoint benchmark's job: the demo's pipeline (examples/per_auction) with a bounded key space, so its
// heap state holds a steady number of keys (~100 k by default) from early in the run instead of growing with
// the stream as the demo's per-auction state does.
//
//   Nexmark source -> filter is_bid -> map Bid -> key_by(key_of(price)) -> running count, sum and max per key
//   in ValueState<KeyAggregate> (the demo's CountSumMax) -> sink
//
// key_of(price) = (price * 2^64/phi) mod num_keys: bench/baseline's key_of_price for any key count (Fibonacci
// hashing: near-uniform, no locality). The sink is DiscardingSink, or the demo's exactly-once
// TransactionalFileSink (one line per update) with SinkKind::kFile.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sluice.h"

namespace sluice::bench {

// The per-key running aggregate kept in state and emitted per bid (the demo's AuctionUpdate).
struct KeyAggregate {
  int64_t key = 0;
  int64_t count = 0;
  int64_t sum = 0;  // cents
  int64_t max = 0;  // cents
  SLUICE_FIELDS(KeyAggregate, key, count, sum, max)
};

inline int64_t key_of(int64_t price, int64_t num_keys) {
  return static_cast<int64_t>((static_cast<uint64_t>(price) * 0x9E3779B97F4A7C15ULL) %
                              static_cast<uint64_t>(num_keys));
}

// What the job tells the harness: keys created (the state's key count, without scanning it) and when a
// keyed subtask last opened (after a restore: its state is back).
struct JobProbe {
  std::atomic<int64_t> new_keys{0};
  std::atomic<int64_t> last_open_ns{0};  // steady clock
};

class AggregatePerKey final : public KeyedProcessFunction<int64_t, nexmark::Bid, KeyAggregate> {
 public:
  AggregatePerKey(int64_t num_keys, std::shared_ptr<JobProbe> probe) : num_keys_(num_keys), probe_(std::move(probe)) {}
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    state_ = &get_state(ValueStateDescriptor<KeyAggregate>("per-key"));
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    probe_->last_open_ns.store(now, std::memory_order_relaxed);
  }
  void process_element(const nexmark::Bid& bid, KeyedProcessContext<int64_t>&, Collector<KeyAggregate>& out) override {
    std::optional<KeyAggregate> current = state_->value();
    if (!current) {
      probe_->new_keys.fetch_add(1, std::memory_order_relaxed);
      current = KeyAggregate{key_of(bid.price, num_keys_), 0, 0, 0};
    }
    KeyAggregate& u = *current;
    u.count += 1;
    u.sum += bid.price;
    u.max = std::max(u.max, bid.price);
    state_->update(u);
    out.collect(u);
  }

 private:
  int64_t num_keys_;
  std::shared_ptr<JobProbe> probe_;
  ValueState<KeyAggregate>* state_ = nullptr;
};

enum class SinkKind { kDiscard, kFile };

struct KeyedJobConfig {
  int64_t events = 0;
  int64_t num_keys = 100'000;
  int32_t parallelism = 2;
  int32_t num_splits = 8;  // the demo's default
  SinkKind sink = SinkKind::kDiscard;
  std::string output_dir;  // SinkKind::kFile
};

// Adds the job's source and keyed aggregation to `env` (sets its parallelism) and returns the stream of key
// updates out of "per-key", for the caller to add its sink: bids of a Nexmark source, keyed by price modulo
// `num_keys`, aggregated per key. cfg.sink and cfg.output_dir are not used here.
inline auto add_keyed_updates(StreamExecutionEnvironment& env, const KeyedJobConfig& cfg,
                              const std::shared_ptr<JobProbe>& probe) {
  nexmark::NexmarkSourceOptions source;
  source.generator.seed = 1;
  source.generator.declared_rate_per_s = 10'000'000;
  source.generator.max_events = cfg.events;
  source.num_splits = cfg.num_splits;
  env.set_parallelism(cfg.parallelism);
  const int64_t num_keys = cfg.num_keys;
  return env.from_source(nexmark::NexmarkSource(source), "bids")
      .filter([](const nexmark::Event& e) { return e.is_bid(); })
      .name("only-bids")
      .uid("only-bids")
      .map([](nexmark::Event&& e) { return e.bid(); })
      .name("to-bid")
      .uid("to-bid")
      .key_by([num_keys](const nexmark::Bid& b) { return key_of(b.price, num_keys); })
      .process(AggregatePerKey(num_keys, probe))
      .name("per-key")
      .uid("per-key");
}

// Adds the job to `env`: add_keyed_updates into the configured sink.
inline void build_keyed_job(StreamExecutionEnvironment& env, const KeyedJobConfig& cfg,
                            const std::shared_ptr<JobProbe>& probe) {
  auto updates = add_keyed_updates(env, cfg, probe);
  if (cfg.sink == SinkKind::kFile) {
    updates
        .sink_to(file::TransactionalFileSink<KeyAggregate>(
            cfg.output_dir,
            [](const KeyAggregate& u, std::string& line) {
              fmt::format_to(std::back_inserter(line), "{},{},{},{}", u.key, u.count, u.sum, u.max);
            },
            file::RollingPolicy::on_checkpoint()))  // the checkpoint benchmarks' numbers were taken with it
        .name("sink")
        .uid("sink");
  } else {
    updates.sink_to(DiscardingSink<KeyAggregate>()).name("sink").uid("sink");
  }
}

}  // namespace sluice::bench
