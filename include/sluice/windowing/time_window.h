// Windows: TimeWindow, a half-open interval of time [start_ms, end_ms), and GlobalWindow, the one window of
// global windowing (Flink's TimeWindow / GlobalWindow).
//
// A window is the namespace of the window operator's keyed state and timers (state/internal_kv_state.h), so it
// has a TypeSerializer and an equality that agrees with its serialized bytes. TimeWindow's max_timestamp() is
// end_ms - 1: the last millisecond that belongs to it, and the time at which the event-time trigger fires.
// GlobalWindow's max_timestamp() is INT64_MAX (it never ends).
//
// Merging (session windows): two TimeWindows intersect when start <= other.end && end >= other.start, so
// windows that merely touch ([0, 10) and [10, 20)) merge too, as in Flink; cover() is the smallest window that
// contains both.
//
// window_start_ms is Flink's TimeWindow.getWindowStartWithOffset: the start of the window of `size_ms` (aligned
// to the epoch plus `offset_ms`) that contains `timestamp_ms`, also for negative timestamps:
//   timestamp - (timestamp - offset + size) % size,  with the remainder taken into [0, size).
// Thread-safety: values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "sluice/core/serializer.h"

namespace sluice {

struct TimeWindow {
  int64_t start_ms = 0;
  int64_t end_ms = 0;  // exclusive

  int64_t max_timestamp() const { return end_ms - 1; }
  bool intersects(const TimeWindow& other) const { return start_ms <= other.end_ms && end_ms >= other.start_ms; }
  TimeWindow cover(const TimeWindow& other) const {
    return TimeWindow{std::min(start_ms, other.start_ms), std::max(end_ms, other.end_ms)};
  }
  bool operator==(const TimeWindow&) const = default;
  // Earlier start first, then earlier end (the merge order of session windows).
  bool operator<(const TimeWindow& o) const { return start_ms != o.start_ms ? start_ms < o.start_ms : end_ms < o.end_ms; }
  std::string to_string() const {
    return "TimeWindow[" + std::to_string(start_ms) + ", " + std::to_string(end_ms) + ")";
  }

  SLUICE_FIELDS(TimeWindow, start_ms, end_ms)
};

// Start of the window of size_ms with offset_ms that holds timestamp_ms. Requires size_ms > 0 and
// |offset_ms| < size_ms (the assigners check).
inline int64_t window_start_ms(int64_t timestamp_ms, int64_t offset_ms, int64_t size_ms) {
  int64_t rem = (timestamp_ms - offset_ms + size_ms) % size_ms;
  if (rem < 0) rem += size_ms;  // C++ keeps the dividend's sign; Java too, and Flink adds size for that reason
  return timestamp_ms - rem;
}

// The single window of GlobalWindows: all elements of a key.
struct GlobalWindow {
  int64_t max_timestamp() const { return std::numeric_limits<int64_t>::max(); }
  bool operator==(const GlobalWindow&) const = default;
  std::string to_string() const { return "GlobalWindow"; }
};

template <>
struct TypeSerializer<GlobalWindow> {
  static void serialize(const GlobalWindow&, DataOutputView&) {}
  static GlobalWindow deserialize(DataInputView&) { return {}; }
  static TypeSerializerSnapshot snapshot() { return {"global-window", 1, {}}; }
};

}  // namespace sluice
