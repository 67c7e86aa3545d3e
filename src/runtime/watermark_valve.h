// StatusWatermarkValve: combines the watermarks and watermark statuses of a task's input channels into the
// task's own (Flink's StatusWatermarkValve).
//
// Rules:
//  - Per channel: the highest watermark seen (a lower one, e.g. replayed after a restore, is ignored) and a
//    status, active or idle. Channels start active at kMinWatermark.
//  - The combined watermark is the minimum over the active channels that are aligned - whose watermark is not
//    below the last combined output. A channel that comes back from idle with an older watermark thus holds
//    nothing back until it catches up (otherwise the output would have to go backwards).
//  - The output never decreases; a watermark is output only when the combined value increases.
//  - When every channel is idle the task is idle downstream (one status change output); the first channel to
//    become active again makes it active.
// Pure (no I/O, no clock), so the rules are tested exhaustively. Not thread-safe: the task thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace sluice::runtime {

class StatusWatermarkValve {
 public:
  explicit StatusWatermarkValve(int32_t num_channels);

  // What an input event changes downstream: a new combined watermark and/or a status change (idle: true).
  // Both empty: nothing to forward.
  struct Output {
    std::optional<int64_t> watermark;
    std::optional<bool> idle;
  };

  Output on_watermark(int32_t channel, int64_t watermark_ms);
  Output on_watermark_status(int32_t channel, bool idle);
  // A channel that ended (end of partition): it holds no watermark back any more (as if idle for good).
  Output on_channel_finished(int32_t channel);

  int64_t last_output_watermark() const { return last_output_; }
  bool idle() const { return idle_; }
  int32_t num_channels() const { return static_cast<int32_t>(channels_.size()); }

 private:
  struct Channel {
    int64_t watermark = INT64_MIN;
    bool active = true;
    bool aligned = true;
    bool finished = false;
  };
  std::optional<int64_t> recompute();

  std::vector<Channel> channels_;
  int64_t last_output_ = INT64_MIN;
  bool idle_ = false;
};

}  // namespace sluice::runtime
