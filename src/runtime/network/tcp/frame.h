// Frames of the TaskManager-to-TaskManager data connection: one TCP stream carries the frames of many
// logical channels (README.md in the parent folder, "Remote channels").
//
// Every frame starts with a fixed 24-byte little-endian header:
//   u32 length   bytes after this field (20 + body); bounded, see FrameLimits
//   u8  type     FrameType
//   u8  flags    kFlagPriority on EVENT; 0 elsewhere
//   u16 reserved 0
//   i32 edge, i32 producer_subtask, i32 consumer_subtask, i32 attempt   the RemoteChannelId (0s on HELLO, ERROR)
// then a body: a fixed part per type (the "head" is header + fixed part) and a variable "tail":
//   HELLO          u32 protocol version, i32 TaskManager id, u64 job fingerprint; no tail
//   DATA           i32 num_records; tail: the buffer's bytes (whole records)
//   EVENT          i32 overtaken_buffers, i64 promote_at_ms; tail: encode_event bytes (type byte + payload)
//   ADD_CREDIT     i32 credits (> 0); no tail
//   CLOSE_CHANNEL  none: the consumer released the channel (its gate is gone)
//   CANCEL_CHANNEL none: the producer cancelled the channel
//   ERROR          tail: the reason (text), sent before the sender closes the connection
// The credit protocol follows Flink's credit-based flow control (see the Flink blog "A Deep-Dive into
// Flink's Network Stack"); the framing is Sluice's own.
// Thread-safety: pure functions over bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/network/tcp/remote_channel_id.h"
#include "sluice/core/status.h"

namespace sluice::runtime::tcp {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 24;
inline constexpr size_t kMaxFrameHeadBytes = kFrameHeaderBytes + 16;  // the largest fixed part is HELLO's
inline constexpr uint8_t kFlagPriority = 1;

enum class FrameType : uint8_t {
  kHello = 1,
  kData = 2,
  kEvent = 3,
  kAddCredit = 4,
  kCloseChannel = 5,
  kCancelChannel = 6,
  kError = 7,
};

const char* frame_type_name(FrameType type);

struct FrameLimits {
  // Largest DATA tail accepted (a buffer, or one oversized record). A longer frame is a protocol error.
  size_t max_data_bytes = 64 * 1024 * 1024;
  // Largest EVENT or ERROR tail accepted.
  size_t max_control_bytes = 64 * 1024;
};

// A frame's header and fixed body fields; the tail (tail_bytes of them) follows in the stream.
struct FrameHead {
  FrameType type = FrameType::kError;
  uint8_t flags = 0;
  RemoteChannelId channel;
  uint32_t tail_bytes = 0;
  // HELLO
  uint32_t version = 0;
  int32_t taskmanager_id = 0;
  uint64_t job_fingerprint = 0;
  // DATA
  int32_t num_records = 0;
  // EVENT
  int32_t overtaken_buffers = 0;
  int64_t promote_at_ms = 0;
  // ADD_CREDIT
  int32_t credits = 0;
};

// Bytes of the head (header + fixed body) of a frame of `type`.
size_t frame_head_bytes(FrameType type);

// Writes `head` (header + fixed fields, with head.tail_bytes as the tail's length) to `out`, which must hold
// kMaxFrameHeadBytes. Returns the bytes written (frame_head_bytes(head.type)).
size_t encode_frame_head(const FrameHead& head, uint8_t* out);

// Decodes the 24-byte header at `in`: the type, flags, channel and tail length. Corruption when the type is
// unknown, the length is shorter than the type's fixed part, a fixed-size frame has a tail, or the tail
// exceeds `limits` - decided before anything is allocated for the tail.
Result<FrameHead> decode_frame_header(const uint8_t* in, const FrameLimits& limits);

// Decodes the fixed body fields that follow the header (frame_head_bytes(head->type) - 24 bytes at `in`)
// into *head. Corruption for a non-positive credit, negative num_records or overtaken_buffers.
Status decode_frame_fixed(const uint8_t* in, FrameHead* head);

// A whole frame with its tail, as bytes: for control frames and tests.
std::vector<uint8_t> encode_frame(const FrameHead& head, const uint8_t* tail, size_t tail_bytes);

}  // namespace sluice::runtime::tcp
