// SourceWatermarks: event time inside a source subtask - one WatermarkGenerator per split, combined per
// subtask (Flink's per-split watermarks: SourceOutputWithWatermarks + WatermarkOutputMultiplexer), plus the
// checkpointed per-split state (beyond Flink).
//
// Per record of a split: timestamp = strategy.assign(record, source timestamp), set as the task's record
// timestamp; a record at or below the split's current watermark is late (counted; to the late side output if
// the strategy names one, else it flows on); a record more than max_skew ahead of the skew reference (the
// highest timestamp the split's generator accepted, or processing time; watermark_strategy.h) is skewed
// (counted; to the skewed side output if the strategy names one, else it flows on) and skips the generator;
// otherwise the generator sees it (and may emit: punctuated).
// Combined: the minimum over the splits that are not idle; it is handed to `on_watermark` only when it
// increases. All splits idle: `on_idle(true)`; the first split active again: `on_idle(false)`.
// Records collected on the reader's main output (not through a split output) belong to one default split.
// Thread-safety: task thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/functions/output.h"
#include "sluice/functions/watermark_strategy.h"
#include "sluice/metrics/counter.h"

namespace sluice {

// One split's event time as checkpointed with the split (union operator state "SourceWatermarkState", so the
// entry follows the split to whichever subtask reads it after a restore or rescale).
struct SplitWatermarkState {
  std::string split_id;
  int64_t watermark_ms = kMinWatermark;          // the last watermark the split emitted
  int64_t highest_timestamp_ms = kMinWatermark;  // the highest timestamp the generator saw
  std::vector<uint8_t> generator_state;          // WatermarkGenerator::snapshot_state()
  SLUICE_FIELDS(SplitWatermarkState, split_id, watermark_ms, highest_timestamp_ms, generator_state);
};

template <class T>
class SourceWatermarks {
 public:
  struct Config {
    Output<T>* output = nullptr;             // the source's main output (records)
    RecordTimestamp* record_timestamp = nullptr;
    Counter* late_records = nullptr;         // numLateRecords
    Counter* skewed_records = nullptr;       // numSkewedRecords
    const SideOutputs* side_outputs = nullptr;
    std::function<void(int64_t)> on_watermark;  // the combined watermark increased
    std::function<void(bool)> on_idle;          // the subtask became idle (true) / active (false)
    std::string default_split_id = "";          // key of the main output's state in checkpoints
  };

  class Split final : public WatermarkOutput {
   public:
    Split(SourceWatermarks* owner, std::string id) : owner_(owner), id_(std::move(id)) {}
    void emit_watermark(int64_t watermark_ms) override {
      if (watermark_ms <= watermark_ms_) return;
      watermark_ms_ = watermark_ms;
      owner_->dirty_ = true;
      owner_->update();
    }
    void mark_idle() override {
      if (idle_) return;
      idle_ = true;
      owner_->dirty_ = true;
      owner_->update();
    }
    void mark_active() override {
      if (!idle_) return;
      idle_ = false;
      owner_->dirty_ = true;
      owner_->update();
    }
    int64_t watermark_ms() const { return watermark_ms_; }
    bool idle() const { return idle_; }

   private:
    friend class SourceWatermarks;
    SourceWatermarks* owner_;
    std::string id_;
    std::unique_ptr<WatermarkGenerator<T>> generator_;
    int64_t watermark_ms_ = kMinWatermark;
    int64_t highest_timestamp_ms_ = kMinWatermark;
    bool idle_ = false;
  };

  SourceWatermarks(WatermarkStrategy<T> strategy, WatermarkGeneratorContext ctx, Config config)
      : strategy_(std::move(strategy)), ctx_(ctx), cfg_(std::move(config)) {
    if (cfg_.record_timestamp == nullptr) cfg_.record_timestamp = &own_timestamp_;
    if (cfg_.late_records == nullptr) cfg_.late_records = &own_late_;
    if (cfg_.skewed_records == nullptr) cfg_.skewed_records = &own_skewed_;
  }

  // States of a checkpoint; a split created later with one of these ids starts from its entry.
  void restore(const std::vector<SplitWatermarkState>& states) {
    for (const auto& s : states) restored_[s.split_id] = s;
  }
  std::vector<SplitWatermarkState> snapshot() const {
    std::vector<SplitWatermarkState> out;
    for (const auto& [id, s] : splits_) {
      out.push_back(SplitWatermarkState{id, s->watermark_ms_, s->highest_timestamp_ms_, s->generator_->snapshot_state()});
    }
    return out;
  }

  // The split's state, created at first use (from its restored entry if there is one).
  Split& split(const std::string& id) {
    auto it = splits_.find(id);
    if (it != splits_.end()) return *it->second;
    auto s = std::make_unique<Split>(this, id);
    s->generator_ = strategy_.create_generator(ctx_);
    auto r = restored_.find(id);
    if (r != restored_.end() && !restored_ahead_of_processing_time(r->second)) {
      s->watermark_ms_ = r->second.watermark_ms;
      s->highest_timestamp_ms_ = r->second.highest_timestamp_ms;
      s->generator_->restore_state(r->second.generator_state);
    }
    Split& ref = *s;
    splits_.emplace(id, std::move(s));
    update();
    return ref;
  }
  // Splits known up front (those a restored reader gets back): the ones with restored event time are created
  // together, so the combined watermark starts at the minimum over all of them, never at the first one's alone
  // (downstream saw no more than that). A split without restored event time is left to the reader: one that emits
  // through the main output (the default split) never creates it, and a created but unfed split would hold the
  // subtask's watermark at the minimum for good.
  void add_splits(const std::vector<std::string>& ids) {
    batching_ = true;
    for (const auto& id : ids) {
      if (restored_.count(id) != 0) (void)split(id);
    }
    batching_ = false;
    update();
  }
  Split& default_split() {
    if (default_ == nullptr) default_ = &split(cfg_.default_split_id);
    return *default_;
  }
  // The split finished: it holds nothing back any more.
  void release(const std::string& id) {
    auto it = splits_.find(id);
    if (it == splits_.end()) return;
    if (it->second.get() == default_) default_ = nullptr;
    splits_.erase(it);
    update();
  }

  void collect(Split& s, T&& record, int64_t source_timestamp_ms) {
    const int64_t ts = strategy_.assign(static_cast<const T&>(record), source_timestamp_ms);
    cfg_.record_timestamp->set(ts);
    if (ts <= s.watermark_ms_ && s.watermark_ms_ > kMinWatermark) {
      cfg_.late_records->inc();
      if (!strategy_.late_records_tag().empty() && cfg_.side_outputs != nullptr) {
        cfg_.side_outputs->emit(strategy_.late_records_tag(), std::move(record));
        return;
      }
    } else if (skewed(s, ts)) {
      cfg_.skewed_records->inc();
      if (!strategy_.skewed_records_tag().empty() && cfg_.side_outputs != nullptr) {
        cfg_.side_outputs->emit(strategy_.skewed_records_tag(), std::move(record));
        return;
      }
    } else {
      if (ts > s.highest_timestamp_ms_) s.highest_timestamp_ms_ = ts;
      // A watermark the generator emits for this record goes out after the record (never ahead of it).
      batching_ = true;
      s.generator_->on_event(static_cast<const T&>(record), ts, s);
      batching_ = false;
      cfg_.output->collect(std::move(record));
      if (dirty_) update();
      return;
    }
    cfg_.output->collect(std::move(record));
  }

  void on_periodic_emit() {
    batching_ = true;
    for (auto& [id, s] : splits_) s->generator_->on_periodic_emit(*s);
    batching_ = false;
    update();
  }

  int64_t combined_watermark_ms() const { return combined_ms_; }
  bool idle() const { return idle_; }
  size_t num_splits() const { return splits_.size(); }
  int64_t late_records() const { return cfg_.late_records->count(); }

 private:
  // More than max skew ahead of the reference (watermark_strategy.h). Unsigned difference: no overflow at the
  // ends of the int64 range.
  bool skewed(const Split& s, int64_t ts) const {
    if (!strategy_.max_skew_ms().has_value()) return false;
    int64_t reference;
    if (strategy_.skew_reference() == SkewReference::kProcessingTime) {
      reference = now_ms();
    } else {
      reference = std::max(s.highest_timestamp_ms_, s.watermark_ms_);
      if (reference == kMinWatermark) return false;  // the split's first record: nothing to judge it by
    }
    return ts > reference &&
           static_cast<uint64_t>(ts) - static_cast<uint64_t>(reference) > static_cast<uint64_t>(*strategy_.max_skew_ms());
  }
  // A checkpointed split whose event time is beyond processing time + max skew (taken before the guard was on,
  // or from a host whose clock was wrong): its watermark and generator state are not restored.
  bool restored_ahead_of_processing_time(const SplitWatermarkState& r) const {
    if (!strategy_.max_skew_ms().has_value() || strategy_.skew_reference() != SkewReference::kProcessingTime) {
      return false;
    }
    const int64_t ahead = std::max(r.highest_timestamp_ms, r.watermark_ms);
    const int64_t now = now_ms();
    return ahead > now && static_cast<uint64_t>(ahead) - static_cast<uint64_t>(now) >
                              static_cast<uint64_t>(*strategy_.max_skew_ms());
  }
  int64_t now_ms() const { return (ctx_.clock != nullptr ? ctx_.clock : SystemClock::shared().get())->now_ms(); }

  void update() {
    if (batching_ || splits_.empty()) return;
    dirty_ = false;
    int64_t min = kMaxWatermark;
    bool any_active = false;
    for (const auto& [id, s] : splits_) {
      if (s->idle_) continue;
      any_active = true;
      if (s->watermark_ms_ < min) min = s->watermark_ms_;
    }
    if (!any_active) {
      if (!idle_) {
        idle_ = true;
        if (cfg_.on_idle) cfg_.on_idle(true);
      }
      return;
    }
    if (idle_) {
      idle_ = false;
      if (cfg_.on_idle) cfg_.on_idle(false);
    }
    if (min > combined_ms_) {
      combined_ms_ = min;
      if (cfg_.on_watermark) cfg_.on_watermark(min);
    }
  }

  WatermarkStrategy<T> strategy_;
  WatermarkGeneratorContext ctx_;
  Config cfg_;
  std::map<std::string, std::unique_ptr<Split>> splits_;
  std::map<std::string, SplitWatermarkState> restored_;
  Split* default_ = nullptr;
  int64_t combined_ms_ = kMinWatermark;
  bool idle_ = false;
  bool batching_ = false;
  bool dirty_ = false;  // a split's watermark changed while batching_
  RecordTimestamp own_timestamp_;
  Counter own_late_;
  Counter own_skewed_;
};

}  // namespace sluice
