// The cost of State TTL: ValueState<int64_t> update, and read-modify-write, with and without a time-to-live,
// on both backends (HashMap and RocksDB), over the same shuffled int64 keys (all present: steady state).
//
// TTL runs as a job would: the default SystemClock (one clock read per access), Flink's default background
// cleanup (heap: 5 entries checked per access; RocksDB: the compaction filter, off this path), timestamps
// stored with the values. At the end the ratios TTL / no TTL are printed per backend.
//
//   ttl_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sluice/state/hashmap_state_backend.h"
#include "sluice/state/rocksdb_state_backend.h"

namespace sluice {
namespace {

const std::vector<int64_t>& shuffled_keys(size_t n) {
  static std::map<size_t, std::vector<int64_t>> cache;
  auto& keys = cache[n];
  if (keys.empty()) {
    keys.resize(n);
    std::mt19937_64 rng(42);
    for (auto& x : keys) x = static_cast<int64_t>(rng() >> 1);
    std::shuffle(keys.begin(), keys.end(), rng);
  }
  return keys;
}

std::unique_ptr<KeyedStateBackend<int64_t>> make(StateBackendKind kind) {
  RocksDBStateBackendOptions rocks{"", "ttl-bench"};
  auto b = make_keyed_state_backend<int64_t>(kind, KeyGroupRange(0, 127), 128, rocks);
  if (!b.is_ok()) {
    std::fprintf(stderr, "%s\n", b.status().to_string().c_str());
    std::abort();
  }
  return std::move(b).value();
}

// ttl: 0 none, 1 TTL with Flink's default background cleanup, 2 TTL without background cleanup (reads and
// full snapshots still clean up).
ValueStateDescriptor<int64_t> descriptor(int64_t ttl) {
  ValueStateDescriptor<int64_t> d("count");
  if (ttl == 1) d.enable_time_to_live(StateTtlConfig::new_builder(3'600'000).build());
  if (ttl == 2) {
    d.enable_time_to_live(StateTtlConfig::new_builder(3'600'000).disable_cleanup_in_background().build());
  }
  return d;
}

// args: kind (0 heap, 1 RocksDB), ttl (0, 1, 2 as above), rmw (0: update only, 1: value() + update())
void BM_ValueState(benchmark::State& st) {
  const auto kind = st.range(0) == 0 ? StateBackendKind::kHashMap : StateBackendKind::kRocksDB;
  const int64_t ttl = st.range(1);
  const bool rmw = st.range(2) != 0;
  const auto& keys = shuffled_keys(kind == StateBackendKind::kHashMap ? 100'000 : 20'000);
  auto backend = make(kind);
  KeyedStateBackend<int64_t>& b = *backend;
  ValueState<int64_t>& count = b.get_state(descriptor(ttl));
  for (int64_t k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    if (rmw) {
      count.update(count.value().value_or(0) + 1);
    } else {
      count.update(static_cast<int64_t>(i));
    }
    if (++i == keys.size()) i = 0;
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(std::string(kind == StateBackendKind::kHashMap ? "heap" : "rocksdb") +
              (ttl == 1 ? " ttl" : ttl == 2 ? " ttl-no-background-cleanup" : "") +
              (rmw ? " rmw" : " update"));
}
BENCHMARK(BM_ValueState)
    ->ArgNames({"rocksdb", "ttl", "rmw"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}, {0, 1}});

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0) ns_[r.benchmark_name()] = r.GetAdjustedCPUTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    std::printf("\nCPU ns per op, TTL / no TTL:\n");
    for (int kind = 0; kind < 2; ++kind) {
      for (int rmw = 0; rmw < 2; ++rmw) {
        auto name = [&](int ttl) {
          return "BM_ValueState/rocksdb:" + std::to_string(kind) + "/ttl:" + std::to_string(ttl) +
                 "/rmw:" + std::to_string(rmw);
        };
        auto off = ns_.find(name(0)), on = ns_.find(name(1)), bare = ns_.find(name(2));
        if (off == ns_.end() || on == ns_.end() || bare == ns_.end() || off->second <= 0) continue;
        std::printf("  %-8s %-7s no TTL %8.1f  TTL %8.1f (ratio %.2f)  TTL without background cleanup %8.1f "
                    "(ratio %.2f)\n",
                    kind == 0 ? "heap" : "rocksdb", rmw == 0 ? "update" : "rmw", off->second, on->second,
                    on->second / off->second, bare->second, bare->second / off->second);
      }
    }
  }

 private:
  std::map<std::string, double> ns_;
};

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  sluice::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
