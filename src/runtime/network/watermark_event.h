// Watermark and watermark-status events: event time travels in band, in order with the records, broadcast on
// every channel of an output (see StatusWatermarkValve for how a task combines its channels).
// Payloads: kWatermark = the watermark as 8 bytes little-endian; kWatermarkStatus = 1 byte, 1 idle / 0 active.
#pragma once

#include <cstdint>

#include "runtime/network/buffer.h"
#include "sluice/core/status.h"

namespace sluice::runtime {

RuntimeEvent encode_watermark(int64_t watermark_ms);
// kCorruption unless `event` is a kWatermark event with an 8-byte payload.
Result<int64_t> decode_watermark(const RuntimeEvent& event);

RuntimeEvent encode_watermark_status(bool idle);
// kCorruption unless `event` is a kWatermarkStatus event with a 1-byte payload of 0 or 1.
Result<bool> decode_watermark_status(const RuntimeEvent& event);

}  // namespace sluice::runtime
