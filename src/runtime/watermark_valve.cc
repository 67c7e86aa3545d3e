#include "runtime/watermark_valve.h"

#include <stdexcept>
#include <string>

namespace sluice::runtime {

StatusWatermarkValve::StatusWatermarkValve(int32_t num_channels) : channels_(static_cast<size_t>(num_channels)) {
  if (num_channels < 1) {
    throw std::invalid_argument("StatusWatermarkValve: expected at least one channel, got " +
                                std::to_string(num_channels));
  }
}

std::optional<int64_t> StatusWatermarkValve::recompute() {
  bool any = false;
  int64_t min = INT64_MAX;
  for (const auto& c : channels_) {
    if (!c.active || !c.aligned) continue;
    any = true;
    if (c.watermark < min) min = c.watermark;
  }
  if (!any || min <= last_output_) return std::nullopt;
  last_output_ = min;
  return min;
}

StatusWatermarkValve::Output StatusWatermarkValve::on_watermark(int32_t channel, int64_t watermark_ms) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  Output out;
  if (c.finished || watermark_ms <= c.watermark) return out;  // never backwards; nothing after the end
  c.watermark = watermark_ms;
  if (!c.active) return out;  // an idle channel's watermark counts once it is active again
  if (!c.aligned && c.watermark >= last_output_) c.aligned = true;
  out.watermark = recompute();
  return out;
}

StatusWatermarkValve::Output StatusWatermarkValve::on_watermark_status(int32_t channel, bool idle) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  Output out;
  if (c.finished || c.active == !idle) return out;
  c.active = !idle;
  if (idle) {
    c.aligned = false;
    bool all_idle = true;
    for (const auto& ch : channels_) all_idle = all_idle && !ch.active;
    if (all_idle) {
      if (!idle_) out.idle = true;
      idle_ = true;
    } else {
      out.watermark = recompute();  // the idle channel may have been the one holding the minimum back
    }
    return out;
  }
  c.aligned = c.watermark >= last_output_;
  if (idle_) {
    idle_ = false;
    out.idle = false;
  }
  out.watermark = recompute();
  return out;
}

StatusWatermarkValve::Output StatusWatermarkValve::on_channel_finished(int32_t channel) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  if (c.finished) return {};
  Output out = on_watermark_status(channel, true);
  c.finished = true;
  return out;
}

}  // namespace sluice::runtime
