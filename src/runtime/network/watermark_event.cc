#include "runtime/network/watermark_event.h"

#include <string>

namespace sluice::runtime {

RuntimeEvent encode_watermark(int64_t watermark_ms) {
  RuntimeEvent e{EventType::kWatermark, std::vector<uint8_t>(8)};
  auto v = static_cast<uint64_t>(watermark_ms);
  for (int i = 0; i < 8; ++i) e.payload[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
  return e;
}

Result<int64_t> decode_watermark(const RuntimeEvent& event) {
  if (event.type != EventType::kWatermark || event.payload.size() != 8) {
    return Status::corruption("decode_watermark: expected a watermark event with 8 payload bytes, got type " +
                              std::to_string(static_cast<int>(event.type)) + " with " +
                              std::to_string(event.payload.size()) + " bytes");
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(event.payload[static_cast<size_t>(i)]) << (8 * i);
  return static_cast<int64_t>(v);
}

RuntimeEvent encode_watermark_status(bool idle) {
  return RuntimeEvent{EventType::kWatermarkStatus, {static_cast<uint8_t>(idle ? 1 : 0)}};
}

Result<bool> decode_watermark_status(const RuntimeEvent& event) {
  if (event.type != EventType::kWatermarkStatus || event.payload.size() != 1 || event.payload[0] > 1) {
    return Status::corruption("decode_watermark_status: expected a watermark-status event with one byte 0 or 1");
  }
  return event.payload[0] == 1;
}

}  // namespace sluice::runtime
