// Injectable time. Nothing under runtime/ or coordinator/ reads the wall clock directly: it asks a Clock,
// so tests can drive time by hand (ManualClock) and failure runs replay deterministically.
//
// Units: milliseconds since the Unix epoch for wall time (`now_ms`), nanoseconds from an arbitrary origin
// for elapsed-time measurement (`monotonic_ns`). Thread-safety: every Clock is safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace sluice {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ms() const = 0;        // wall-clock time, ms since epoch (processing time)
  virtual int64_t monotonic_ns() const = 0;  // for durations; never goes back
};

class SystemClock final : public Clock {
 public:
  int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  int64_t monotonic_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // The process-wide instance used when nobody injects a clock.
  static std::shared_ptr<Clock> shared();
};

// A clock that moves only when told to. Both readings advance together.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 0) : now_ns_(start_ms * 1'000'000) {}
  int64_t now_ms() const override { return now_ns_.load() / 1'000'000; }
  int64_t monotonic_ns() const override { return now_ns_.load(); }
  void advance_ms(int64_t ms) { now_ns_.fetch_add(ms * 1'000'000); }
  void set_ms(int64_t ms) { now_ns_.store(ms * 1'000'000); }

 private:
  std::atomic<int64_t> now_ns_;
};

}  // namespace sluice
