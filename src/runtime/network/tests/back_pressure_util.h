// Helpers for the back-pressure tests, in-process and remote: their channel configuration, a producer thread
// that is cancelled and joined however the test ends (a failed ASSERT returns early), and the endless producer
// such tests run in it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "runtime/network/result_partition.h"

namespace sluice::runtime::testing {

// 64-byte records, 16 to a buffer; 2 credits and 5 sender buffers per channel.
inline constexpr int32_t kRecordBytes = 64;
inline constexpr int32_t kRecordsPerBuffer = 16;

inline NetworkConfig bound_config() {
  NetworkConfig c;
  c.buffer_size_bytes = kRecordBytes * kRecordsPerBuffer;
  c.credits_per_channel = 2;
  c.max_buffers_per_channel = 5;
  return c;
}

class ProducerThread {
 public:
  ProducerThread(ResultPartition& partition, std::function<void()> body)
      : partition_(partition), thread_(std::move(body)) {}
  ~ProducerThread() { join(); }
  ProducerThread(const ProducerThread&) = delete;
  ProducerThread& operator=(const ProducerThread&) = delete;
  // Cancels the partition (which wakes a blocked emit) and joins.
  void join() {
    if (!thread_.joinable()) return;
    partition_.cancel();
    thread_.join();
  }

 private:
  ResultPartition& partition_;
  std::thread thread_;
};

// Emits `record_bytes`-byte records to subpartition 0 until cancelled, counting each once emit_record returned.
inline void emit_until_cancelled(ResultPartition& partition, size_t record_bytes, std::atomic<int64_t>& emitted) {
  std::vector<uint8_t> record(record_bytes, 1);
  while (!partition.is_cancelled()) {
    partition.emit_record(0, record.data(), record.size());
    emitted.fetch_add(1);
  }
}

// Emits `count` `record_bytes`-byte records to subpartition 0, counting each once emit_record returned, then
// finishes the partition.
inline void emit_and_finish(ResultPartition& partition, size_t record_bytes, int64_t count,
                            std::atomic<int64_t>& emitted) {
  std::vector<uint8_t> record(record_bytes, 2);
  for (int64_t i = 0; i < count; ++i) {
    partition.emit_record(0, record.data(), record.size());
    emitted.fetch_add(1);
  }
  partition.finish();
}

}  // namespace sluice::runtime::testing
