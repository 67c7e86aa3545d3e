// Timers: register + fire per CPU-second on each timer store: the heap backend, RocksDB with timers in RocksDB
// (state.backend.rocksdb.timer-service.factory: ROCKSDB, the default), and RocksDB with timers on the heap (HEAP).
//
// One iteration registers kBatch timers for kBatch keys spread over 128 key groups (set_current_key + add, as a
// process function does per record), then polls them all in timestamp order with the key set (as firing does).
// items_per_second = timers registered and fired per CPU-second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sluice/state/keyed_state_backend.h"

namespace sluice {
namespace {

constexpr int64_t kBatch = 10'000;

std::unique_ptr<KeyedStateBackend<int64_t>> make(int store) {
  RocksDBStateBackendOptions o;
  o.instance_name = "timer-bench";
  if (store == 2) o.timer_service_factory = RocksDBTimerServiceFactory::kHeap;
  auto b = make_keyed_state_backend<int64_t>(store == 0 ? StateBackendKind::kHashMap : StateBackendKind::kRocksDB,
                                             KeyGroupRange(0, 127), 128, o);
  if (!b.is_ok()) throw std::runtime_error(b.status().to_string());
  return std::move(b).value();
}

void BM_RegisterAndFire(benchmark::State& st) {
  auto backend = make(static_cast<int>(st.range(0)));
  auto& q = backend->get_timer_queue<VoidNamespace>("timers");
  std::mt19937_64 rng(1);
  std::vector<int64_t> keys(kBatch), times(kBatch);
  for (int64_t i = 0; i < kBatch; ++i) {
    keys[static_cast<size_t>(i)] = static_cast<int64_t>(rng() >> 1);
    times[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 100'000);
  }
  int64_t base = 0;
  int64_t fired = 0;
  for (auto _ : st) {
    for (int64_t i = 0; i < kBatch; ++i) {
      backend->set_current_key(keys[static_cast<size_t>(i)]);
      q.add(backend->current_key_context(), VoidNamespace{}, base + times[static_cast<size_t>(i)]);
    }
    while (auto t = q.poll_until(INT64_MAX)) {
      backend->set_current_key(t->key);
      ++fired;
    }
    base += 100'000;  // later timers each round, as time moves on
  }
  if (fired != kBatch * static_cast<int64_t>(st.iterations())) st.SkipWithError("not every timer fired");
  st.SetItemsProcessed(fired);
  st.SetLabel(st.range(0) == 0 ? "heap" : st.range(0) == 1 ? "rocksdb" : "rocksdb+heap-timers");
}
BENCHMARK(BM_RegisterAndFire)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice

BENCHMARK_MAIN();
