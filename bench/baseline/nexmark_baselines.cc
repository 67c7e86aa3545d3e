// Hand-written single-threaded Nexmark loops: the floor that the engine's benchmarks are measured against.
//
// Every loop generates every event (people and auctions too, strings materialized with Generator::fill into
// one reused Event), as the engine's source does, then does the query's work inline. Fixed work: each
// benchmark runs once over SLUICE_BASELINE_EVENTS events (default 5,000,000) and reports events_per_s
// and items_per_second per CPU second of the (only) thread: a per-core rate that a loaded machine distorts
// less than wall-clock time would. Generator: the default GeneratorConfig (seed 1, 10 M/s declared).
//
//   generator        fill() only
//   q0_passthrough   bids into a sink (DoNotOptimize)
//   q1_currency      bids -> {auction, bidder, price * 0.908, date_time}
//   q2_selection     bids with auction % 123 == 0 -> {auction, price}
//   count_by_auction std::unordered_map<int64_t, int64_t> count per Bid::auction (~100 live keys, skewed)
//   count_100k_keys  the same over 100,000 keys: key = (uint64(price) * 0x9E3779B97F4A7C15) % 100000, i.e.
//                    Fibonacci hashing of the price, spreading bids near-uniformly over 100 k keys
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <unordered_map>

#include "sluice/connectors/nexmark/generator.h"

namespace sluice::nexmark {
namespace {

int64_t num_events() {
  static const int64_t n = [] {
    const char* env = std::getenv("SLUICE_BASELINE_EVENTS");
    const long long v = env ? std::atoll(env) : 0;
    return v > 0 ? static_cast<int64_t>(v) : int64_t{5'000'000};
  }();
  return n;
}

void report(benchmark::State& state, int64_t events_per_iteration) {
  const auto events = static_cast<int64_t>(state.iterations()) * events_per_iteration;
  state.SetItemsProcessed(events);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

struct Q1Out {
  int64_t auction;
  int64_t bidder;
  double price;  // euros-per-dollar style conversion of the price in cents
  int64_t date_time;
};

struct Q2Out {
  int64_t auction;
  int64_t price;
};

void BM_Generator(benchmark::State& state) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  Event e;
  for (auto _ : state) {
    for (int64_t n = 0; n < n_events; ++n) {
      g.fill(n, e);
      benchmark::DoNotOptimize(e);
    }
  }
  report(state, n_events);
}

void BM_Q0Passthrough(benchmark::State& state) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  Event e;
  int64_t sunk = 0;
  for (auto _ : state) {
    for (int64_t n = 0; n < n_events; ++n) {
      g.fill(n, e);
      if (!e.is_bid()) continue;
      const Bid& bid = e.bid();
      benchmark::DoNotOptimize(&bid);
      ++sunk;
    }
  }
  benchmark::DoNotOptimize(sunk);
  report(state, n_events);
  state.counters["outputs"] = static_cast<double>(sunk);
}

void BM_Q1Currency(benchmark::State& state) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  Event e;
  Q1Out out{};
  int64_t outputs = 0;
  for (auto _ : state) {
    for (int64_t n = 0; n < n_events; ++n) {
      g.fill(n, e);
      if (!e.is_bid()) continue;
      const Bid& bid = e.bid();
      out = Q1Out{bid.auction, bid.bidder, static_cast<double>(bid.price) * 0.908, bid.date_time};
      benchmark::DoNotOptimize(out);
      ++outputs;
    }
  }
  report(state, n_events);
  state.counters["outputs"] = static_cast<double>(outputs);
}

void BM_Q2Selection(benchmark::State& state) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  Event e;
  Q2Out out{};
  int64_t outputs = 0;
  for (auto _ : state) {
    for (int64_t n = 0; n < n_events; ++n) {
      g.fill(n, e);
      if (!e.is_bid() || e.bid().auction % 123 != 0) continue;
      out = Q2Out{e.bid().auction, e.bid().price};
      benchmark::DoNotOptimize(out);
      ++outputs;
    }
  }
  report(state, n_events);
  state.counters["outputs"] = static_cast<double>(outputs);
}

template <class KeyOf>
void keyed_count(benchmark::State& state, KeyOf key_of) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  Event e;
  size_t keys = 0;
  for (auto _ : state) {
    std::unordered_map<int64_t, int64_t> counts;
    for (int64_t n = 0; n < n_events; ++n) {
      g.fill(n, e);
      if (!e.is_bid()) continue;
      ++counts[key_of(e.bid())];
    }
    keys = counts.size();
    benchmark::DoNotOptimize(counts);
  }
  report(state, n_events);
  state.counters["keys"] = static_cast<double>(keys);
}

void BM_CountByAuction(benchmark::State& state) {
  keyed_count(state, [](const Bid& b) { return b.auction; });
}

void BM_Count100kKeys(benchmark::State& state) {
  keyed_count(state, [](const Bid& b) {
    return static_cast<int64_t>((static_cast<uint64_t>(b.price) * 0x9E3779B97F4A7C15ULL) % 100'000);
  });
}

#define SLUICE_BASELINE(fn, name) \
  BENCHMARK(fn)->Name(name)->Iterations(1)->Unit(benchmark::kMillisecond)

SLUICE_BASELINE(BM_Generator, "generator");
SLUICE_BASELINE(BM_Q0Passthrough, "q0_passthrough");
SLUICE_BASELINE(BM_Q1Currency, "q1_currency");
SLUICE_BASELINE(BM_Q2Selection, "q2_selection");
// count_100k_keys runs before count_by_auction: reusing the ~300 k scattered nodes that count_by_auction
// frees made it 20-40 % slower in our runs (its 100 k nodes then spread over 3x the memory).
SLUICE_BASELINE(BM_Count100kKeys, "count_100k_keys");
SLUICE_BASELINE(BM_CountByAuction, "count_by_auction");

}  // namespace
}  // namespace sluice::nexmark

BENCHMARK_MAIN();
