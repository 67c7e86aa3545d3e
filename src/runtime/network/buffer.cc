#include "runtime/network/buffer.h"

#include <string>

namespace sluice::runtime {

Buffer encode_event(const RuntimeEvent& event) {
  Buffer buffer;
  buffer.kind = Buffer::Kind::kEvent;
  buffer.bytes.reserve(1 + event.payload.size());
  buffer.bytes.push_back(static_cast<uint8_t>(event.type));
  buffer.bytes.insert(buffer.bytes.end(), event.payload.begin(), event.payload.end());
  return buffer;
}

Result<RuntimeEvent> decode_event(const Buffer& buffer) {
  if (!buffer.is_event()) return Status::corruption("decode_event: expected an event buffer, got a data buffer");
  if (buffer.bytes.empty()) return Status::corruption("decode_event: expected at least the type byte, got 0 bytes");
  const uint8_t type = buffer.bytes[0];
  if (type < static_cast<uint8_t>(EventType::kEndOfPartition) || type > static_cast<uint8_t>(EventType::kWatermarkStatus)) {
    return Status::corruption("decode_event: expected an event type in [1, 6], got " + std::to_string(type));
  }
  RuntimeEvent event;
  event.type = static_cast<EventType>(type);
  event.payload.assign(buffer.bytes.begin() + 1, buffer.bytes.end());
  return event;
}

}  // namespace sluice::runtime
