#include "sluice/connectors/nexmark/nexmark_source.h"

#include <limits>
#include <stdexcept>

namespace sluice::nexmark {
namespace {

// Assigns split i to subtask i % parallelism when that reader first registers. Its state is the set of
// splits not assigned yet; after a restore, readers bring their splits from their own state.
class NexmarkEnumerator final : public SplitEnumerator<NexmarkSplit> {
 public:
  NexmarkEnumerator(SplitEnumeratorContext<NexmarkSplit>& ctx, int32_t num_splits) : ctx_(ctx), n_(num_splits) {
    for (int32_t i = 0; i < num_splits; ++i) unassigned_.push_back(i);
  }
  NexmarkEnumerator(SplitEnumeratorContext<NexmarkSplit>& ctx, int32_t num_splits, const std::vector<uint8_t>& state)
      : ctx_(ctx), n_(num_splits) {
    auto r = deserialize_bytes<std::vector<int32_t>>(state.data(), state.size(), "nexmark enumerator state");
    if (!r.is_ok()) throw std::invalid_argument(r.status().to_string());
    unassigned_ = std::move(r).value();
  }
  void add_reader(int32_t subtask) override {
    int32_t p = ctx_.current_parallelism();
    std::vector<int32_t> keep;
    for (int32_t i : unassigned_) {
      if (i % p == subtask) ctx_.assign_split(NexmarkSplit{i, n_, 0}, subtask);
      else keep.push_back(i);
    }
    unassigned_ = std::move(keep);
    ctx_.signal_no_more_splits(subtask);
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override { return serialize_bytes(unassigned_); }
  void handle_split_request(int32_t) override {}  // all splits are assigned on registration
  void add_splits_back(std::vector<NexmarkSplit> splits, int32_t subtask) override {
    for (auto& s : splits) ctx_.assign_split(s, subtask);
  }

 private:
  SplitEnumeratorContext<NexmarkSplit>& ctx_;
  int32_t n_;
  std::vector<int32_t> unassigned_;
};

class NexmarkReader final : public SourceReader<Event, NexmarkSplit> {
 public:
  NexmarkReader(const GeneratorConfig& config, std::shared_ptr<NexmarkEmitGate> gate)
      : config_(config), gate_(std::move(gate)) {}

  InputStatus poll_next(ReaderOutput<Event>& out) override {
    const int64_t limit = gate_ ? gate_->limit.load(std::memory_order_relaxed) : std::numeric_limits<int64_t>::max();
    size_t held = 0;  // consecutive held splits visited; finished splits are erased, so none is counted twice
    while (!active_.empty()) {
      if (cursor_ >= active_.size()) cursor_ = 0;
      SplitGenerator& g = active_[cursor_];
      if (g.has_next() && g.next_event_number() >= limit) {
        if (++held < active_.size()) {
          ++cursor_;
          continue;
        }
        int64_t seen = gate_->held_at.load();
        while (seen < limit && !gate_->held_at.compare_exchange_weak(seen, limit)) {
        }
        return InputStatus::kNothingAvailable;
      }
      // Filled in place (fill sets every field of the event's kind), so string capacity is reused
      // whenever the chain did not keep the previous record.
      if (g.next(scratch_)) {
        ++cursor_;
        out.collect(std::move(scratch_));
        return InputStatus::kMoreAvailable;
      }
      finished_.push_back(NexmarkSplit{g.split_index(), g.num_splits(), g.offset()});
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(cursor_));
    }
    return no_more_ ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
  }
  void add_splits(std::vector<NexmarkSplit> splits) override {
    for (const auto& s : splits) {
      auto g = SplitGenerator::create(config_, s.index, s.num_splits);
      if (!g.is_ok()) throw std::invalid_argument("nexmark split " + s.split_id() + ": " + g.status().message());
      g->seek(s.offset);
      active_.push_back(std::move(g).value());
    }
  }
  void notify_no_more_splits() override { no_more_ = true; }
  std::vector<NexmarkSplit> snapshot_state() override {
    std::vector<NexmarkSplit> r = finished_;
    for (const auto& g : active_) r.push_back(NexmarkSplit{g.split_index(), g.num_splits(), g.offset()});
    return r;
  }

 private:
  GeneratorConfig config_;
  std::shared_ptr<NexmarkEmitGate> gate_;
  std::vector<SplitGenerator> active_;
  std::vector<NexmarkSplit> finished_;  // exhausted splits keep their final offset in snapshots
  size_t cursor_ = 0;
  bool no_more_ = false;
  Event scratch_;
};

}  // namespace

std::unique_ptr<SplitEnumerator<NexmarkSplit>> NexmarkSource::create_enumerator(
    SplitEnumeratorContext<NexmarkSplit>& ctx) const {
  if (options_.num_splits < 1) {
    throw std::invalid_argument("nexmark source: num_splits must be >= 1, got " + std::to_string(options_.num_splits));
  }
  return std::make_unique<NexmarkEnumerator>(ctx, options_.num_splits);
}

std::unique_ptr<SplitEnumerator<NexmarkSplit>> NexmarkSource::restore_enumerator(
    SplitEnumeratorContext<NexmarkSplit>& ctx, const std::vector<uint8_t>& state) const {
  return std::make_unique<NexmarkEnumerator>(ctx, options_.num_splits, state);
}

std::unique_ptr<SourceReader<Event, NexmarkSplit>> NexmarkSource::create_reader(SourceReaderContext&) const {
  return std::make_unique<NexmarkReader>(options_.generator, options_.gate);
}

}  // namespace sluice::nexmark
