// The Nexmark readers' emit gate: events below the limit only, kNothingAvailable and held_at while held, on again
// when the limit rises; the split positions in a snapshot taken while held are the gate's.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/core/clock.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::nexmark {
namespace {

struct Ctx final : SourceReaderContext {
  int32_t subtask_index() const override { return 0; }
  int32_t parallelism() const override { return 1; }
  void send_split_request() override {}
  MetricGroup& metric_group() override { return registry.root(); }
  const Clock& clock() const override { return clock_; }
  MetricRegistry registry;
  ManualClock clock_;
};

struct Collect final : Output<Event> {
  void collect(Event&& e) override { events.push_back(std::move(e)); }
  std::vector<Event> events;
};

class EmitGateTest : public ::testing::Test {
 protected:
  // A reader of splits 0 and 2 of 3 over a 30-event stream: the event numbers n with n % 3 != 1.
  void SetUp() override {
    options_.generator.max_events = 30;
    options_.num_splits = 3;
    options_.gate = std::make_shared<NexmarkEmitGate>();
    options_.gate->limit.store(10);
    reader_ = NexmarkSource(options_).create_reader(ctx_);
    reader_->start();
    reader_->add_splits({NexmarkSplit{0, 3, 0}, NexmarkSplit{2, 3, 0}});
    reader_->notify_no_more_splits();
  }
  // Polls until the reader stops producing; returns the status that stopped it.
  InputStatus drain() {
    InputStatus st;
    while ((st = reader_->poll_next(out_)) == InputStatus::kMoreAvailable) {
    }
    return st;
  }
  // The events of the given numbers, in the generator's own form.
  std::vector<Event> events_numbered(const std::vector<int64_t>& numbers) const {
    const Generator g(options_.generator);
    std::vector<Event> r;
    for (int64_t n : numbers) r.push_back(g.event_at(n));
    return r;
  }
  std::set<int64_t> offsets() const {
    std::set<int64_t> r;
    for (const NexmarkSplit& s : reader_->snapshot_state()) r.insert(s.index * 100 + s.offset);
    return r;
  }

  NexmarkSourceOptions options_;
  Ctx ctx_;
  Collect sink_;
  ReaderOutput<Event> out_{&sink_};
  std::unique_ptr<SourceReader<Event, NexmarkSplit>> reader_;
};

TEST_F(EmitGateTest, EmitsOnlyBelowTheLimitAndGoesOnWhenItRises) {
  EXPECT_EQ(drain(), InputStatus::kNothingAvailable);
  EXPECT_EQ(options_.gate->held_at.load(), 10);
  // Interleaved split by split: 0, 2, 3, 5, 6, 8, 9.
  EXPECT_EQ(sink_.events, events_numbered({0, 2, 3, 5, 6, 8, 9}));
  // Held: split 0 at offset 4 (next event 12), split 2 at offset 3 (next event 11).
  EXPECT_EQ(offsets(), (std::set<int64_t>{4, 203}));
  // Polling again while held emits nothing.
  EXPECT_EQ(reader_->poll_next(out_), InputStatus::kNothingAvailable);
  EXPECT_EQ(sink_.events.size(), 7u);

  options_.gate->raise_to(20);
  options_.gate->raise_to(15);  // never falls
  EXPECT_EQ(options_.gate->limit.load(), 20);
  EXPECT_EQ(drain(), InputStatus::kNothingAvailable);
  EXPECT_EQ(options_.gate->held_at.load(), 20);
  EXPECT_EQ(sink_.events.size(), 13u);

  options_.gate->open();
  EXPECT_EQ(drain(), InputStatus::kEndOfInput);
  // Every event of both splits once: 20 of the 30.
  std::vector<int64_t> all;
  for (int64_t n = 0; n < 30; ++n)
    if (n % 3 != 1) all.push_back(n);
  // The same events in any order (the reader interleaves its splits).
  std::vector<Event> left = sink_.events;
  for (const Event& e : events_numbered(all)) {
    auto it = std::find(left.begin(), left.end(), e);
    ASSERT_NE(it, left.end()) << "an event of the stream is missing";
    left.erase(it);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " events emitted twice or not of these splits";
}

// A split that ends below the limit finishes; the reader is held only when every unfinished split is.
TEST_F(EmitGateTest, AFinishedSplitDoesNotCountAsHeld) {
  options_.gate->limit.store(29);  // split 2's last event is 29, split 0 ends at 27
  EXPECT_EQ(drain(), InputStatus::kNothingAvailable);
  EXPECT_EQ(options_.gate->held_at.load(), 29);
  EXPECT_EQ(sink_.events.size(), 19u);
  options_.gate->open();
  EXPECT_EQ(drain(), InputStatus::kEndOfInput);
  EXPECT_EQ(sink_.events.size(), 20u);
}

// Without a gate nothing changes: the whole stream of the reader's splits.
TEST(EmitGate, NoGateEmitsEverything) {
  NexmarkSourceOptions options;
  options.generator.max_events = 30;
  options.num_splits = 3;
  Ctx ctx;
  Collect sink;
  ReaderOutput<Event> out(&sink);
  auto reader = NexmarkSource(options).create_reader(ctx);
  reader->add_splits({NexmarkSplit{1, 3, 0}});
  reader->notify_no_more_splits();
  while (reader->poll_next(out) == InputStatus::kMoreAvailable) {
  }
  EXPECT_EQ(sink.events.size(), 10u);
}

}  // namespace
}  // namespace sluice::nexmark
