#include "runtime/network/buffer.h"

#include <gtest/gtest.h>

#include "runtime/network/network_config.h"

namespace sluice::runtime {
namespace {

TEST(RuntimeEvent, EncodeDecodeRoundTripsEveryType) {
  for (EventType type : {EventType::kEndOfPartition, EventType::kCheckpointBarrier,
                         EventType::kCancelCheckpointMarker, EventType::kWatermark, EventType::kEndOfData,
                         EventType::kWatermarkStatus}) {
    RuntimeEvent event{type, {1, 2, 3, static_cast<uint8_t>(type)}};
    Buffer buffer = encode_event(event);
    EXPECT_TRUE(buffer.is_event());
    EXPECT_EQ(buffer.num_records, 0);
    Result<RuntimeEvent> decoded = decode_event(buffer);
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, event);
  }
  Result<RuntimeEvent> eop = decode_event(encode_event(RuntimeEvent::end_of_partition()));
  ASSERT_TRUE(eop.is_ok());
  EXPECT_EQ(eop->type, EventType::kEndOfPartition);
  EXPECT_TRUE(eop->payload.empty());
}

TEST(RuntimeEvent, DecodeRejectsWhatIsNotAnEvent) {
  Buffer data;
  data.bytes = {1};
  EXPECT_EQ(decode_event(data).status().code(), StatusCode::kCorruption);

  Buffer empty;
  empty.kind = Buffer::Kind::kEvent;
  EXPECT_EQ(decode_event(empty).status().code(), StatusCode::kCorruption);

  Buffer unknown;
  unknown.kind = Buffer::Kind::kEvent;
  unknown.bytes = {0};
  EXPECT_EQ(decode_event(unknown).status().code(), StatusCode::kCorruption);
  unknown.bytes = {7, 1};
  Result<RuntimeEvent> r = decode_event(unknown);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("got 7"), std::string::npos) << r.status().message();
}

TEST(NetworkConfig, DefaultsAreFlinksAndValidateNamesTheBadField) {
  NetworkConfig config;
  EXPECT_EQ(config.buffer_size_bytes, 32 * 1024);
  EXPECT_EQ(config.credits_per_channel, 2);
  EXPECT_EQ(config.max_buffers_per_channel, 10);
  EXPECT_TRUE(config.validate().is_ok());
  config.credits_per_channel = 0;
  Status s = config.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("credits_per_channel"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice::runtime
