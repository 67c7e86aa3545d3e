#include "checkpoint/metadata_codec.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <string>
#include <vector>

#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

using testing::bytes_of;
using testing::file_handle;
using testing::inline_handle;
using testing::sample_metadata;

constexpr const char* kWhat = "/ck/job/chk-7/_metadata";

// Rewrites the frame's version field and recomputes the checksum, as a newer (or broken) writer would.
std::vector<uint8_t> with_version(std::vector<uint8_t> bytes, uint32_t version) {
  for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<uint8_t>(version >> (8 * i));
  const size_t body = bytes.size() - kMetadataTrailerBytes;
  uint64_t sum = XXH3_64bits(bytes.data(), body);
  for (int i = 0; i < 8; ++i) bytes[body + i] = static_cast<uint8_t>(sum >> (8 * i));
  return bytes;
}

std::vector<uint8_t> reseal(std::vector<uint8_t> bytes) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | bytes[4 + i];
  return with_version(std::move(bytes), v);
}

TEST(MetadataCodec, RoundTripsEveryPart) {
  CheckpointMetadata m = sample_metadata();
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto back = decode_metadata(*bytes, kWhat);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);
  EXPECT_EQ(back->format_version, 2u);  // no channel state: version 2 (metadata_codec.h)
  // Spot checks, so a broken operator== cannot hide a loss.
  ASSERT_EQ(back->operators.size(), 4u);
  EXPECT_EQ(back->operators[1].operator_name, std::string("per \xff\xfe auction"));
  ASSERT_TRUE(back->operators[1].subtasks[0].keyed_state.has_value());
  EXPECT_EQ(back->operators[1].subtasks[0].keyed_state->stream.relative_path, "chk-7/keyed-0-abc");
  EXPECT_EQ(back->operators[1].subtasks[1].keyed_state->stream.inline_bytes, testing::pattern(1000));
  EXPECT_FALSE(back->operators[0].subtasks[1].keyed_state.has_value());
  EXPECT_FALSE(back->operators[0].subtasks[1].operator_state.has_value());
  EXPECT_TRUE(back->operators[2].subtasks[0].keyed_state->range.is_empty());
  EXPECT_EQ(back->properties.at("binary"), std::string("\x00\x01\xff", 3));
  ASSERT_EQ(back->lineage.size(), 2u);
  EXPECT_EQ(back->lineage[1].to_hex(), "33333333333333334444444444444444");
}

TEST(MetadataCodec, RoundTripsSavepointAndEmptyMetadata) {
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(0);
  m.type = SnapshotType::kSavepoint;
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok());
  auto back = decode_metadata(*bytes, kWhat);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);
}

TEST(MetadataCodec, FrameStartsWithMagicAndVersion) {
  auto bytes = encode_metadata(sample_metadata());
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(std::string(bytes->begin(), bytes->begin() + 4), "SLCK");
  EXPECT_EQ((*bytes)[4], 2);
}

TEST(MetadataCodec, EveryTruncationIsCorruptionNamingTheFile) {
  auto bytes = encode_metadata(sample_metadata());
  ASSERT_TRUE(bytes.is_ok());
  for (size_t len = 0; len < bytes->size(); ++len) {
    std::vector<uint8_t> cut(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(len));
    auto r = decode_metadata(cut, kWhat);
    ASSERT_FALSE(r.is_ok()) << "truncated to " << len;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << len << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(kWhat), std::string::npos) << r.status().message();
  }
  std::vector<uint8_t> longer = *bytes;
  longer.push_back(0);
  EXPECT_EQ(decode_metadata(longer, kWhat).status().code(), StatusCode::kCorruption);
}

TEST(MetadataCodec, EverySingleByteFlipIsCorruptionNamingTheFile) {
  auto bytes = encode_metadata(sample_metadata());
  ASSERT_TRUE(bytes.is_ok());
  for (size_t i = 0; i < bytes->size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x10}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> bad = *bytes;
      bad[i] ^= mask;
      auto r = decode_metadata(bad, kWhat);
      ASSERT_FALSE(r.is_ok()) << "byte " << i << " mask " << int{mask};
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << i << ": " << r.status().to_string();
      EXPECT_NE(r.status().message().find(kWhat), std::string::npos);
    }
  }
}

TEST(MetadataCodec, NewerFormatVersionIsRefusedClearly) {
  auto bytes = encode_metadata(sample_metadata());
  ASSERT_TRUE(bytes.is_ok());
  auto r = decode_metadata(with_version(*bytes, CheckpointMetadata::kFormatVersion + 1), kWhat);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("newer Sluice"), std::string::npos) << r.status().message();
  const std::string newer = "version " + std::to_string(CheckpointMetadata::kFormatVersion + 1);
  EXPECT_NE(r.status().message().find(newer), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(kWhat), std::string::npos);

  auto zero = decode_metadata(with_version(*bytes, 0), kWhat);
  EXPECT_EQ(zero.status().code(), StatusCode::kCorruption);
}

TEST(MetadataCodec, BadMagicSaysWhatTheFileIsNot) {
  auto bytes = encode_metadata(sample_metadata());
  ASSERT_TRUE(bytes.is_ok());
  (*bytes)[0] = 'X';
  auto r = decode_metadata(*bytes, kWhat);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("not a Sluice checkpoint metadata file"), std::string::npos);
}

TEST(MetadataCodec, StructurallyInvalidPayloadWithValidFrameIsCorruption) {
  CheckpointMetadata m = sample_metadata();
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok());
  // Replace one hex digit of the job id in the payload by a non-hex character, then reseal the frame.
  const std::string hex = m.job_id.to_hex();
  auto it = std::search(bytes->begin(), bytes->end(), hex.begin(), hex.end());
  ASSERT_NE(it, bytes->end());
  *it = 'Z';
  auto r = decode_metadata(reseal(*bytes), kWhat);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("job id"), std::string::npos) << r.status().message();

  // The same in a lineage entry.
  auto lineage_bytes = encode_metadata(m);
  ASSERT_TRUE(lineage_bytes.is_ok());
  const std::string lineage_hex = m.lineage[1].to_hex();
  auto at = std::search(lineage_bytes->begin(), lineage_bytes->end(), lineage_hex.begin(), lineage_hex.end());
  ASSERT_NE(at, lineage_bytes->end());
  at[5] = 'g';
  auto lr = decode_metadata(reseal(*lineage_bytes), kWhat);
  EXPECT_EQ(lr.status().code(), StatusCode::kCorruption);
  EXPECT_NE(lr.status().message().find("lineage job id '33333g"), std::string::npos) << lr.status().message();

  // A file path that escapes the job directory, smuggled past the encoder the same way.
  CheckpointMetadata m2 = sample_metadata();
  m2.operators[1].subtasks[0].operator_state = file_handle("chk-7/xx/ab", 25000, 42);
  auto b2 = encode_metadata(m2);
  ASSERT_TRUE(b2.is_ok());
  const std::string inner = "chk-7/xx/ab";
  auto it2 = std::search(b2->begin(), b2->end(), inner.begin(), inner.end());
  ASSERT_NE(it2, b2->end());
  it2[6] = '.';
  it2[7] = '.';
  auto r2 = decode_metadata(reseal(*b2), kWhat);
  EXPECT_EQ(r2.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r2.status().message().find("chk-7/../ab"), std::string::npos) << r2.status().message();
}

// An absolute path passed as an entropy-injected data file wherever it pointed, so a `_metadata` could name any
// file of the filesystem as the checkpoint's own, and discarding the checkpoint once claimed (discard_location)
// deleted it (found writing fuzz/savepoint_folder_fuzzer, whose bystander files must survive every input). Such
// files now lie in the checkpoint's own folder, shared ones in a job's shared/ folder.
TEST(MetadataCodec, EntropyInjectedFilesLieInTheCheckpointsOwnFolder) {
  const CheckpointMetadata sample = sample_metadata();
  const std::string job = sample.job_id.to_hex();
  auto with_operator_file = [&](const std::string& path) {
    CheckpointMetadata m = sample;
    m.operators[1].subtasks[0].operator_state = file_handle(path, 25000, 42);
    return m;
  };
  EXPECT_TRUE(encode_metadata(with_operator_file("s3://b/x7k2/ck/" + job + "/chk-7/opstate-0-def")).is_ok());
  const std::vector<std::string> outside = {"file:///home/user/notes.txt",
                                             "s3://b/ck/" + job + "/chk-8/op",
                                             "s3://b/ck/fedcba9876543210fedcba9876543210/chk-7/op",
                                             "s3://b/ck/" + job + "/op",
                                             "s3://b/ck/" + job + "/shared/op",
                                             "s3://b/ck/" + job + "/chk-7/sub/op"};
  for (const std::string& bad : outside) {
    auto r = encode_metadata(with_operator_file(bad));
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("outside the checkpoint's own folder"), std::string::npos)
        << r.status().message();
  }

  // Shared files: any job's shared/ folder (a claimed checkpoint's files are its job's), nothing else.
  auto with_shared_file = [&](const std::string& path) {
    CheckpointMetadata m = sample;
    IncrementalKeyedStateHandle k;
    k.range = KeyGroupRange(0, 85);
    k.backend_id = std::string(32, 'a');
    k.checkpoint_id = CheckpointId(7);
    k.shared_files = {IncrementalFile{"000012.sst", file_handle(path, 4096, 1), false}};
    m.operators[1].subtasks[0].keyed_state.reset();
    m.operators[1].subtasks[0].incremental_keyed_state = k;
    return m;
  };
  EXPECT_TRUE(encode_metadata(with_shared_file("s3://b/x7k2/ck/" + job + "/shared/agg-0.sst")).is_ok());
  const std::string other_job = "fedcba9876543210fedcba9876543210";
  EXPECT_TRUE(encode_metadata(with_shared_file("s3://b/x7k2/ck/" + other_job + "/shared/a.sst")).is_ok());
  for (const std::string& bad : std::vector<std::string>{"file:///home/user/shared/notes.txt",
                                                        "s3://b/ck/" + job + "/chk-7/a.sst",
                                                        "s3://b/ck/" + job + "/shared/sub/a.sst"}) {
    auto r = encode_metadata(with_shared_file(bad));
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("not inside a job's shared/ folder"), std::string::npos)
        << r.status().message();
  }

  // The reader refuses what the encoder would: a path of the same length smuggled into the bytes.
  const std::string own = "s3://b/ck/" + job + "/chk-7/opstate-0-def";
  auto bytes = encode_metadata(with_operator_file(own));
  ASSERT_TRUE(bytes.is_ok());
  auto it = std::search(bytes->begin(), bytes->end(), own.begin(), own.end());
  ASSERT_NE(it, bytes->end());
  const std::string victim = "file:///home/user/data/important.doc/" + std::string(own.size() - 37, 'x');
  ASSERT_EQ(victim.size(), own.size());
  std::copy(victim.begin(), victim.end(), it);
  auto r = decode_metadata(reseal(*bytes), kWhat);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("outside the checkpoint's own folder"), std::string::npos)
      << r.status().message();
}

// Each of these would make a restore misread or escape the job directory; the encoder refuses them.
TEST(MetadataCodec, EncoderRejectsMalformedMetadata) {
  using Meta = CheckpointMetadata;
  struct Case {
    const char* name;
    void (*mutate)(Meta&);
    const char* expected;
  };
  const Case cases[] = {
      {"escaping path", [](Meta& m) { m.operators[1].subtasks[0].operator_state->relative_path = "../x"; },
       "not a relative path"},
      {"absolute path", [](Meta& m) { m.operators[1].subtasks[0].operator_state->relative_path = "/etc/x"; },
       "not a relative path"},
      {"empty component", [](Meta& m) { m.operators[1].subtasks[0].operator_state->relative_path = "a//b"; },
       "not a relative path"},
      {"offset count", [](Meta& m) { m.operators[1].subtasks[0].keyed_state->offsets.pop_back(); },
       "expected 87"},
      {"decreasing offsets", [](Meta& m) { m.operators[1].subtasks[0].keyed_state->offsets[1] = 1u << 30; },
       "decrease"},
      {"last offset", [](Meta& m) { m.operators[1].subtasks[0].keyed_state->stream.size_bytes += 1; },
       "is not the stream size"},
      {"range beyond max parallelism",
       [](Meta& m) { m.operators[1].subtasks[1].keyed_state->range = KeyGroupRange(171, 256); },
       "outside [0, 255]"},
      {"inline size", [](Meta& m) { m.operators[0].subtasks[0].operator_state->size_bytes = 3; },
       "says size 3"},
      {"inline checksum", [](Meta& m) { m.operators[0].subtasks[0].operator_state->checksum ^= 1; },
       "checksum"},
      {"file with inline bytes",
       [](Meta& m) { m.operators[1].subtasks[0].operator_state->inline_bytes = {1}; },
       "also carries inline bytes"},
      {"duplicate operator", [](Meta& m) { m.operators[3].operator_id = "sink"; }, "appears twice"},
      {"empty operator id", [](Meta& m) { m.operators[3].operator_id = ""; }, "empty operator id"},
      {"subtask out of range", [](Meta& m) { m.operators[1].subtasks[1].subtask_index = 3; },
       "below parallelism 3"},
      {"unsorted subtasks", [](Meta& m) { std::swap(m.operators[1].subtasks[0], m.operators[1].subtasks[1]); },
       "increasing"},
      {"parallelism above max", [](Meta& m) { m.operators[3].parallelism = 129; }, "max parallelism"},
      {"negative id", [](Meta& m) { m.checkpoint_id = CheckpointId(-1); }, "negative checkpoint id"},
  };
  for (const Case& c : cases) {
    CheckpointMetadata m = sample_metadata();
    c.mutate(m);
    auto r = encode_metadata(m);
    ASSERT_FALSE(r.is_ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << c.name << ": " << r.status().message();
  }
}

TEST(CheckpointMetadata, StateSizeAndReferencedFiles) {
  CheckpointMetadata m = sample_metadata();
  // inline "split-0 offset 42" (17) + file 300000 + file 25000 + inline 1000 + inline 0
  EXPECT_EQ(m.state_size_bytes(), 17u + 300000u + 25000u + 1000u);
  EXPECT_EQ(m.referenced_files(), (std::vector<std::string>{"chk-7/keyed-0-abc", "chk-7/opstate-0-def"}));
  m.operators[0].subtasks[1].operator_state = file_handle("chk-7/keyed-0-abc", 300000, 0x1111222233334444ULL);
  EXPECT_EQ(m.referenced_files().size(), 2u) << "deduplicated";
  EXPECT_EQ(CheckpointMetadata{}.state_size_bytes(), 0u);
  EXPECT_TRUE(CheckpointMetadata{}.referenced_files().empty());
}

}  // namespace
}  // namespace sluice::checkpoint
