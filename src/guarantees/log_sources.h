// The two sources of the guarantee table, over one RecordLog (record_log.h), identical but for replayability:
//  - ReplayableLogSource: its split's state is the offset of the next record; a checkpoint stores it and a
//    restore seeks back to it, so the records after the checkpoint are read again (Flink's replayable sources:
//    Kafka, files).
//  - ConsumeOnceLogSource: its split has no position at all; the reader takes records from the log, which
//    hands each out once (a socket, a delete-on-delivery queue). After a restore it goes on with what nobody
//    took yet: what was taken after the restored checkpoint is gone.
// Both: one split (source parallelism 1 reads it all; other readers get no split), bounded: end of input when
// the log is closed and read to its end. Records carry no timestamps. Threading: as every source
// (source/source.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "guarantees/record_log.h"
#include "sluice/core/serializer.h"
#include "sluice/source/source.h"

namespace sluice::guarantees {

struct LogOffsetSplit {
  int64_t offset = 0;  // the next record to read
  std::string split_id() const { return "log"; }
  bool operator==(const LogOffsetSplit&) const = default;
  SLUICE_FIELDS(LogOffsetSplit, offset)
};

struct LogChannelSplit {  // nothing to checkpoint: the position lives in the log, not in the job
  std::string id = "log";
  std::string split_id() const { return id; }
  bool operator==(const LogChannelSplit&) const = default;
  SLUICE_FIELDS(LogChannelSplit, id)
};

// Hands out the one split (to the first reader that asks), then no more splits.
template <class SplitT>
class SingleSplitEnumerator final : public SplitEnumerator<SplitT> {
 public:
  SingleSplitEnumerator(SplitEnumeratorContext<SplitT>& ctx, std::optional<SplitT> split)
      : ctx_(ctx), split_(std::move(split)) {}
  void add_reader(int32_t) override {}
  void handle_split_request(int32_t subtask) override {
    if (split_) ctx_.assign_split(*std::exchange(split_, std::nullopt), subtask);
    ctx_.signal_no_more_splits(subtask);
  }
  void add_splits_back(std::vector<SplitT> splits, int32_t) override {
    if (!splits.empty()) split_ = splits.front();
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override { return serialize_bytes(split_); }
  static std::optional<SplitT> restore(const std::vector<uint8_t>& state) {
    auto s = deserialize_bytes<std::optional<SplitT>>(state.data(), state.size(), "log source enumerator state");
    if (!s.is_ok()) throw std::invalid_argument(s.status().to_string());
    return std::move(s).value();
  }

 private:
  SplitEnumeratorContext<SplitT>& ctx_;
  std::optional<SplitT> split_;
};

// The reader loop both sources share; Next(split, log) returns the next record or nullopt.
template <class SplitT, class Next>
class LogReader final : public SourceReader<int64_t, SplitT> {
 public:
  LogReader(SourceReaderContext& ctx, std::shared_ptr<RecordLog> log, Next next)
      : ctx_(ctx), log_(std::move(log)), next_(std::move(next)) {}
  void start() override { ctx_.send_split_request(); }
  InputStatus poll_next(ReaderOutput<int64_t>& out) override {
    if (splits_.empty()) return no_more_ ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
    const bool closed = log_->closed();  // read before polling: a record appended before close is not missed
    if (std::optional<int64_t> v = next_(splits_.front(), *log_)) {
      out.collect(*v);
      return InputStatus::kMoreAvailable;
    }
    return closed ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
  }
  void add_splits(std::vector<SplitT> splits) override {
    for (auto& s : splits) splits_.push_back(std::move(s));
  }
  void notify_no_more_splits() override { no_more_ = true; }
  std::vector<SplitT> snapshot_state() override { return {splits_.begin(), splits_.end()}; }
  std::chrono::nanoseconds idle_wait_hint() const override { return std::chrono::microseconds(200); }

 private:
  SourceReaderContext& ctx_;
  std::shared_ptr<RecordLog> log_;
  Next next_;
  std::deque<SplitT> splits_;
  bool no_more_ = false;
};

template <class SplitT, class Next>
class LogSource final : public Source<int64_t, SplitT> {
 public:
  LogSource(std::shared_ptr<RecordLog> log, SplitT initial, Next next)
      : log_(std::move(log)), initial_(std::move(initial)), next_(std::move(next)) {
    if (!log_) throw std::invalid_argument("log source: the RecordLog is null");
  }
  Boundedness boundedness() const override { return Boundedness::kBounded; }
  std::unique_ptr<SplitEnumerator<SplitT>> create_enumerator(SplitEnumeratorContext<SplitT>& ctx) const override {
    return std::make_unique<SingleSplitEnumerator<SplitT>>(ctx, initial_);
  }
  std::unique_ptr<SplitEnumerator<SplitT>> restore_enumerator(SplitEnumeratorContext<SplitT>& ctx,
                                                              const std::vector<uint8_t>& state) const override {
    return std::make_unique<SingleSplitEnumerator<SplitT>>(ctx, SingleSplitEnumerator<SplitT>::restore(state));
  }
  std::unique_ptr<SourceReader<int64_t, SplitT>> create_reader(SourceReaderContext& ctx) const override {
    return std::make_unique<LogReader<SplitT, Next>>(ctx, log_, next_);
  }

 private:
  std::shared_ptr<RecordLog> log_;
  SplitT initial_;
  Next next_;
};

struct ReadAtOffset {
  std::optional<int64_t> operator()(LogOffsetSplit& split, RecordLog& log) const {
    auto r = log.read_at(split.offset, 1);
    if (r.empty()) return std::nullopt;
    ++split.offset;
    return r.front();
  }
};
struct TakeOnce {
  std::optional<int64_t> operator()(LogChannelSplit&, RecordLog& log) const {
    auto r = log.take(1);
    if (r.empty()) return std::nullopt;
    return r.front();
  }
};

using ReplayableLogSource = LogSource<LogOffsetSplit, ReadAtOffset>;
using ConsumeOnceLogSource = LogSource<LogChannelSplit, TakeOnce>;

inline ReplayableLogSource replayable_log_source(std::shared_ptr<RecordLog> log) {
  return ReplayableLogSource(std::move(log), LogOffsetSplit{}, ReadAtOffset{});
}
inline ConsumeOnceLogSource consume_once_log_source(std::shared_ptr<RecordLog> log) {
  return ConsumeOnceLogSource(std::move(log), LogChannelSplit{}, TakeOnce{});
}

}  // namespace sluice::guarantees
