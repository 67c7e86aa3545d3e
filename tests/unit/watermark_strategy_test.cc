// WatermarkStrategy and per-split watermarks in sources (SourceWatermarks): periodic vs punctuated emission,
// the per-subtask combination over splits (min over non-idle), idleness, late records, the max-skew guard,
// and the per-split state that checkpoints restore.
#include <gtest/gtest.h>

#include <vector>

#include "sluice/sluice.h"

namespace sluice {
namespace {

struct Ev {
  int64_t ts = 0;
  int64_t id = 0;
};

// Collects records and their timestamps.
struct RecordingOutput final : Output<Ev> {
  explicit RecordingOutput(RecordTimestamp* rt) : rt_(rt) {}
  void collect(Ev&& e) override {
    ids.push_back(e.id);
    stamps.push_back(rt_->timestamp_ms);
  }
  RecordTimestamp* rt_;
  std::vector<int64_t> ids, stamps;
};

// Emits ts - bound - 1 on every event (punctuated), keeping the highest timestamp like the built-in.
class Punctuated final : public WatermarkGenerator<Ev> {
 public:
  explicit Punctuated(int64_t bound) : inner_(bound) {}
  void on_event(const Ev& e, int64_t ts, WatermarkOutput& out) override {
    inner_.on_event(e, ts, out);
    out.emit_watermark(inner_.current_watermark_ms());
  }
  void on_periodic_emit(WatermarkOutput&) override {}
  std::vector<uint8_t> snapshot_state() const override { return inner_.snapshot_state(); }
  void restore_state(const std::vector<uint8_t>& s) override { inner_.restore_state(s); }

 private:
  BoundedOutOfOrdernessWatermarks<Ev> inner_;
};

struct Harness {
  explicit Harness(WatermarkStrategy<Ev> strategy, const Clock* clock = nullptr) : sink(&rt) {
    SourceWatermarks<Ev>::Config c;
    c.output = &sink;
    c.record_timestamp = &rt;
    c.on_watermark = [this](int64_t w) { emitted.push_back(w); };
    c.on_idle = [this](bool idle) { statuses.push_back(idle); };
    wm = std::make_unique<SourceWatermarks<Ev>>(std::move(strategy), WatermarkGeneratorContext{clock}, std::move(c));
  }
  void send(const std::string& split, int64_t ts, int64_t id = 0) { wm->collect(wm->split(split), Ev{ts, id}, kNoRecordTimestamp); }
  RecordTimestamp rt;
  RecordingOutput sink;
  std::vector<int64_t> emitted;
  std::vector<bool> statuses;
  std::unique_ptr<SourceWatermarks<Ev>> wm;
};

WatermarkStrategy<Ev> by_ts(WatermarkStrategy<Ev> s) {
  return s.with_timestamp_assigner([](const Ev& e) { return e.ts; });
}

TEST(WatermarkStrategy, BoundedOutOfOrdernessEmitsOnlyPeriodically) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::milliseconds(10))));
  h.send("a", 100);
  h.send("a", 90);
  EXPECT_TRUE(h.emitted.empty()) << "periodic generators emit nothing on events";
  EXPECT_EQ(h.sink.stamps, (std::vector<int64_t>{100, 90})) << "the assigner's timestamps become record timestamps";
  h.wm->on_periodic_emit();
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{89}));  // 100 - 10 - 1
  h.wm->on_periodic_emit();
  EXPECT_EQ(h.emitted.size(), 1u) << "an unchanged watermark is not emitted again";
}

TEST(WatermarkStrategy, MonotonousTimestampsIsBoundZero) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_monotonous_timestamps()));
  h.send("a", 5);
  h.wm->on_periodic_emit();
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{4}));
}

TEST(WatermarkStrategy, PunctuatedGeneratorEmitsOnEvents) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_generator(
      [](const WatermarkGeneratorContext&) { return std::make_unique<Punctuated>(0); })));
  h.send("a", 10);
  h.send("a", 12);
  h.send("a", 11);
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{9, 11}));
}

TEST(SourceWatermarks, SubtaskWatermarkIsTheMinimumOverSplits) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_generator(
      [](const WatermarkGeneratorContext&) { return std::make_unique<Punctuated>(0); })));
  h.send("a", 100);  // a: 99, the only split
  h.send("b", 50);   // b: 49 -> min 49 < 99: nothing new
  h.send("a", 200);  // a: 199, min still 49
  h.send("b", 150);  // b: 149 -> min 149
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{99, 149}));
  // A released (finished) split holds nothing back.
  h.wm->release("b");
  EXPECT_EQ(h.emitted.back(), 199);
}

TEST(SourceWatermarks, IdleSplitsAreExcludedAndAllIdleMakesTheSubtaskIdle) {
  auto clock = std::make_shared<ManualClock>(0);
  Harness h(by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::milliseconds(0))
                      .with_idleness(std::chrono::milliseconds(100))),
            clock.get());
  h.send("a", 1000);
  h.send("b", 10);
  h.wm->on_periodic_emit();  // both active: min(999, 9)
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{9}));
  clock->advance_ms(50);
  h.send("a", 2000);
  h.wm->on_periodic_emit();  // b silent for 50 ms: still active, holds the minimum at 9
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{9}));
  clock->advance_ms(100);
  h.send("a", 3000);
  h.wm->on_periodic_emit();  // b silent for 150 ms: idle, a alone decides
  EXPECT_EQ(h.emitted.back(), 2999);
  EXPECT_TRUE(h.statuses.empty());
  clock->advance_ms(100);
  h.wm->on_periodic_emit();  // a silent for 100 ms too
  EXPECT_EQ(h.statuses, (std::vector<bool>{true})) << "every split idle: the subtask is idle";
  h.send("b", 5000);  // b active again
  EXPECT_EQ(h.statuses, (std::vector<bool>{true, false}));
}

TEST(SourceWatermarks, LateRecordsAreCountedAndGoToTheSideOutputWhenAsked) {
  auto strategy = by_ts(WatermarkStrategy<Ev>::for_generator(
                            [](const WatermarkGeneratorContext&) { return std::make_unique<Punctuated>(5); }))
                      .with_late_records_to("late");
  RecordTimestamp rt;
  RecordingOutput main(&rt), late(&rt);
  SideOutputs side;
  side.add("late", std::type_index(typeid(Ev)), &late);
  SourceWatermarks<Ev>::Config c;
  c.output = &main;
  c.record_timestamp = &rt;
  c.side_outputs = &side;
  SourceWatermarks<Ev> wm(strategy, {}, std::move(c));
  auto& a = wm.split("a");
  wm.collect(a, Ev{100, 1}, kNoRecordTimestamp);  // wm 94
  wm.collect(a, Ev{95, 2}, kNoRecordTimestamp);   // on time
  wm.collect(a, Ev{94, 3}, kNoRecordTimestamp);   // at the watermark: late
  wm.collect(a, Ev{10, 4}, kNoRecordTimestamp);   // late
  EXPECT_EQ(main.ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(late.ids, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(wm.late_records(), 2);
}

TEST(SourceWatermarks, MaxSkewGuardLetsFarFutureRecordsFlowWithoutAdvancingTheWatermark) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_generator(
                      [](const WatermarkGeneratorContext&) { return std::make_unique<Punctuated>(0); }))
                .with_max_skew(std::chrono::milliseconds(1000)));
  h.send("a", 100, 1);
  h.send("a", 1'000'000'000, 2);  // a broken clock
  h.send("a", 200, 3);
  EXPECT_EQ(h.sink.ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{99, 199}));
}

// Main and side outputs of a SourceWatermarks under test, with the late and skewed tags of skew_strategy().
struct SideHarness {
  explicit SideHarness(WatermarkStrategy<Ev> strategy, const Clock* clock = nullptr)
      : main(&rt), late(&rt), skewed(&rt) {
    side.add("late", std::type_index(typeid(Ev)), &late);
    side.add("skewed", std::type_index(typeid(Ev)), &skewed);
    SourceWatermarks<Ev>::Config c;
    c.output = &main;
    c.record_timestamp = &rt;
    c.side_outputs = &side;
    c.skewed_records = &skewed_count;
    c.late_records = &late_count;
    wm = std::make_unique<SourceWatermarks<Ev>>(std::move(strategy), WatermarkGeneratorContext{clock}, std::move(c));
  }
  void send(int64_t ts, int64_t id) { wm->collect(wm->split("s"), Ev{ts, id}, kNoRecordTimestamp); }
  RecordTimestamp rt;
  RecordingOutput main, late, skewed;
  SideOutputs side;
  Counter skewed_count, late_count;
  std::unique_ptr<SourceWatermarks<Ev>> wm;
};

constexpr int64_t kBase = 1'700'000'000'000;  // ms since the epoch
constexpr int64_t kTwoHours = 2 * 3600 * 1000;

WatermarkStrategy<Ev> skew_strategy(SkewReference reference = SkewReference::kSplitTimestamps) {
  return by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::seconds(5)))
      .with_max_skew(std::chrono::minutes(5), reference)
      .with_late_records_to("late")
      .with_skewed_records_to("skewed");
}

// 100 events a second apart, the 10th stamped two hours ahead, before any periodic watermark: the guard judges
// it against the nine records before it, not against a watermark the split does not have yet. Without that,
// the next periodic watermark was two hours ahead and 79 of the 99 good records went to the late output.
TEST(SourceWatermarks, MaxSkewGuardWorksFromTheSplitsFirstRecordsOn) {
  SideHarness h(skew_strategy());
  for (int64_t i = 0; i < 100; ++i) {
    h.send(i == 9 ? kBase + kTwoHours : kBase + i * 1000, i);
    if (i % 10 == 9) h.wm->on_periodic_emit();
  }
  EXPECT_EQ(h.skewed.ids, (std::vector<int64_t>{9}));
  EXPECT_EQ(h.skewed_count.count(), 1);
  EXPECT_TRUE(h.late.ids.empty()) << h.late.ids.size() << " good records late";
  EXPECT_EQ(h.late_count.count(), 0);
  EXPECT_EQ(h.main.ids.size(), 99u);
  EXPECT_EQ(h.wm->combined_watermark_ms(), kBase + 99 * 1000 - 5000 - 1);
  // The checkpointed event time holds no trace of the skewed record.
  const auto snap = h.wm->snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].highest_timestamp_ms, kBase + 99 * 1000);
  EXPECT_EQ(snap[0].watermark_ms, kBase + 99 * 1000 - 5000 - 1);
}

// A record behind the highest accepted one is never skewed, however far ahead of the watermark it is; one just
// within max skew ahead of the highest is accepted and becomes the new reference.
TEST(SourceWatermarks, MaxSkewIsMeasuredFromTheHighestAcceptedTimestamp) {
  SideHarness h(skew_strategy());
  h.send(kBase, 1);
  h.send(kBase + 5 * 60 * 1000, 2);      // exactly max skew ahead: accepted
  h.send(kBase + 10 * 60 * 1000, 3);     // max skew ahead of the new highest: accepted
  h.send(kBase + 15 * 60 * 1000 + 1, 4); // 1 ms more: skewed
  EXPECT_EQ(h.main.ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(h.skewed.ids, (std::vector<int64_t>{4}));
}

// Without a side output for them, skewed records flow on the main output; they still skip the generator.
TEST(SourceWatermarks, SkewedRecordsFlowOnWithoutASideOutput) {
  Harness h(by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::seconds(5)))
                .with_max_skew(std::chrono::minutes(5)));
  h.send("a", kBase, 1);
  h.send("a", kBase + kTwoHours, 2);
  h.wm->on_periodic_emit();
  EXPECT_EQ(h.sink.ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(h.emitted, (std::vector<int64_t>{kBase - 5000 - 1}));
}

// Against processing time the split's very first record is judged too, and a checkpointed split whose event
// time is beyond now + max skew (taken without the guard) starts afresh instead of restoring that watermark.
TEST(SourceWatermarks, MaxSkewAgainstProcessingTimeJudgesTheFirstRecordAndRestoredState) {
  auto clock = std::make_shared<ManualClock>(kBase);
  {
    SideHarness h(skew_strategy(SkewReference::kProcessingTime), clock.get());
    h.send(kBase + kTwoHours, 1);  // the first record, two hours ahead of now
    h.send(kBase - 1000, 2);
    h.send(kBase + 4 * 60 * 1000, 3);  // ahead of now, within max skew
    EXPECT_EQ(h.skewed.ids, (std::vector<int64_t>{1}));
    EXPECT_EQ(h.main.ids, (std::vector<int64_t>{2, 3}));
  }
  std::vector<SplitWatermarkState> poisoned;
  {
    Harness unguarded(by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::seconds(5))));
    unguarded.send("s", kBase + kTwoHours);
    unguarded.wm->on_periodic_emit();
    poisoned = unguarded.wm->snapshot();
  }
  SideHarness restored(skew_strategy(SkewReference::kProcessingTime), clock.get());
  restored.wm->restore(poisoned);
  restored.send(kBase, 1);
  EXPECT_EQ(restored.main.ids, (std::vector<int64_t>{1})) << "not late against a restored two-hours-ahead watermark";
  EXPECT_TRUE(restored.late.ids.empty());
  restored.wm->on_periodic_emit();
  EXPECT_EQ(restored.wm->combined_watermark_ms(), kBase - 5000 - 1);
  // Within max skew of now, the same state restores as checkpointed.
  clock->set_ms(kBase + kTwoHours);
  SideHarness later(skew_strategy(SkewReference::kProcessingTime), clock.get());
  later.wm->restore(poisoned);
  EXPECT_EQ(later.wm->split("s").watermark_ms(), kBase + kTwoHours - 5000 - 1);
}

TEST(SourceWatermarks, PerSplitStateRestoresToTheCheckpointedValues) {
  auto strategy = by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::milliseconds(10)));
  std::vector<SplitWatermarkState> snap;
  {
    Harness h(strategy);
    h.send("a", 500);
    h.send("b", 300);
    h.wm->on_periodic_emit();
    h.send("a", 700);  // seen by the generator, not yet emitted
    snap = h.wm->snapshot();
  }
  ASSERT_EQ(snap.size(), 2u);
  Harness r(strategy);
  r.wm->restore(snap);
  r.wm->add_splits({"a", "b"});
  auto& a = r.wm->split("a");
  auto& b = r.wm->split("b");
  EXPECT_EQ(a.watermark_ms(), 489);
  EXPECT_EQ(b.watermark_ms(), 289);
  EXPECT_EQ(r.emitted, (std::vector<int64_t>{289})) << "the restored combined watermark is emitted";
  // The generator's highest timestamp came back too: the next periodic emit continues from 700.
  r.wm->on_periodic_emit();
  EXPECT_EQ(a.watermark_ms(), 689);
  // A record that was late before the failure is late after it.
  r.send("b", 250);
  EXPECT_EQ(r.wm->late_records(), 1);
}

// A reader that emits through its main output (one default split for the subtask, as the Nexmark and generator
// sources do) gets its splits back after a restore; those splits never see a record. Before, they were created at
// the minimum watermark and held the subtask's watermark there until the input ended (windows stopped firing after
// every restart).
TEST(SourceWatermarks, RestoredSplitsOfAReaderUsingTheMainOutputDoNotHoldTheWatermarkBack) {
  auto strategy = by_ts(WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::milliseconds(10)));
  std::vector<SplitWatermarkState> snap;
  {
    Harness h(strategy);
    h.wm->collect(h.wm->default_split(), Ev{500, 0}, kNoRecordTimestamp);
    h.wm->on_periodic_emit();
    snap = h.wm->snapshot();
  }
  ASSERT_EQ(snap.size(), 1u) << "only the default split has event time";
  Harness r(strategy);
  r.wm->restore(snap);
  r.wm->add_splits({"split-0", "split-1"});  // the reader's splits: no event time of their own
  EXPECT_EQ(r.wm->num_splits(), 0u);
  r.wm->collect(r.wm->default_split(), Ev{900, 1}, kNoRecordTimestamp);
  r.wm->on_periodic_emit();
  EXPECT_EQ(r.wm->combined_watermark_ms(), 889) << "the watermark moves on from the restored default split";
}

}  // namespace
}  // namespace sluice
