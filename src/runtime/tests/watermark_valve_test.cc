// StatusWatermarkValve rules (min over active aligned channels, never backwards, idleness) and the wire
// encoding of watermark events.
#include "runtime/watermark_valve.h"

#include <gtest/gtest.h>

#include <random>

#include "runtime/network/watermark_event.h"

namespace sluice::runtime {
namespace {

TEST(StatusWatermarkValve, OutputsTheMinimumOverChannelsOnlyWhenItIncreases) {
  StatusWatermarkValve v(3);
  EXPECT_FALSE(v.on_watermark(0, 10).watermark);
  EXPECT_FALSE(v.on_watermark(1, 5).watermark);
  auto out = v.on_watermark(2, 7);
  ASSERT_TRUE(out.watermark);
  EXPECT_EQ(*out.watermark, 5);
  EXPECT_FALSE(v.on_watermark(2, 8).watermark);  // min still 5 (channel 1)
  out = v.on_watermark(1, 20);
  ASSERT_TRUE(out.watermark);
  EXPECT_EQ(*out.watermark, 8);
  EXPECT_EQ(v.last_output_watermark(), 8);
}

TEST(StatusWatermarkValve, LowerWatermarkOnAChannelIsIgnoredNotAsserted) {
  StatusWatermarkValve v(2);
  (void)v.on_watermark(0, 100);
  ASSERT_EQ(*v.on_watermark(1, 100).watermark, 100);
  // A replay after a restore sends older watermarks again.
  EXPECT_FALSE(v.on_watermark(0, 50).watermark);
  EXPECT_FALSE(v.on_watermark(1, 0).watermark);
  EXPECT_EQ(v.last_output_watermark(), 100);
  EXPECT_FALSE(v.on_watermark(1, 120).watermark);  // channel 0 still holds it at 100
  EXPECT_EQ(*v.on_watermark(0, 130).watermark, 120);
}

TEST(StatusWatermarkValve, IdleChannelsAreExcludedAndAllIdleMakesTheTaskIdle) {
  StatusWatermarkValve v(2);
  (void)v.on_watermark(0, 10);
  // Channel 1 never sent a watermark; once idle, channel 0 alone decides.
  auto out = v.on_watermark_status(1, true);
  ASSERT_TRUE(out.watermark);
  EXPECT_EQ(*out.watermark, 10);
  EXPECT_FALSE(out.idle);
  out = v.on_watermark_status(0, true);
  ASSERT_TRUE(out.idle);
  EXPECT_TRUE(*out.idle);
  EXPECT_TRUE(v.idle());
  // Idle twice: no second status change.
  EXPECT_FALSE(v.on_watermark_status(0, true).idle);
  // Channel 1 resumes with an old watermark: the task is active again, but 3 < 10 holds nothing back.
  out = v.on_watermark_status(1, false);
  ASSERT_TRUE(out.idle);
  EXPECT_FALSE(*out.idle);
  EXPECT_FALSE(v.on_watermark(1, 3).watermark);
  // Until it catches up it is not aligned; then it counts again.
  EXPECT_FALSE(v.on_watermark(1, 10).watermark);
  out = v.on_watermark(1, 15);
  ASSERT_TRUE(out.watermark);
  EXPECT_EQ(*out.watermark, 15);
}

TEST(StatusWatermarkValve, AFinishedChannelHoldsNothingBack) {
  StatusWatermarkValve v(2);
  (void)v.on_watermark(0, 40);
  auto out = v.on_channel_finished(1);
  ASSERT_TRUE(out.watermark);
  EXPECT_EQ(*out.watermark, 40);
  EXPECT_FALSE(v.on_watermark(1, 100).watermark);  // nothing after the end
  EXPECT_TRUE(v.on_channel_finished(0).idle.value_or(false));
}

// Random inputs: the output never decreases and always equals the rule's minimum when it is emitted.
TEST(StatusWatermarkValve, RandomSequencesNeverGoBackwards) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    StatusWatermarkValve v(4);
    int64_t last = INT64_MIN;
    for (int step = 0; step < 200; ++step) {
      int32_t ch = static_cast<int32_t>(rng() % 4);
      StatusWatermarkValve::Output out;
      if (rng() % 5 == 0) out = v.on_watermark_status(ch, rng() % 2 == 0);
      else out = v.on_watermark(ch, static_cast<int64_t>(rng() % 1000));
      if (out.watermark) {
        ASSERT_GT(*out.watermark, last);
        last = *out.watermark;
      }
      ASSERT_EQ(v.last_output_watermark(), last);
    }
  }
}

TEST(WatermarkEvent, RoundTripsAndRejectsMalformedPayloads) {
  for (int64_t wm : {INT64_MIN, int64_t{-1}, int64_t{0}, int64_t{1'700'000'000'123}, INT64_MAX}) {
    auto e = encode_watermark(wm);
    auto decoded = decode_event(encode_event(e));
    ASSERT_TRUE(decoded.is_ok());
    auto back = decode_watermark(*decoded);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(*back, wm);
  }
  for (bool idle : {true, false}) {
    auto decoded = decode_event(encode_event(encode_watermark_status(idle)));
    ASSERT_TRUE(decoded.is_ok());
    EXPECT_EQ(*decode_watermark_status(*decoded), idle);
  }
  EXPECT_FALSE(decode_watermark(RuntimeEvent{EventType::kWatermark, {1, 2, 3}}).is_ok());
  EXPECT_FALSE(decode_watermark_status(RuntimeEvent{EventType::kWatermarkStatus, {2}}).is_ok());
}

}  // namespace
}  // namespace sluice::runtime
