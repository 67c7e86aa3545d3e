// Records/s through one channel. Build with SLUICE_BUILD_BENCH=ON (release preset), run
//   build/release/src/runtime/network/network_bench
//
// TwoThreads: a producer (the benchmark thread) emits fixed-size records into a ResultPartition with one
// subpartition; a consumer thread polls the InputGate, reads every record (one byte each) and recycles.
// Each iteration emits a batch and waits until the consumer has it all, so the time covers both sides.
// OneThread: emit a buffer's worth, then poll and recycle on the same thread: the per-record cost of the
// stack without any hand-off between cores.
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"

namespace sluice::runtime {
namespace {

constexpr int64_t kBatchRecords = 1 << 20;

uint64_t read_records(const Buffer& buffer, size_t record_bytes) {
  uint64_t sum = 0;
  for (size_t off = 0; off < buffer.bytes.size(); off += record_bytes) sum += buffer.bytes[off];
  return sum;
}

void BM_TwoThreads(benchmark::State& state) {
  const size_t record_bytes = static_cast<size_t>(state.range(0));
  NetworkConfig config;  // Flink's defaults: 32 KiB buffers, 2 credits, 10 buffers per subpartition
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  std::atomic<int64_t> consumed{0};
  std::atomic<uint64_t> checksum{0};
  std::thread consumer([&] {
    int64_t n = 0;
    uint64_t sum = 0;
    while (!gate.is_finished()) {
      std::optional<BufferOrEvent> next = gate.poll_next();
      if (!next) {
        consumer_n.wait(std::chrono::milliseconds(100));
        continue;
      }
      if (!next->is_buffer()) continue;
      sum += read_records(next->buffer(), record_bytes);
      n += next->buffer().num_records;
      gate.recycle(std::move(next->buffer()));
      consumed.store(n, std::memory_order_release);
    }
    checksum = sum;
  });
  std::vector<uint8_t> record(record_bytes, 1);
  int64_t emitted = 0;
  for (auto _ : state) {
    for (int64_t i = 0; i < kBatchRecords; ++i) partition.emit_record(0, record.data(), record.size());
    emitted += kBatchRecords;
    partition.flush_all();
    while (consumed.load(std::memory_order_acquire) < emitted) std::this_thread::yield();
  }
  partition.finish();
  consumer.join();
  benchmark::DoNotOptimize(checksum.load());
  state.SetItemsProcessed(emitted);
  state.SetBytesProcessed(emitted * static_cast<int64_t>(record_bytes));
  state.counters["back_pressured_ms"] = static_cast<double>(partition.back_pressured_time_ns()) / 1e6;
}
BENCHMARK(BM_TwoThreads)->Arg(16)->Arg(100)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_OneThread(benchmark::State& state) {
  const size_t record_bytes = static_cast<size_t>(state.range(0));
  NetworkConfig config;
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  std::vector<uint8_t> record(record_bytes, 1);
  const int64_t per_buffer = config.buffer_size_bytes / static_cast<int64_t>(record_bytes);
  uint64_t sum = 0;
  int64_t emitted = 0;
  for (auto _ : state) {
    for (int64_t i = 0; i < kBatchRecords; i += per_buffer) {
      for (int64_t r = 0; r < per_buffer; ++r) partition.emit_record(0, record.data(), record.size());
      partition.flush_all();
      while (std::optional<BufferOrEvent> next = gate.poll_next()) {
        sum += read_records(next->buffer(), record_bytes);
        gate.recycle(std::move(next->buffer()));
      }
    }
    emitted += (kBatchRecords + per_buffer - 1) / per_buffer * per_buffer;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(emitted);
  state.SetBytesProcessed(emitted * static_cast<int64_t>(record_bytes));
}
BENCHMARK(BM_OneThread)->Arg(16)->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::runtime

BENCHMARK_MAIN();
