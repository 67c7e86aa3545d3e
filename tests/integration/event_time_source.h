// The event-time test source shared by watermarks_it and event_time_timers_it: records of several splits with
// jittered, partly late and partly far-ahead timestamps (ts_of), read interleaved through per-split outputs, and
// the failure-free answer for their late decisions under per-record (punctuated) watermarks (late_oracle).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace sluice::event_time_test {

struct Ev {
  int64_t split = 0;
  int64_t index = 0;
  int64_t ts = 0;
  SLUICE_FIELDS(Ev, split, index, ts)
};

// Event time of record `i` of split `s`: rising by 10 ms per record with +-30 ms of jitter, every 23rd record
// 700 ms behind (late under a 50 ms bound), and two records stamped 4 s ahead (at 100 + s and 800 + s): each
// makes the ~400 records after it late, so a restore that forgot the split's watermark (Flink's behaviour) would
// let late records through as on time whenever it falls in such a stretch.
inline int64_t ts_of(int64_t s, int64_t i) {
  uint64_t h = static_cast<uint64_t>(s * 1'000'003 + i) * 0x9E3779B97F4A7C15ull;
  int64_t jitter = static_cast<int64_t>((h >> 33) % 61) - 30;
  int64_t t = 1'000'000 + i * 10 + jitter;
  if (i == 100 + s || i == 800 + s) return t + 4'000;
  return i % 23 == 22 ? t - 700 : t;
}

constexpr int64_t kBoundMs = 50;

// The failure-free answer: per split, in order, the punctuated rule (watermark = highest timestamp - bound - 1
// after each on-time record; a record at or below the watermark is late).
inline std::set<std::pair<int64_t, int64_t>> late_oracle(int64_t splits, int64_t per_split) {
  std::set<std::pair<int64_t, int64_t>> late;
  for (int64_t s = 0; s < splits; ++s) {
    int64_t max_ts = INT64_MIN;
    for (int64_t i = 0; i < per_split; ++i) {
      int64_t t = ts_of(s, i);
      if (max_ts != INT64_MIN && t <= max_ts - kBoundMs - 1) {
        late.insert({s, i});
      } else {
        max_ts = std::max(max_ts, t);
      }
    }
  }
  return late;
}

// A split of the test source: split `id`, records [next, count).
struct EvSplit {
  int64_t id = 0;
  int64_t next = 0;
  int64_t count = 0;
  std::string split_id() const { return "split-" + std::to_string(id); }
  SLUICE_FIELDS(EvSplit, id, next, count)
};

// Assigns split s to subtask s % parallelism when that reader registers (also after a restart, from the splits
// still unassigned at the restored checkpoint), so every subtask reads splits.
class EvEnumerator final : public SplitEnumerator<EvSplit> {
 public:
  EvEnumerator(SplitEnumeratorContext<EvSplit>& ctx, std::deque<EvSplit> splits) : ctx_(ctx), splits_(std::move(splits)) {}
  void add_reader(int32_t subtask) override {
    const int32_t p = ctx_.current_parallelism();
    std::deque<EvSplit> keep;
    for (auto& s : splits_) {
      if (s.id % p == subtask) ctx_.assign_split(s, subtask);
      else keep.push_back(s);
    }
    splits_ = std::move(keep);
    ctx_.signal_no_more_splits(subtask);
  }
  void handle_split_request(int32_t) override {}
  void add_splits_back(std::vector<EvSplit> splits, int32_t) override {
    for (auto& s : splits) splits_.push_back(s);
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override {
    return serialize_bytes(std::vector<EvSplit>(splits_.begin(), splits_.end()));
  }

 private:
  SplitEnumeratorContext<EvSplit>& ctx_;
  std::deque<EvSplit> splits_;
};

// Reads its splits interleaved (one record of each in turn), each through its own split output, pausing 1 ms
// every `pause_every` records so that checkpoints fall in the middle of the stream.
class EvSource final : public Source<Ev, EvSplit> {
 public:
  EvSource(int64_t splits, int64_t per_split, int64_t pause_every)
      : splits_(splits), per_split_(per_split), pause_every_(pause_every) {}
  Boundedness boundedness() const override { return Boundedness::kBounded; }
  std::unique_ptr<SplitEnumerator<EvSplit>> create_enumerator(SplitEnumeratorContext<EvSplit>& ctx) const override {
    std::deque<EvSplit> all;
    for (int64_t s = 0; s < splits_; ++s) all.push_back(EvSplit{s, 0, per_split_});
    return std::make_unique<EvEnumerator>(ctx, std::move(all));
  }
  std::unique_ptr<SplitEnumerator<EvSplit>> restore_enumerator(SplitEnumeratorContext<EvSplit>& ctx,
                                                               const std::vector<uint8_t>& state) const override {
    auto splits = deserialize_bytes<std::vector<EvSplit>>(state.data(), state.size(), "EvSource enumerator");
    if (!splits.is_ok()) throw std::invalid_argument(splits.status().to_string());
    return std::make_unique<EvEnumerator>(ctx, std::deque<EvSplit>(splits->begin(), splits->end()));
  }
  std::unique_ptr<SourceReader<Ev, EvSplit>> create_reader(SourceReaderContext& ctx) const override {
    return std::make_unique<Reader>(ctx, pause_every_);
  }

 private:
  class Reader final : public SourceReader<Ev, EvSplit> {
   public:
    Reader(SourceReaderContext& ctx, int64_t pause_every) : ctx_(ctx), pause_every_(pause_every) {}
    InputStatus poll_next(ReaderOutput<Ev>& out) override {
      // Every split the subtask will read is known before its first record (the enumerator assigns them all at
      // once, then says no more), and all get their outputs up front: the subtask's watermark is the minimum
      // over all of them from the start, never one split's alone.
      if (!no_more_) return InputStatus::kNothingAvailable;
      if (!started_) {
        for (const EvSplit& s : splits_) out.create_output_for_split(s.split_id());
        started_ = true;
      }
      if (splits_.empty()) return InputStatus::kEndOfInput;
      if (pause_every_ > 0 && ++polls_ % pause_every_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      cursor_ %= splits_.size();
      EvSplit& s = splits_[cursor_];
      out.create_output_for_split(s.split_id()).collect(Ev{s.id, s.next, ts_of(s.id, s.next)});
      if (++s.next >= s.count) {
        out.release_output_for_split(s.split_id());
        splits_.erase(splits_.begin() + static_cast<std::ptrdiff_t>(cursor_));
      } else {
        ++cursor_;
      }
      return splits_.empty() && no_more_ ? InputStatus::kEndOfInput : InputStatus::kMoreAvailable;
    }
    void add_splits(std::vector<EvSplit> splits) override {
      for (auto& s : splits) splits_.push_back(s);
    }
    void notify_no_more_splits() override { no_more_ = true; }
    std::vector<EvSplit> snapshot_state() override { return splits_; }

   private:
    SourceReaderContext& ctx_;
    int64_t pause_every_;
    std::vector<EvSplit> splits_;
    size_t cursor_ = 0;
    int64_t polls_ = 0;
    bool no_more_ = false;
    bool started_ = false;
  };
  int64_t splits_, per_split_, pause_every_;
};

// Emits max_ts - bound - 1 after every event (per-record watermarks: late decisions independent of timing).
class PunctuatedBound final : public WatermarkGenerator<Ev> {
 public:
  void on_event(const Ev& e, int64_t ts, WatermarkOutput& out) override {
    inner_.on_event(e, ts, out);
    out.emit_watermark(inner_.current_watermark_ms());
  }
  void on_periodic_emit(WatermarkOutput&) override {}
  std::vector<uint8_t> snapshot_state() const override { return inner_.snapshot_state(); }
  void restore_state(const std::vector<uint8_t>& s) override { inner_.restore_state(s); }

 private:
  BoundedOutOfOrdernessWatermarks<Ev> inner_{kBoundMs};
};

inline WatermarkStrategy<Ev> punctuated_strategy() {
  return WatermarkStrategy<Ev>::for_generator(
             [](const WatermarkGeneratorContext&) { return std::make_unique<PunctuatedBound>(); })
      .with_timestamp_assigner([](const Ev& e) { return e.ts; })
      .with_late_records_to("late");
}

}  // namespace sluice::event_time_test
