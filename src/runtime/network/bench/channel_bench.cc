// Records/s through one channel, in-process and remote. Build with SLUICE_BUILD_BENCH=ON (release preset), run
//   build/release/src/runtime/network/network_bench
//
// TwoThreads: a producer (the benchmark thread) emits fixed-size records into a ResultPartition with one
// subpartition; a consumer thread polls the InputGate, reads every record (one byte each) and recycles.
// Each iteration emits a batch and waits until the consumer has it all, so the time covers both sides.
// RemoteChannel: the same through a remote channel over loopback (two data planes in this process).
// Both report the process's CPU time per record (cpu_ns_per_record; the CPU column is process CPU time too).
// LoopbackTcpFloor: the same bytes through a plain loopback TCP socket between two threads, the floor under
// RemoteChannel.
// OneThread: emit a buffer's worth, then poll and recycle on the same thread: the per-record cost of the
// stack without any hand-off between cores.
#include <benchmark/benchmark.h>

#include <asio.hpp>
#include <atomic>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tcp/data_connection_manager.h"
#include "sluice/core/process_cpu_time.h"

namespace sluice::runtime {
namespace {

constexpr int64_t kBatchRecords = 1 << 20;

uint64_t read_records(const Buffer& buffer, size_t record_bytes) {
  uint64_t sum = 0;
  for (size_t off = 0; off < buffer.bytes.size(); off += record_bytes) sum += buffer.bytes[off];
  return sum;
}

// Producer on the benchmark thread, consumer on its own thread, through `gate` (fed by `partition`). Reports
// records/s (real time) and the process's CPU time per record, both threads and any network thread included.
void run_two_threads(benchmark::State& state, ResultPartition& partition, InputGate& gate, TaskNotifier& consumer_n) {
  const size_t record_bytes = static_cast<size_t>(state.range(0));
  std::atomic<int64_t> consumed{0};
  std::atomic<int64_t> batch_end{0};
  TaskNotifier batch_done;  // the producer sleeps (no spinning: CPU time is measured) until a batch is consumed
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
      if (n >= batch_end.load(std::memory_order_acquire)) batch_done.notify();
    }
    checksum = sum;
  });
  std::vector<uint8_t> record(record_bytes, 1);
  int64_t emitted = 0;
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    for (int64_t i = 0; i < kBatchRecords; ++i) partition.emit_record(0, record.data(), record.size());
    emitted += kBatchRecords;
    batch_end.store(emitted, std::memory_order_release);
    partition.flush_all();
    while (consumed.load(std::memory_order_acquire) < emitted) batch_done.wait(std::chrono::milliseconds(100));
  }
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  partition.finish();
  consumer.join();
  benchmark::DoNotOptimize(checksum.load());
  state.SetItemsProcessed(emitted);
  state.SetBytesProcessed(emitted * static_cast<int64_t>(record_bytes));
  state.counters["back_pressured_ms"] = static_cast<double>(partition.back_pressured_time_ns()) / 1e6;
  state.counters["cpu_ns_per_record"] = cpu_seconds * 1e9 / static_cast<double>(emitted);
}

// range(1): credits per channel (Flink's default 2; Flink's remote channels also get 8 floating buffers per gate,
// which Sluice does not have, hence the runs with 10).
NetworkConfig bench_config(const benchmark::State& state) {
  NetworkConfig config;  // Flink's defaults: 32 KiB buffers, 2 credits, 10 buffers per subpartition
  config.credits_per_channel = static_cast<int32_t>(state.range(1));
  return config;
}

void BM_TwoThreads(benchmark::State& state) {
  const NetworkConfig config = bench_config(state);
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  InputGate gate({partition.channel(0)}, &consumer_n);
  run_two_threads(state, partition, gate, consumer_n);
}
BENCHMARK(BM_TwoThreads)->ArgsProduct({{16, 100, 1000}, {2, 10}})->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

// The same through a remote channel: two data planes (TaskManagers 1 and 2) in this process, one TCP
// connection over loopback. Its CPU time includes the IO threads of both.
void BM_RemoteChannel(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);
  tcp::DataPlaneConfig config1, config2;
  config1.taskmanager_id = 1;
  config2.taskmanager_id = 2;
  auto tm1 = tcp::DataConnectionManager::start(config1, {});
  auto tm2 = tcp::DataConnectionManager::start(config2, {});
  if (!tm1.is_ok() || !tm2.is_ok() || !(*tm1)->add_peer(2, "127.0.0.1", (*tm2)->port()).is_ok() ||
      !(*tm2)->add_peer(1, "127.0.0.1", (*tm1)->port()).is_ok()) {
    state.SkipWithError("could not start the data planes");
    return;
  }
  const NetworkConfig config = bench_config(state);
  TaskNotifier producer_n, consumer_n;
  ResultPartition partition(1, config, &producer_n);
  const tcp::RemoteChannelId id{0, 0, 0, 0};
  auto input = (*tm2)->register_input(id, 1, config);
  if (!input.is_ok() || !(*tm1)->register_output(id, 2, partition.channel(0)).is_ok()) {
    state.SkipWithError("could not register the channel");
    return;
  }
  InputGate gate({input.value()}, &consumer_n);
  run_two_threads(state, partition, gate, consumer_n);
}
BENCHMARK(BM_RemoteChannel)->ArgsProduct({{16, 100}, {2, 10}})->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

// The floor under any TCP data plane: the same records, packed into 32 KiB buffers the same way, written with
// blocking writes to a loopback TCP socket by the producer thread and read with blocking reads by the consumer
// thread - no framing, no credits, no IO threads. What the kernel's two copies and its wake-ups cost; a remote
// channel cannot be cheaper than this. range(1): buffers per write (1, or 8 to see that larger writes do not
// make the kernel's cost per byte smaller).
void BM_LoopbackTcpFloor(benchmark::State& state) {
  const size_t record_bytes = static_cast<size_t>(state.range(0));
  const size_t buffer_bytes = static_cast<size_t>(NetworkConfig{}.buffer_size_bytes);
  const size_t per_buffer = buffer_bytes / record_bytes;
  const size_t filled = per_buffer * record_bytes * static_cast<size_t>(state.range(1));
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  asio::ip::tcp::socket sender(io), receiver(io);
  sender.connect(acceptor.local_endpoint());
  acceptor.accept(receiver);
  std::atomic<int64_t> consumed{0};
  std::atomic<uint64_t> checksum{0};
  std::thread consumer([&] {
    std::vector<uint8_t> buffer(filled);
    uint64_t sum = 0;
    int64_t n = 0;
    asio::error_code error;
    while (asio::read(receiver, asio::buffer(buffer), error) == filled) {
      for (size_t off = 0; off < filled; off += record_bytes) sum += buffer[off];
      n += static_cast<int64_t>(filled / record_bytes);
      consumed.store(n, std::memory_order_release);
      consumed.notify_one();
    }
    checksum = sum;
  });
  std::vector<uint8_t> record(record_bytes, 1);
  std::vector<uint8_t> buffer(filled);
  int64_t emitted = 0;
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    const int64_t per_write = static_cast<int64_t>(filled / record_bytes);
    for (int64_t i = 0; i < kBatchRecords; i += per_write) {
      for (size_t off = 0; off < filled; off += record_bytes) std::memcpy(buffer.data() + off, record.data(), record_bytes);
      asio::write(sender, asio::buffer(buffer));
      emitted += per_write;
    }
    for (int64_t seen = consumed.load(std::memory_order_acquire); seen < emitted;
         seen = consumed.load(std::memory_order_acquire)) {
      consumed.wait(seen, std::memory_order_acquire);
    }
  }
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  sender.close();
  consumer.join();
  benchmark::DoNotOptimize(checksum.load());
  state.SetItemsProcessed(emitted);
  state.SetBytesProcessed(emitted * static_cast<int64_t>(record_bytes));
  state.counters["cpu_ns_per_record"] = cpu_seconds * 1e9 / static_cast<double>(emitted);
}
BENCHMARK(BM_LoopbackTcpFloor)->ArgsProduct({{16, 100}, {1, 8}})->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

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
