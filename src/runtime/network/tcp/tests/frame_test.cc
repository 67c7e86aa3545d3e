// The data connection's frames: round trips, little-endian layout, and refusal of bad headers before any
// allocation.
#include "runtime/network/tcp/frame.h"

#include <gtest/gtest.h>

namespace sluice::runtime::tcp {
namespace {

FrameHead decode_all(const std::vector<uint8_t>& bytes, const FrameLimits& limits = {}) {
  Result<FrameHead> head = decode_frame_header(bytes.data(), limits);
  EXPECT_TRUE(head.is_ok()) << head.status().to_string();
  if (!head.is_ok()) return {};
  FrameHead h = std::move(head).value();
  EXPECT_TRUE(decode_frame_fixed(bytes.data() + kFrameHeaderBytes, &h).is_ok());
  EXPECT_EQ(bytes.size(), frame_head_bytes(h.type) + h.tail_bytes);
  return h;
}

TEST(Frame, EveryTypeRoundTrips) {
  const RemoteChannelId id{3, 1, 2, 7};
  FrameHead hello;
  hello.type = FrameType::kHello;
  hello.version = kProtocolVersion;
  hello.taskmanager_id = 4;
  hello.job_fingerprint = 0x0123456789abcdefULL;
  FrameHead h = decode_all(encode_frame(hello, nullptr, 0));
  EXPECT_EQ(h.type, FrameType::kHello);
  EXPECT_EQ(h.version, kProtocolVersion);
  EXPECT_EQ(h.taskmanager_id, 4);
  EXPECT_EQ(h.job_fingerprint, 0x0123456789abcdefULL);

  FrameHead data;
  data.type = FrameType::kData;
  data.channel = id;
  data.num_records = 9;
  const std::vector<uint8_t> bytes{1, 2, 3, 4, 5};
  h = decode_all(encode_frame(data, bytes.data(), bytes.size()));
  EXPECT_EQ(h.type, FrameType::kData);
  EXPECT_EQ(h.channel, id);
  EXPECT_EQ(h.num_records, 9);
  EXPECT_EQ(h.tail_bytes, 5u);

  FrameHead event;
  event.type = FrameType::kEvent;
  event.flags = kFlagPriority;
  event.channel = id;
  event.overtaken_buffers = 2;
  event.promote_at_ms = 1'700'000'000'123;
  h = decode_all(encode_frame(event, bytes.data(), 1));
  EXPECT_EQ(h.flags, kFlagPriority);
  EXPECT_EQ(h.overtaken_buffers, 2);
  EXPECT_EQ(h.promote_at_ms, 1'700'000'000'123);

  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  credit.channel = id;
  credit.credits = 5;
  EXPECT_EQ(decode_all(encode_frame(credit, nullptr, 0)).credits, 5);
  for (FrameType t : {FrameType::kCloseChannel, FrameType::kCancelChannel}) {
    FrameHead f;
    f.type = t;
    f.channel = id;
    EXPECT_EQ(decode_all(encode_frame(f, nullptr, 0)).type, t);
  }
}

TEST(Frame, HeaderIsLittleEndian) {
  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  credit.channel = RemoteChannelId{0x01020304, 0, 0, 0};
  credit.credits = 1;
  const std::vector<uint8_t> bytes = encode_frame(credit, nullptr, 0);
  ASSERT_EQ(bytes.size(), 28u);
  EXPECT_EQ(bytes[0], 24);  // length: 28 - 4
  EXPECT_EQ(bytes[1], 0);
  EXPECT_EQ(bytes[4], static_cast<uint8_t>(FrameType::kAddCredit));
  EXPECT_EQ(bytes[8], 0x04);
  EXPECT_EQ(bytes[11], 0x01);
  EXPECT_EQ(bytes[24], 1);
}

TEST(Frame, BadHeadersAreRefused) {
  FrameLimits limits;
  limits.max_data_bytes = 100;
  limits.max_control_bytes = 10;
  FrameHead data;
  data.type = FrameType::kData;
  std::vector<uint8_t> payload(101);
  std::vector<uint8_t> too_long = encode_frame(data, payload.data(), payload.size());
  Result<FrameHead> r = decode_frame_header(too_long.data(), limits);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("at most 100 bytes"), std::string::npos) << r.status().to_string();

  // A length field of 4 GiB is refused from the header alone.
  std::vector<uint8_t> huge = encode_frame(data, nullptr, 0);
  huge[0] = huge[1] = huge[2] = huge[3] = 0xff;
  EXPECT_FALSE(decode_frame_header(huge.data(), limits).is_ok());

  std::vector<uint8_t> unknown = encode_frame(data, nullptr, 0);
  unknown[4] = 42;
  r = decode_frame_header(unknown.data(), limits);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("got 42"), std::string::npos);

  FrameHead credit;
  credit.type = FrameType::kAddCredit;
  std::vector<uint8_t> with_tail = encode_frame(credit, payload.data(), 1);  // fixed-size frames have no tail
  EXPECT_FALSE(decode_frame_header(with_tail.data(), limits).is_ok());
  std::vector<uint8_t> short_length = encode_frame(credit, nullptr, 0);
  short_length[0] = 10;  // shorter than ADD_CREDIT's fixed part
  EXPECT_FALSE(decode_frame_header(short_length.data(), limits).is_ok());

  credit.credits = 0;
  std::vector<uint8_t> zero = encode_frame(credit, nullptr, 0);
  Result<FrameHead> head = decode_frame_header(zero.data(), limits);
  ASSERT_TRUE(head.is_ok());
  FrameHead h = std::move(head).value();
  EXPECT_FALSE(decode_frame_fixed(zero.data() + kFrameHeaderBytes, &h).is_ok());
}

}  // namespace
}  // namespace sluice::runtime::tcp
