// ValueState<int64_t> read-modify-write on the heap backend vs the same loop on a plain std::unordered_map.
//
// Both visit the same 100k int64 keys in the same shuffled order, one key per iteration, so the times are
// ns per read-modify-write. The state side pays what a keyed operator pays per record: set_current_key
// (XXH3 of the key, key group, range check) plus value() and update() (two virtual calls, two lookups).
// At the end the ratio state / unordered_map is printed, and the cost of copy-on-write against no snapshot.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/state/hashmap_state_backend.h"

namespace sluice {
namespace {

constexpr int64_t kKeys = 100'000;

const std::vector<int64_t>& shuffled_keys() {
  static const std::vector<int64_t> keys = [] {
    std::vector<int64_t> k(kKeys);
    std::mt19937_64 rng(42);
    for (auto& x : k) x = static_cast<int64_t>(rng() >> 1);  // spread over the int64 range, like ids
    std::shuffle(k.begin(), k.end(), rng);
    return k;
  }();
  return keys;
}

void BM_ValueStateRmw(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> backend(KeyGroupRange(0, 127), 128);
  KeyedStateBackend<int64_t>& b = backend;
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (int64_t k : keys) {  // warm: all keys present, as in steady state
    b.set_current_key(k);
    count.update(0);
  }
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    std::optional<int64_t> v = count.value();
    count.update(v.value_or(0) + 1);
    if (++i == keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(count.value());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ValueStateRmw);

void BM_UnorderedMapRmw(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  std::unordered_map<int64_t, int64_t> m;
  for (int64_t k : keys) m[k] = 0;
  size_t i = 0;
  for (auto _ : st) {
    ++m[keys[i]];
    if (++i == keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(m.size());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_UnorderedMapRmw);

// The per-record key cost alone.
void BM_SetCurrentKey(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> b(KeyGroupRange(0, 127), 128);
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    if (++i == keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(b.current_key_group());
}
BENCHMARK(BM_SetCurrentKey);

// String keys, for reference (serialization into the scratch buffer + XXH3).
void BM_ValueStateRmwStringKey(benchmark::State& st) {
  std::vector<std::string> keys;
  for (int64_t k : shuffled_keys()) keys.push_back("user-" + std::to_string(k));
  HeapKeyedStateBackend<std::string> b(KeyGroupRange(0, 127), 128);
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (const auto& k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    count.update(count.value().value_or(0) + 1);
    if (++i == keys.size()) i = 0;
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ValueStateRmwStringKey);

// The same RMW while an asynchronous snapshot is live. A fresh snapshot is taken before every pass over the
// keys (the previous one released, outside the timing), so every RMW finds its entry shared with the
// snapshot and copies it: the worst case of copy-on-write.
void BM_ValueStateRmwLiveSnapshot(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> backend(KeyGroupRange(0, 127), 128);
  KeyedStateBackend<int64_t>& b = backend;
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (int64_t k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    std::optional<int64_t> v = count.value();
    count.update(v.value_or(0) + 1);
    if (++i == keys.size()) {
      i = 0;
      st.PauseTiming();
      snap->release();
      snap = b.snapshot();
      st.ResumeTiming();
    }
  }
  snap->release();
  benchmark::DoNotOptimize(count.value());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ValueStateRmwLiveSnapshot);

// One snapshot live for the whole run: after the first pass every entry is private again, so this shows that
// copy-on-write costs once per entry per snapshot, not per write.
void BM_ValueStateRmwLongLivedSnapshot(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> backend(KeyGroupRange(0, 127), 128);
  KeyedStateBackend<int64_t>& b = backend;
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (int64_t k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
  size_t i = 0;
  for (auto _ : st) {
    b.set_current_key(keys[i]);
    std::optional<int64_t> v = count.value();
    count.update(v.value_or(0) + 1);
    if (++i == keys.size()) i = 0;
  }
  snap->release();
  benchmark::DoNotOptimize(count.value());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ValueStateRmwLongLivedSnapshot);

// The synchronous part (snapshot(): fix a version, take 128 map views) and its release, 100k keys.
void BM_SnapshotSyncPart(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> b(KeyGroupRange(0, 127), 128);
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (int64_t k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  for (auto _ : st) {
    std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
    benchmark::DoNotOptimize(snap.get());
    snap->release();
  }
}
BENCHMARK(BM_SnapshotSyncPart)->Unit(benchmark::kMicrosecond);

// The asynchronous part: write_all_key_groups of 100k int64 keys (no concurrent mutation).
void BM_SnapshotWriteAll(benchmark::State& st) {
  const auto& keys = shuffled_keys();
  HeapKeyedStateBackend<int64_t> b(KeyGroupRange(0, 127), 128);
  ValueState<int64_t>& count = b.get_state(ValueStateDescriptor<int64_t>("count"));
  for (int64_t k : keys) {
    b.set_current_key(k);
    count.update(0);
  }
  std::vector<uint8_t> out;
  std::vector<uint64_t> offsets;
  for (auto _ : st) {
    out.clear();
    std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
    if (!write_all_key_groups(*snap, &out, &offsets).is_ok()) st.SkipWithError("write_all_key_groups failed");
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(out.size()));
}
BENCHMARK(BM_SnapshotWriteAll)->Unit(benchmark::kMillisecond);

// Captures per-benchmark times to print the ratio after the normal console output.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0) {
        ns_[r.benchmark_name()] = r.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratio() const {
    auto s = ns_.find("BM_ValueStateRmw");
    auto m = ns_.find("BM_UnorderedMapRmw");
    if (s == ns_.end() || m == ns_.end() || m->second <= 0) return;
    std::printf("\nValueState<int64_t> RMW: %.1f ns, std::unordered_map RMW: %.1f ns, ratio %.2f\n", s->second,
                m->second, s->second / m->second);
    auto live = ns_.find("BM_ValueStateRmwLiveSnapshot");
    if (live != ns_.end()) {
      std::printf("ValueState<int64_t> RMW with a live snapshot (every write copies): %.1f ns, %.2fx no snapshot\n",
                  live->second, live->second / s->second);
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
  reporter.print_ratio();
  benchmark::Shutdown();
  return 0;
}
