// Buffer: the unit that travels through a channel, and the in-band events encoded into buffers.
//
// A data buffer holds whole serialized records back to back; the record framing is the caller's (typed code
// writes and reads it), this layer only moves bytes and counts records. Records never span buffers: a record
// that does not fit in the space left closes the buffer, and a record larger than
// NetworkConfig::buffer_size_bytes travels alone in an oversized buffer (allocated for it, freed after use).
//
// Events travel in-band, in order with data, as event buffers: byte 0 is the EventType, the rest is the
// event's opaque payload, defined by the event's owner (checkpointing: barriers and cancellation markers,
// runtime/checkpointing/checkpoint_barrier.h, and EndOfData; event time: watermarks and watermark status,
// runtime/network/watermark_event.h).
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::runtime {

struct Buffer {
  enum class Kind : uint8_t { kData, kEvent };
  Kind kind = Kind::kData;
  std::vector<uint8_t> bytes;  // size() is the number of valid bytes
  int32_t num_records = 0;     // whole records in `bytes` (0 for an event)
  // Index of the input channel that delivered this buffer; set by InputGate::poll_next so that
  // InputGate::recycle can return the memory (and the credit) to the right channel. -1 elsewhere.
  int32_t channel_index = -1;
  // A priority event: how many data buffers were queued ahead of it on the receiver side when it overtook
  // them (Channel::enqueue_priority_event / promote_due_events). The consumer persists them as input channel
  // state of an unaligned checkpoint. 0 elsewhere.
  int32_t overtaken_buffers = 0;
  // An event that may turn into a priority event (a barrier of an aligned checkpoint with an alignment
  // timeout): the wall-clock time, in ms, from which InputGate::promote_due_events moves it ahead of the data
  // queued before it. 0: never.
  int64_t promote_at_ms = 0;

  bool is_event() const { return kind == Kind::kEvent; }
};

enum class EventType : uint8_t {
  kEndOfPartition = 1,          // the producer finished; nothing follows on this channel
  kCheckpointBarrier = 2,       // reserved: checkpointing
  kCancelCheckpointMarker = 3,  // reserved: checkpointing
  kWatermark = 4,               // event time: 8 bytes, the watermark in ms (runtime/network/watermark_event.h)
  kEndOfData = 5,               // reserved: bounded input drained (stop-with-savepoint --drain)
  kWatermarkStatus = 6,         // event time: 1 byte, 1 = idle, 0 = active (runtime/network/watermark_event.h)
};

struct RuntimeEvent {
  EventType type = EventType::kEndOfPartition;
  std::vector<uint8_t> payload;  // opaque here; the event's owner defines it

  static RuntimeEvent end_of_partition() { return RuntimeEvent{EventType::kEndOfPartition, {}}; }
  bool operator==(const RuntimeEvent&) const = default;
};

// Encodes `event` into a fresh event buffer (one allocation; events are rare next to records).
Buffer encode_event(const RuntimeEvent& event);

// Decodes an event buffer. Corruption if `buffer` is not an event buffer, is empty, or names an unknown type.
Result<RuntimeEvent> decode_event(const Buffer& buffer);

// What InputGate::poll_next returns: a data buffer (to be handed back through InputGate::recycle) or a
// decoded event, with the index of the input channel it came from.
struct BufferOrEvent {
  int32_t channel_index = -1;
  std::variant<Buffer, RuntimeEvent> value;
  // For a priority event: the data buffers of this channel that it overtook, which poll_next returns next
  // from this channel (Buffer::overtaken_buffers).
  int32_t overtaken_buffers = 0;

  bool is_buffer() const { return value.index() == 0; }
  bool is_event() const { return value.index() == 1; }
  Buffer& buffer() { return std::get<Buffer>(value); }
  const Buffer& buffer() const { return std::get<Buffer>(value); }
  RuntimeEvent& event() { return std::get<RuntimeEvent>(value); }
  const RuntimeEvent& event() const { return std::get<RuntimeEvent>(value); }
};

}  // namespace sluice::runtime
