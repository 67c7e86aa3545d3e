#include "runtime/network/tcp/frame.h"

#include <cstring>

namespace sluice::runtime::tcp {

namespace {

constexpr size_t kLengthFieldBytes = 4;

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_i32(uint8_t* p, int32_t v) { put_u32(p, static_cast<uint32_t>(v)); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
int32_t get_i32(const uint8_t* p) { return static_cast<int32_t>(get_u32(p)); }

size_t fixed_body_bytes(FrameType type) {
  switch (type) {
    case FrameType::kHello: return 16;
    case FrameType::kData: return 4;
    case FrameType::kEvent: return 12;
    case FrameType::kAddCredit: return 4;
    case FrameType::kCloseChannel:
    case FrameType::kCancelChannel:
    case FrameType::kError: return 0;
  }
  return 0;
}

bool has_tail(FrameType type) {
  return type == FrameType::kData || type == FrameType::kEvent || type == FrameType::kError;
}

}  // namespace

const char* frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::kHello: return "HELLO";
    case FrameType::kData: return "DATA";
    case FrameType::kEvent: return "EVENT";
    case FrameType::kAddCredit: return "ADD_CREDIT";
    case FrameType::kCloseChannel: return "CLOSE_CHANNEL";
    case FrameType::kCancelChannel: return "CANCEL_CHANNEL";
    case FrameType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

size_t frame_head_bytes(FrameType type) { return kFrameHeaderBytes + fixed_body_bytes(type); }

size_t encode_frame_head(const FrameHead& head, uint8_t* out) {
  const size_t head_bytes = frame_head_bytes(head.type);
  put_u32(out, static_cast<uint32_t>(head_bytes - kLengthFieldBytes + head.tail_bytes));
  out[4] = static_cast<uint8_t>(head.type);
  out[5] = head.flags;
  out[6] = 0;
  out[7] = 0;
  put_i32(out + 8, head.channel.edge);
  put_i32(out + 12, head.channel.producer_subtask);
  put_i32(out + 16, head.channel.consumer_subtask);
  put_i32(out + 20, head.channel.attempt);
  uint8_t* body = out + kFrameHeaderBytes;
  switch (head.type) {
    case FrameType::kHello:
      put_u32(body, head.version);
      put_i32(body + 4, head.taskmanager_id);
      put_u64(body + 8, head.job_fingerprint);
      break;
    case FrameType::kData: put_i32(body, head.num_records); break;
    case FrameType::kEvent:
      put_i32(body, head.overtaken_buffers);
      put_u64(body + 4, static_cast<uint64_t>(head.promote_at_ms));
      break;
    case FrameType::kAddCredit: put_i32(body, head.credits); break;
    case FrameType::kCloseChannel:
    case FrameType::kCancelChannel:
    case FrameType::kError: break;
  }
  return head_bytes;
}

Result<FrameHead> decode_frame_header(const uint8_t* in, const FrameLimits& limits) {
  const uint32_t length = get_u32(in);
  const uint8_t type = in[4];
  if (type < static_cast<uint8_t>(FrameType::kHello) || type > static_cast<uint8_t>(FrameType::kError)) {
    return Status::corruption("data connection: expected a frame type in [1, 7], got " + std::to_string(type));
  }
  FrameHead head;
  head.type = static_cast<FrameType>(type);
  head.flags = in[5];
  head.channel.edge = get_i32(in + 8);
  head.channel.producer_subtask = get_i32(in + 12);
  head.channel.consumer_subtask = get_i32(in + 16);
  head.channel.attempt = get_i32(in + 20);
  const size_t min_length = frame_head_bytes(head.type) - kLengthFieldBytes;
  if (length < min_length) {
    return Status::corruption(std::string("data connection: a ") + frame_type_name(head.type) +
                              " frame needs a length of at least " + std::to_string(min_length) + ", got " +
                              std::to_string(length));
  }
  const size_t tail = length - min_length;
  const size_t max_tail = !has_tail(head.type)             ? 0
                          : head.type == FrameType::kData ? limits.max_data_bytes
                                                          : limits.max_control_bytes;
  if (tail > max_tail) {
    return Status::corruption(std::string("data connection: a ") + frame_type_name(head.type) +
                              " frame may carry at most " + std::to_string(max_tail) + " bytes after its head, got " +
                              std::to_string(tail));
  }
  head.tail_bytes = static_cast<uint32_t>(tail);
  return head;
}

Status decode_frame_fixed(const uint8_t* in, FrameHead* head) {
  switch (head->type) {
    case FrameType::kHello:
      head->version = get_u32(in);
      head->taskmanager_id = get_i32(in + 4);
      head->job_fingerprint = get_u64(in + 8);
      return Status::ok();
    case FrameType::kData:
      head->num_records = get_i32(in);
      if (head->num_records < 0) {
        return Status::corruption("data connection: DATA expects num_records >= 0, got " +
                                  std::to_string(head->num_records));
      }
      return Status::ok();
    case FrameType::kEvent:
      head->overtaken_buffers = get_i32(in);
      head->promote_at_ms = static_cast<int64_t>(get_u64(in + 4));
      if (head->overtaken_buffers < 0 || head->promote_at_ms < 0) {
        return Status::corruption("data connection: EVENT expects overtaken_buffers >= 0 and promote_at_ms >= 0, got " +
                                  std::to_string(head->overtaken_buffers) + " and " +
                                  std::to_string(head->promote_at_ms));
      }
      return Status::ok();
    case FrameType::kAddCredit:
      head->credits = get_i32(in);
      if (head->credits <= 0) {
        return Status::corruption("data connection: ADD_CREDIT expects a positive credit, got " +
                                  std::to_string(head->credits));
      }
      return Status::ok();
    case FrameType::kCloseChannel:
    case FrameType::kCancelChannel:
    case FrameType::kError: return Status::ok();
  }
  return Status::ok();
}

std::vector<uint8_t> encode_frame(const FrameHead& head, const uint8_t* tail, size_t tail_bytes) {
  FrameHead h = head;
  h.tail_bytes = static_cast<uint32_t>(tail_bytes);
  std::vector<uint8_t> out(kMaxFrameHeadBytes + tail_bytes);
  const size_t n = encode_frame_head(h, out.data());
  if (tail_bytes != 0) std::memcpy(out.data() + n, tail, tail_bytes);
  out.resize(n + tail_bytes);
  return out;
}

}  // namespace sluice::runtime::tcp
