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

#include "baseline_loops.h"
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

// Runs one loop of baseline_loops.h once over num_events() events per iteration and reports its rate.
template <class Loop>
void run_loop(benchmark::State& state, Loop loop) {
  const Generator g(GeneratorConfig{});
  const int64_t n_events = num_events();
  bench::QueryOutput out;
  for (auto _ : state) out = loop(g, n_events);
  report(state, n_events);
  state.counters["outputs"] = static_cast<double>(out.outputs);
  if (out.keys > 0) state.counters["keys"] = static_cast<double>(out.keys);
}

void BM_Generator(benchmark::State& state) { run_loop(state, bench::baseline_generator); }
void BM_Q0Passthrough(benchmark::State& state) { run_loop(state, bench::baseline_q0); }
void BM_Q1Currency(benchmark::State& state) { run_loop(state, bench::baseline_q1); }
void BM_Q2Selection(benchmark::State& state) { run_loop(state, bench::baseline_q2); }
void BM_CountByAuction(benchmark::State& state) { run_loop(state, bench::baseline_count_by_auction); }
void BM_Count100kKeys(benchmark::State& state) { run_loop(state, bench::baseline_keyed_count); }
void BM_Q5HotItems(benchmark::State& state) { run_loop(state, bench::baseline_q5); }
void BM_Q7HighestBid(benchmark::State& state) { run_loop(state, bench::baseline_q7); }
void BM_Q8NewUsers(benchmark::State& state) { run_loop(state, bench::baseline_q8); }

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
SLUICE_BASELINE(BM_Q5HotItems, "q5_hot_items");
SLUICE_BASELINE(BM_Q7HighestBid, "q7_highest_bid");
SLUICE_BASELINE(BM_Q8NewUsers, "q8_new_users");

}  // namespace
}  // namespace sluice::nexmark

BENCHMARK_MAIN();
