// The engine side of the harness: the four benchmark jobs, written as a user writes them with the
// DataStream API, over the Nexmark source with the baselines' generator config.
//
//   q0           source -> sink (all events; chained into one task)
//   q1           source -> filter is_bid -> map {auction, bidder, price * 0.908, date_time} -> sink
//   q2           source -> filter is_bid && auction % 123 == 0 -> map {auction, price} -> sink
//   keyed_count  source -> filter is_bid -> map {key_of_price(price)} -> key_by(key)
//                -> KeyedProcessFunction counting per key in ValueState<int64_t>, emitting {key, count}
//                after every bid -> sink
//
// The keyed count's records are a one-field struct rather than a bare int64_t because KeyedStream<K, T>
// does not compile for a non-class T (its sum/min/max(M T::*field) overloads form a pointer to member of
// T even when unused).
//
// The sink is DiscardingSink for measured runs. A verification run swaps in VerifyingSink, which counts
// what arrives (and, for the keyed count, keeps the last count per key) so that the harness can compare
// the engine's output with the baseline loop's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "../baseline/baseline_loops.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sluice.h"

namespace sluice::bench {

enum class BenchCase { kQ0, kQ1, kQ2, kKeyedCount };
inline constexpr BenchCase kAllCases[] = {BenchCase::kQ0, BenchCase::kQ1, BenchCase::kQ2, BenchCase::kKeyedCount};

inline std::string_view case_name(BenchCase c) {
  switch (c) {
    case BenchCase::kQ0: return "q0";
    case BenchCase::kQ1: return "q1";
    case BenchCase::kQ2: return "q2";
    case BenchCase::kKeyedCount: return "keyed_count";
  }
  return "?";
}

// The targets for engine / baseline events per CPU-second (README.md).
inline double target_ratio(BenchCase c) { return c == BenchCase::kKeyedCount ? 0.25 : 0.30; }

// The generator every run uses: the baselines' default GeneratorConfig (seed 1, 10 M/s declared), bounded
// to `events` for the engine's source.
inline nexmark::GeneratorConfig bench_generator_config(int64_t events) {
  nexmark::GeneratorConfig g;
  g.seed = 1;
  g.declared_rate_per_s = 10'000'000;
  g.max_events = events;
  return g;
}

// The keyed count's input: the key of a bid (key_of_price).
struct BidKey {
  int64_t key = 0;
  SLUICE_FIELDS(BidKey, key)
};

// The keyed count's output: the running count of `key` after a bid.
struct KeyCount {
  int64_t key = 0;
  int64_t count = 0;
  SLUICE_FIELDS(KeyCount, key, count)
};

class CountPerKey final : public KeyedProcessFunction<int64_t, BidKey, KeyCount> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const BidKey& in, KeyedProcessContext<int64_t>&, Collector<KeyCount>& out) override {
    const int64_t c = count_->value().value_or(0) + 1;
    count_->update(c);
    out.collect(KeyCount{in.key, c});
  }

 private:
  ValueState<int64_t>* count_ = nullptr;
};

// What the VerifyingSink writers of one run received, merged. Thread-safe.
class VerifyTotals {
 public:
  void add(const QueryOutput& part) {
    std::lock_guard lock(mu_);
    total_.outputs += part.outputs;
    total_.keys += part.keys;  // keys are disjoint across subtasks of a keyed operator
    total_.digest += part.digest;
  }
  QueryOutput total() const {
    std::lock_guard lock(mu_);
    return total_;
  }

 private:
  mutable std::mutex mu_;
  QueryOutput total_;
};

// Counts records (and, for KeyCount, keeps the last count per key); reports to a VerifyTotals on close.
template <class T>
class VerifyingSink final : public Sink<T> {
 public:
  explicit VerifyingSink(std::shared_ptr<VerifyTotals> totals) : totals_(std::move(totals)) {}
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext&) const override {
    return std::make_unique<Writer>(totals_);
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    explicit Writer(std::shared_ptr<VerifyTotals> totals) : totals_(std::move(totals)) {}
    void write(T&& record) override {
      ++part_.outputs;
      if constexpr (std::is_same_v<T, KeyCount>) {
        int64_t& last = last_count_[record.key];
        last = std::max(last, record.count);
      }
    }
    void flush(bool) override {}
    void close() override {
      if constexpr (std::is_same_v<T, KeyCount>) {
        part_.keys = static_cast<int64_t>(last_count_.size());
        for (const auto& [key, count] : last_count_) part_.digest += key_count_digest_term(key, count);
      }
      totals_->add(part_);
    }

   private:
    std::shared_ptr<VerifyTotals> totals_;
    QueryOutput part_;
    std::unordered_map<int64_t, int64_t> last_count_;  // KeyCount only
  };
  std::shared_ptr<VerifyTotals> totals_;
};

struct EngineJobConfig {
  int64_t events = 5'000'000;
  int32_t parallelism = 1;  // of every operator; the source has this many splits
};

namespace detail {
template <class T>
void add_sink(const DataStream<T>& stream, const std::shared_ptr<VerifyTotals>& verify) {
  if (verify) {
    stream.sink_to(VerifyingSink<T>(verify)).name("verify");
  } else {
    stream.sink_to(DiscardingSink<T>()).name("discard");
  }
}
}  // namespace detail

// Adds case `c` to `env`. verify == nullptr: the measured job (DiscardingSink).
inline void build_job(StreamExecutionEnvironment& env, BenchCase c, const EngineJobConfig& cfg,
                      const std::shared_ptr<VerifyTotals>& verify) {
  nexmark::NexmarkSourceOptions source;
  source.generator = bench_generator_config(cfg.events);
  source.num_splits = cfg.parallelism;  // one split per reader: no interleaving the baseline does not do
  env.set_parallelism(cfg.parallelism);
  auto events = env.from_source(nexmark::NexmarkSource(source), "nexmark");
  auto is_bid = [](const nexmark::Event& e) { return e.is_bid(); };
  switch (c) {
    case BenchCase::kQ0:
      detail::add_sink(events, verify);
      return;
    case BenchCase::kQ1:
      detail::add_sink(events.filter(is_bid).map([](nexmark::Event&& e) {
        const nexmark::Bid& b = e.bid();
        return Q1Row{b.auction, b.bidder, static_cast<double>(b.price) * kDollarToEuro, b.date_time};
      }),
                       verify);
      return;
    case BenchCase::kQ2:
      detail::add_sink(events
                           .filter([](const nexmark::Event& e) {
                             return e.is_bid() && e.bid().auction % kQ2AuctionModulus == 0;
                           })
                           .map([](nexmark::Event&& e) { return Q2Row{e.bid().auction, e.bid().price}; }),
                       verify);
      return;
    case BenchCase::kKeyedCount:
      detail::add_sink(events.filter(is_bid)
                           .map([](nexmark::Event&& e) { return BidKey{key_of_price(e.bid().price)}; })
                           .key_by([](const BidKey& b) { return b.key; })
                           .process(CountPerKey{})
                           .uid("count-per-key"),
                       verify);
      return;
  }
}

}  // namespace sluice::bench
