// Channel state (unaligned checkpoints): the codec round-trips, every truncation and damaged structure fails
// loudly, and `_metadata` carries the handle from format version 3 on (older versions may not hold it).
#include <gtest/gtest.h>
#include <xxhash.h>

#include "checkpoint/channel_state.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

SubtaskChannelState sample_state() {
  SubtaskChannelState s;
  s.inputs.push_back(InputChannelState{0, {ChannelStateBuffer{2, {1, 2, 3, 4}}, ChannelStateBuffer{1, {5}}}});
  s.inputs.push_back(InputChannelState{3, {ChannelStateBuffer{1, std::vector<uint8_t>(300, 7)}}});
  s.outputs.push_back(OutputChannelState{0, 1, {ChannelStateBuffer{4, {9, 9, 9, 9}}}});
  s.outputs.push_back(OutputChannelState{1, 0, {ChannelStateBuffer{1, {}}}});
  return s;
}

TEST(ChannelState, RoundTripsWithSizes) {
  const SubtaskChannelState s = sample_state();
  EXPECT_EQ(s.data_bytes(), 4u + 1 + 300 + 4);
  EXPECT_EQ(s.num_records(), 2u + 1 + 1 + 4 + 1);
  auto back = decode_channel_state(encode_channel_state(s), "x");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, s);
  auto empty = decode_channel_state(encode_channel_state(SubtaskChannelState{}), "x");
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ChannelState, EveryTruncationAndTrailingByteIsCorruptionNamingTheSource) {
  const std::vector<uint8_t> bytes = encode_channel_state(sample_state());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = decode_channel_state(std::span<const uint8_t>(bytes.data(), n), "chk-9 op 'sink' subtask 1");
    ASSERT_FALSE(r.is_ok()) << "truncated to " << n << " bytes";
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("chk-9 op 'sink' subtask 1"), std::string::npos) << r.status().message();
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(decode_channel_state(longer, "x").status().code(), StatusCode::kCorruption);
  std::vector<uint8_t> magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(decode_channel_state(magic, "x").status().code(), StatusCode::kCorruption);
  std::vector<uint8_t> version = bytes;
  version[4] = 2;
  auto v = decode_channel_state(version, "x");
  EXPECT_EQ(v.status().code(), StatusCode::kCorruption);
  EXPECT_NE(v.status().message().find("version 2"), std::string::npos);
}

TEST(ChannelState, OutOfOrderOrEmptyEntriesAreRefused) {
  SubtaskChannelState unordered = sample_state();
  std::swap(unordered.inputs[0], unordered.inputs[1]);
  auto r = decode_channel_state(encode_channel_state(unordered), "x");
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("out of order"), std::string::npos);
  SubtaskChannelState no_buffers;
  no_buffers.outputs.push_back(OutputChannelState{0, 0, {}});
  EXPECT_EQ(decode_channel_state(encode_channel_state(no_buffers), "x").status().code(), StatusCode::kCorruption);
}

CheckpointMetadata with_channel_state(StreamStateHandle h) {
  CheckpointMetadata m = testing::sample_metadata();
  m.operators.front().subtasks.front().channel_state = std::move(h);
  return m;
}

TEST(ChannelState, MetadataCarriesTheHandleFromVersionThree) {
  const std::vector<uint8_t> state = encode_channel_state(sample_state());
  CheckpointMetadata m = with_channel_state(testing::file_handle("chk-7/src-channel-abc", state.size(), 5));
  EXPECT_TRUE(m.has_channel_state());
  EXPECT_FALSE(testing::sample_metadata().has_channel_state());
  EXPECT_EQ(m.state_size_bytes(), testing::sample_metadata().state_size_bytes() + state.size());
  const auto files = m.referenced_files();
  EXPECT_NE(std::find(files.begin(), files.end(), "chk-7/src-channel-abc"), files.end());
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ((*bytes)[4], 3);
  auto back = decode_metadata(*bytes, "m");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);

  // Version 2 holding channel state is damage (a version-2 reader would have dropped it).
  std::vector<uint8_t> v2 = *bytes;
  v2[4] = 2;
  const size_t body = v2.size() - kMetadataTrailerBytes;
  const uint64_t sum = XXH3_64bits(v2.data(), body);
  for (int i = 0; i < 8; ++i) v2[body + i] = static_cast<uint8_t>(sum >> (8 * i));
  auto old = decode_metadata(v2, "v2");
  ASSERT_FALSE(old.is_ok());
  EXPECT_EQ(old.status().code(), StatusCode::kCorruption);
  EXPECT_NE(old.status().message().find("channel state"), std::string::npos) << old.status().message();

  // A bad inline channel-state handle is refused when written.
  StreamStateHandle bad = testing::inline_handle({1, 2, 3});
  bad.checksum ^= 1;
  auto refused = encode_metadata(with_channel_state(bad));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("channel state"), std::string::npos) << refused.status().message();
}

// Only metadata with channel state needs version 3: an aligned checkpoint is written as version 2, so a build
// from before unaligned checkpoints (reading up to version 2) still reads it. Both round-trip.
TEST(ChannelState, MetadataWithoutChannelStateIsWrittenAsVersionTwo) {
  auto round_trip = [](const CheckpointMetadata& m, uint32_t version) {
    EXPECT_EQ(m.required_format_version(), version);
    auto bytes = encode_metadata(m);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    EXPECT_EQ((*bytes)[4], version);
    auto back = decode_metadata(*bytes, "v" + std::to_string(version));
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->format_version, version);
    EXPECT_EQ(*back, m);
  };
  round_trip(testing::sample_metadata(), 2);
  const std::vector<uint8_t> state = encode_channel_state(sample_state());
  round_trip(with_channel_state(testing::file_handle("chk-7/src-channel-abc", state.size(), 5)), 3);
}

}  // namespace
}  // namespace sluice::checkpoint
