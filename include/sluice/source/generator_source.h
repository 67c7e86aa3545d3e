// Convenience sources for users and tests (Flink's DataGeneratorSource, fromData, fromSequence):
// a generator function over indices [0, count), with an optional rate limit.
//
// The index space is cut into one contiguous split per parallel subtask when the job starts; a split's
// position is the next index to emit, which a checkpoint stores and a restore seeks back to. The generator
// must be a pure function of the index (so a replay produces the same records). Each split's records go
// through its own split output (per-split watermarks when the source has a WatermarkStrategy). Rate limit:
// records per second for the whole source, shared evenly by the subtasks, paced by the task's clock from the
// subtask's first record (record n is allowed at first + n / rate); 0 = unlimited.
// Thread-safety: the generator is copied into every reader; it must not share mutable state.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/serializer.h"
#include "sluice/source/source.h"

namespace sluice {

// A contiguous range [start, end) of indices; `next` is the position (the next index to emit).
struct IndexRangeSplit {
  int64_t start = 0;
  int64_t end = 0;
  int64_t next = 0;
  std::string split_id() const { return std::to_string(start) + "-" + std::to_string(end); }
  bool operator==(const IndexRangeSplit&) const = default;
  SLUICE_FIELDS(IndexRangeSplit, start, end, next)
};

// Assigns a fixed list of splits on request, then signals no more splits.
class IndexRangeEnumerator final : public SplitEnumerator<IndexRangeSplit> {
 public:
  // Continues from snapshot_state() bytes: the splits not handed out at that checkpoint.
  IndexRangeEnumerator(SplitEnumeratorContext<IndexRangeSplit>& ctx, const std::vector<uint8_t>& state) : ctx_(ctx) {
    auto splits = deserialize_bytes<std::vector<IndexRangeSplit>>(state.data(), state.size(), "generator source enumerator state");
    if (!splits.is_ok()) throw std::invalid_argument(splits.status().to_string());
    splits_.assign(splits->begin(), splits->end());
  }
  IndexRangeEnumerator(SplitEnumeratorContext<IndexRangeSplit>& ctx, int64_t count) : ctx_(ctx) {
    int32_t p = ctx.current_parallelism();
    // floor(count * i / p) without overflowing for counts near 2^63: count = q*p + r.
    auto boundary = [count, p](int64_t i) { return (count / p) * i + (count % p) * i / p; };
    for (int32_t i = 0; i < p; ++i) {
      int64_t s = boundary(i), e = boundary(i + 1);
      if (e > s) splits_.push_back(IndexRangeSplit{s, e, s});
    }
  }
  void add_reader(int32_t) override {}
  void handle_split_request(int32_t subtask) override {
    if (splits_.empty()) {
      ctx_.signal_no_more_splits(subtask);
      return;
    }
    ctx_.assign_split(splits_.front(), subtask);
    splits_.pop_front();
  }
  void add_splits_back(std::vector<IndexRangeSplit> splits, int32_t) override {
    for (auto& s : splits) splits_.push_back(s);
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override {
    return serialize_bytes(std::vector<IndexRangeSplit>(splits_.begin(), splits_.end()));
  }

 private:
  SplitEnumeratorContext<IndexRangeSplit>& ctx_;
  std::deque<IndexRangeSplit> splits_;
};

// F: int64_t index -> T.
template <class T, class F>
class GeneratorSource final : public Source<T, IndexRangeSplit> {
 public:
  GeneratorSource(int64_t count, F generator, double records_per_second = 0)
      : count_(count), generator_(std::move(generator)), rate_(records_per_second) {}

  Boundedness boundedness() const override { return Boundedness::kBounded; }
  std::unique_ptr<SplitEnumerator<IndexRangeSplit>> create_enumerator(
      SplitEnumeratorContext<IndexRangeSplit>& ctx) const override {
    return std::make_unique<IndexRangeEnumerator>(ctx, count_);
  }
  std::unique_ptr<SplitEnumerator<IndexRangeSplit>> restore_enumerator(
      SplitEnumeratorContext<IndexRangeSplit>& ctx, const std::vector<uint8_t>& state) const override {
    return std::make_unique<IndexRangeEnumerator>(ctx, state);
  }
  std::unique_ptr<SourceReader<T, IndexRangeSplit>> create_reader(SourceReaderContext& ctx) const override {
    double per_subtask = rate_ > 0 ? rate_ / ctx.parallelism() : 0;
    return std::make_unique<Reader>(ctx, generator_, per_subtask);
  }

 private:
  class Reader final : public SourceReader<T, IndexRangeSplit> {
   public:
    Reader(SourceReaderContext& ctx, F gen, double rate) : ctx_(ctx), gen_(std::move(gen)), rate_(rate) {}
    void start() override { ctx_.send_split_request(); }
    InputStatus poll_next(ReaderOutput<T>& out) override {
      if (splits_.empty()) {
        if (no_more_) return InputStatus::kEndOfInput;
        return InputStatus::kNothingAvailable;
      }
      if (rate_ > 0 && !permit()) return InputStatus::kNothingAvailable;
      IndexRangeSplit& s = splits_.front();
      // Per-split output (per-split watermarks with a WatermarkStrategy; the plain output without one).
      if (split_out_ == nullptr) split_out_ = &out.create_output_for_split(s.split_id());
      split_out_->collect(gen_(s.next));
      ++emitted_;
      if (++s.next >= s.end) {
        out.release_output_for_split(s.split_id());
        split_out_ = nullptr;
        splits_.pop_front();
        ctx_.send_split_request();
      }
      return splits_.empty() && no_more_ ? InputStatus::kEndOfInput : InputStatus::kMoreAvailable;
    }
    void add_splits(std::vector<IndexRangeSplit> splits) override {
      for (auto& s : splits) splits_.push_back(s);
    }
    void notify_no_more_splits() override { no_more_ = true; }
    std::vector<IndexRangeSplit> snapshot_state() override { return {splits_.begin(), splits_.end()}; }
    std::chrono::nanoseconds idle_wait_hint() const override {
      if (rate_ <= 0 || splits_.empty()) return std::chrono::milliseconds(1);
      return std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate_));
    }

   private:
    // Allows the n-th record at start + n / rate.
    bool permit() {
      int64_t now = ctx_.clock().monotonic_ns();
      if (start_ns_ < 0) start_ns_ = now;
      double allowed = static_cast<double>(now - start_ns_) * 1e-9 * rate_ + 1;
      return static_cast<double>(emitted_) < allowed;
    }

    SourceReaderContext& ctx_;
    F gen_;
    double rate_;
    std::deque<IndexRangeSplit> splits_;
    SourceOutput<T>* split_out_ = nullptr;  // the front split's output
    bool no_more_ = false;
    int64_t emitted_ = 0;
    int64_t start_ns_ = -1;
  };

  int64_t count_;
  F generator_;
  double rate_;
};

template <class F>
auto make_generator_source(int64_t count, F generator, double records_per_second = 0) {
  using T = std::decay_t<std::invoke_result_t<F&, int64_t>>;
  return GeneratorSource<T, F>(count, std::move(generator), records_per_second);
}

}  // namespace sluice
