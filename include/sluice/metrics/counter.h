// Counter: a monotonically growing (or explicitly decremented) 64-bit count, e.g. numRecordsOut.
//
// Single-writer rule: exactly one thread (the owning task thread) calls inc()/dec(); any thread may call
// count(). That is why an update is a relaxed load plus a relaxed store and not a locked read-modify-write:
// on the per-record path it costs an ordinary add, with no bus lock. Two writers would lose increments.
// Readers see a recent value (no ordering with other memory is implied).
//
// Each Counter occupies its own cache line, so counters of different task threads never share one.
#pragma once

#include <atomic>
#include <cstdint>

namespace sluice {

class alignas(64) Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Owner thread only.
  void inc(int64_t n = 1) { value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void dec(int64_t n = 1) { inc(-n); }

  // Any thread.
  int64_t count() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

}  // namespace sluice
