// Window assigners: which windows an element belongs to (Flink's WindowAssigner family).
//
// An assigner is a value type the window operator takes as a template parameter (no virtual call per record).
// It provides:
//   using window_type = W;                               TimeWindow or GlobalWindow (time_window.h)
//   static constexpr bool kIsEventTime, kIsMerging;
//   void assign_windows(int64_t timestamp_ms, int64_t processing_time_ms, std::vector<W>& out) const;
//       appends the windows of an element with event timestamp `timestamp_ms` (event-time assigners) or arriving
//       at `processing_time_ms` (processing-time assigners); `out` is cleared by the caller and reused.
//   default_trigger_type default_trigger() const;         the trigger when the user sets none
//   merging assigners only: template <class F> void merge_windows(std::vector<W>& windows, F&& on_merge) const;
//       calls on_merge(const W& merge_result, std::vector<W>& merged) for each group of >= 2 windows to merge.
//
// Sizes, slides, offsets and gaps are milliseconds. Window starts are aligned to the epoch plus the offset with
// Flink's formula (time_window.h: window_start_ms), so an offset shifts windows, e.g. to a time zone: tumbling
// windows of one day with offset -8 h start at 08:00 UTC. Invalid arguments (size <= 0, slide <= 0,
// |offset| >= slide or size, gap <= 0) throw std::invalid_argument when the assigner is made (program building).
// Thread-safety: values, const after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/windowing/builtin_triggers.h"
#include "sluice/windowing/time_window.h"

namespace sluice {

namespace detail {
inline void check_window_size(const char* what, int64_t size_ms, int64_t slide_ms, int64_t offset_ms) {
  if (size_ms <= 0 || slide_ms <= 0) {
    throw std::invalid_argument(std::string(what) + ": expected size_ms > 0 and slide_ms > 0, got size " +
                                std::to_string(size_ms) + " ms, slide " + std::to_string(slide_ms) + " ms");
  }
  if (offset_ms <= -slide_ms || offset_ms >= slide_ms) {
    throw std::invalid_argument(std::string(what) + ": expected |offset_ms| < " + std::to_string(slide_ms) +
                                " ms (the slide, or the size for tumbling windows), got " + std::to_string(offset_ms));
  }
}
inline void check_gap(const char* what, int64_t gap_ms) {
  if (gap_ms <= 0) throw std::invalid_argument(std::string(what) + ": expected gap_ms > 0, got " + std::to_string(gap_ms));
}

// Sliding windows of size_ms every slide_ms containing t: latest start first (as Flink). Tumbling: slide == size.
inline void assign_sliding(int64_t t, int64_t size_ms, int64_t slide_ms, int64_t offset_ms, std::vector<TimeWindow>& out) {
  const int64_t last_start = window_start_ms(t, offset_ms, slide_ms);
  for (int64_t start = last_start; start > t - size_ms; start -= slide_ms) out.push_back(TimeWindow{start, start + size_ms});
}

// Session merging: sort by start, sweep, and report every run of intersecting windows with its cover.
template <class F>
void merge_time_windows(std::vector<TimeWindow>& windows, F&& on_merge) {
  std::sort(windows.begin(), windows.end());
  std::vector<TimeWindow> run;
  TimeWindow cover{};
  auto flush = [&] {
    if (run.size() > 1) on_merge(static_cast<const TimeWindow&>(cover), run);
    run.clear();
  };
  for (const TimeWindow& w : windows) {
    if (!run.empty() && cover.intersects(w)) {
      cover = cover.cover(w);
    } else {
      flush();
      cover = w;
    }
    run.push_back(w);
  }
  flush();
}
}  // namespace detail

// Fixed-size, non-overlapping windows [start, start + size) on event time.
class TumblingEventTimeWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = EventTimeTrigger;
  static constexpr bool kIsEventTime = true;
  static constexpr bool kIsMerging = false;
  static TumblingEventTimeWindows of(int64_t size_ms, int64_t offset_ms = 0) {
    detail::check_window_size("TumblingEventTimeWindows", size_ms, size_ms, offset_ms);
    return TumblingEventTimeWindows(size_ms, offset_ms);
  }
  void assign_windows(int64_t timestamp_ms, int64_t, std::vector<TimeWindow>& out) const {
    const int64_t start = window_start_ms(timestamp_ms, offset_ms_, size_ms_);
    out.push_back(TimeWindow{start, start + size_ms_});
  }
  EventTimeTrigger default_trigger() const { return {}; }
  int64_t size_ms() const { return size_ms_; }

 private:
  TumblingEventTimeWindows(int64_t size_ms, int64_t offset_ms) : size_ms_(size_ms), offset_ms_(offset_ms) {}
  int64_t size_ms_;
  int64_t offset_ms_;
};

// The same on processing time: an element belongs to the window of the moment it reaches the operator.
class TumblingProcessingTimeWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = ProcessingTimeTrigger;
  static constexpr bool kIsEventTime = false;
  static constexpr bool kIsMerging = false;
  static TumblingProcessingTimeWindows of(int64_t size_ms, int64_t offset_ms = 0) {
    detail::check_window_size("TumblingProcessingTimeWindows", size_ms, size_ms, offset_ms);
    return TumblingProcessingTimeWindows(size_ms, offset_ms);
  }
  void assign_windows(int64_t, int64_t processing_time_ms, std::vector<TimeWindow>& out) const {
    const int64_t start = window_start_ms(processing_time_ms, offset_ms_, size_ms_);
    out.push_back(TimeWindow{start, start + size_ms_});
  }
  ProcessingTimeTrigger default_trigger() const { return {}; }

 private:
  TumblingProcessingTimeWindows(int64_t size_ms, int64_t offset_ms) : size_ms_(size_ms), offset_ms_(offset_ms) {}
  int64_t size_ms_;
  int64_t offset_ms_;
};

// Windows of size_ms starting every slide_ms on event time; an element is in ceil(size / slide) windows (fewer
// when slide does not divide size).
class SlidingEventTimeWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = EventTimeTrigger;
  static constexpr bool kIsEventTime = true;
  static constexpr bool kIsMerging = false;
  static SlidingEventTimeWindows of(int64_t size_ms, int64_t slide_ms, int64_t offset_ms = 0) {
    detail::check_window_size("SlidingEventTimeWindows", size_ms, slide_ms, offset_ms);
    return SlidingEventTimeWindows(size_ms, slide_ms, offset_ms);
  }
  void assign_windows(int64_t timestamp_ms, int64_t, std::vector<TimeWindow>& out) const {
    detail::assign_sliding(timestamp_ms, size_ms_, slide_ms_, offset_ms_, out);
  }
  EventTimeTrigger default_trigger() const { return {}; }
  int64_t size_ms() const { return size_ms_; }
  int64_t slide_ms() const { return slide_ms_; }
  int64_t offset_ms() const { return offset_ms_; }

 private:
  SlidingEventTimeWindows(int64_t size_ms, int64_t slide_ms, int64_t offset_ms)
      : size_ms_(size_ms), slide_ms_(slide_ms), offset_ms_(offset_ms) {}
  int64_t size_ms_;
  int64_t slide_ms_;
  int64_t offset_ms_;
};

class SlidingProcessingTimeWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = ProcessingTimeTrigger;
  static constexpr bool kIsEventTime = false;
  static constexpr bool kIsMerging = false;
  static SlidingProcessingTimeWindows of(int64_t size_ms, int64_t slide_ms, int64_t offset_ms = 0) {
    detail::check_window_size("SlidingProcessingTimeWindows", size_ms, slide_ms, offset_ms);
    return SlidingProcessingTimeWindows(size_ms, slide_ms, offset_ms);
  }
  void assign_windows(int64_t, int64_t processing_time_ms, std::vector<TimeWindow>& out) const {
    detail::assign_sliding(processing_time_ms, size_ms_, slide_ms_, offset_ms_, out);
  }
  ProcessingTimeTrigger default_trigger() const { return {}; }

 private:
  SlidingProcessingTimeWindows(int64_t size_ms, int64_t slide_ms, int64_t offset_ms)
      : size_ms_(size_ms), slide_ms_(slide_ms), offset_ms_(offset_ms) {}
  int64_t size_ms_;
  int64_t slide_ms_;
  int64_t offset_ms_;
};

// Session windows with a static gap on event time: each element opens [t, t + gap); windows that intersect merge
// (time_window.h), so a session ends after gap_ms without elements of its key.
class EventTimeSessionWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = EventTimeTrigger;
  static constexpr bool kIsEventTime = true;
  static constexpr bool kIsMerging = true;
  static EventTimeSessionWindows with_gap(int64_t gap_ms) {
    detail::check_gap("EventTimeSessionWindows", gap_ms);
    return EventTimeSessionWindows(gap_ms);
  }
  void assign_windows(int64_t timestamp_ms, int64_t, std::vector<TimeWindow>& out) const {
    out.push_back(TimeWindow{timestamp_ms, timestamp_ms + gap_ms_});
  }
  template <class F>
  void merge_windows(std::vector<TimeWindow>& windows, F&& on_merge) const {
    detail::merge_time_windows(windows, std::forward<F>(on_merge));
  }
  EventTimeTrigger default_trigger() const { return {}; }

 private:
  explicit EventTimeSessionWindows(int64_t gap_ms) : gap_ms_(gap_ms) {}
  int64_t gap_ms_;
};

class ProcessingTimeSessionWindows {
 public:
  using window_type = TimeWindow;
  using default_trigger_type = ProcessingTimeTrigger;
  static constexpr bool kIsEventTime = false;
  static constexpr bool kIsMerging = true;
  static ProcessingTimeSessionWindows with_gap(int64_t gap_ms) {
    detail::check_gap("ProcessingTimeSessionWindows", gap_ms);
    return ProcessingTimeSessionWindows(gap_ms);
  }
  void assign_windows(int64_t, int64_t processing_time_ms, std::vector<TimeWindow>& out) const {
    out.push_back(TimeWindow{processing_time_ms, processing_time_ms + gap_ms_});
  }
  template <class F>
  void merge_windows(std::vector<TimeWindow>& windows, F&& on_merge) const {
    detail::merge_time_windows(windows, std::forward<F>(on_merge));
  }
  ProcessingTimeTrigger default_trigger() const { return {}; }

 private:
  explicit ProcessingTimeSessionWindows(int64_t gap_ms) : gap_ms_(gap_ms) {}
  int64_t gap_ms_;
};

// All elements of a key in one GlobalWindow. Its default trigger never fires: set one (count, custom).
class GlobalWindows {
 public:
  using window_type = GlobalWindow;
  using default_trigger_type = NeverTrigger;
  static constexpr bool kIsEventTime = false;
  static constexpr bool kIsMerging = false;
  static GlobalWindows create() { return {}; }
  void assign_windows(int64_t, int64_t, std::vector<GlobalWindow>& out) const { out.push_back(GlobalWindow{}); }
  NeverTrigger default_trigger() const { return {}; }
};

}  // namespace sluice
