// IncrementalKeyedStateHandle in `_metadata` (round trip, validation, sizes, format versions), the filesystem
// storage's shared and private uploads (unique names, aborted checkpoints leave no shared file, completed ones
// keep theirs), claimed paths, and `sluice checkpoint verify` over the shared files.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "checkpoint/checkpoint_verify.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
const JobId kJob(0x1111, 0x2222);
const std::string kBackend = "0123456789abcdef0123456789abcdef";

IncrementalFile file(std::string local, std::string path, uint64_t size, bool reused = false) {
  return IncrementalFile{std::move(local), testing::file_handle(std::move(path), size, size * 7), reused};
}

CheckpointMetadata with_incremental(IncrementalKeyedStateHandle h) {
  OperatorSubtaskState st;
  st.subtask_index = 1;
  st.incremental_keyed_state = std::move(h);
  return testing::single_subtask_metadata(CheckpointId(4), kJob, std::move(st), "agg", 2);
}

IncrementalKeyedStateHandle sample_handle() {
  IncrementalKeyedStateHandle h;
  h.range = KeyGroupRange(64, 127);
  h.backend_id = kBackend;
  h.checkpoint_id = CheckpointId(4);
  h.shared_files = {file("000009.sst", "shared/agg-1-aa.sst", 1000, true),
                    file("000012.sst", "shared/agg-1-bb.sst", 300),
                    file("000013.sst", "../00000000000000030000000000000004/shared/x.sst", 50, true)};
  h.private_files = {file("CURRENT", "chk-4/CURRENT-cc", 16), file("MANIFEST-000011", "chk-4/MANIFEST-dd", 200)};
  h.state_meta = {'S', 'L', 'S', 'M', 1};
  return h;
}

TEST(IncrementalHandle, RoundTripsWithSizes) {
  CheckpointMetadata m = with_incremental(sample_handle());
  EXPECT_TRUE(m.has_incremental_state());
  EXPECT_EQ(m.state_size_bytes(), 1000u + 300 + 50 + 16 + 200);
  EXPECT_EQ(m.checkpointed_size_bytes(), 300u + 16 + 200);
  EXPECT_EQ(m.shared_files(), (std::vector<std::string>{"../00000000000000030000000000000004/shared/x.sst",
                                                        "shared/agg-1-aa.sst", "shared/agg-1-bb.sst"}));
  EXPECT_EQ(m.referenced_files().size(), 5u);
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ((*bytes)[4], CheckpointMetadata::kFirstIncrementalFormatVersion);
  auto back = decode_metadata(*bytes, "m");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);
  EXPECT_TRUE(back->operators[0].subtasks[0].incremental_keyed_state->shared_files[0].reused);
}

TEST(IncrementalHandle, ValidationNamesTheProblem) {
  auto expect_invalid = [](IncrementalKeyedStateHandle h, const std::string& text) {
    auto r = encode_metadata(with_incremental(std::move(h)));
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().to_string();
  };
  auto h = sample_handle();
  h.shared_files[1].file.relative_path = "chk-4/x.sst";
  expect_invalid(h, "not inside a shared/ folder");
  h = sample_handle();
  h.shared_files[1].file.relative_path = "../../etc/shared/x";
  expect_invalid(h, "leaves the job directory");
  h = sample_handle();
  h.private_files[0].file.relative_path = "../x";
  expect_invalid(h, "not a relative path inside the job directory");
  h = sample_handle();
  h.private_files[0].reused = true;
  expect_invalid(h, "cannot be reused");
  h = sample_handle();
  h.shared_files[1].local_name = "000009.sst";
  expect_invalid(h, "appears twice");
  h = sample_handle();
  h.backend_id = "xyz";
  expect_invalid(h, "backend id");
  h = sample_handle();
  h.range = KeyGroupRange(64, 128);
  expect_invalid(h, "outside");
  CheckpointMetadata both = with_incremental(sample_handle());
  both.operators[0].subtasks[0].keyed_state = testing::keyed(KeyGroupRange(64, 127), testing::inline_handle({}));
  auto r = encode_metadata(both);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("both"), std::string::npos);
}

TEST(IncrementalHandle, VersionOneMetadataStillDecodesButMayNotHoldIncrementalState) {
  // A version-1 file (no incremental handle) decodes.
  auto plain = encode_metadata(testing::sample_metadata());
  ASSERT_TRUE(plain.is_ok());
  std::vector<uint8_t> v1 = *plain;
  v1[4] = 1;
  const size_t body = v1.size() - kMetadataTrailerBytes;
  uint64_t sum = XXH3_64bits(v1.data(), body);
  for (int i = 0; i < 8; ++i) v1[body + i] = static_cast<uint8_t>(sum >> (8 * i));
  auto back = decode_metadata(v1, "v1");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->format_version, 1u);
  // Version 1 claiming an incremental handle is damage.
  auto inc = encode_metadata(with_incremental(sample_handle()));
  ASSERT_TRUE(inc.is_ok());
  std::vector<uint8_t> bad = *inc;
  bad[4] = 1;
  const size_t b2 = bad.size() - kMetadataTrailerBytes;
  sum = XXH3_64bits(bad.data(), b2);
  for (int i = 0; i < 8; ++i) bad[b2 + i] = static_cast<uint8_t>(sum >> (8 * i));
  auto r = decode_metadata(bad, "v1-incremental");
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

std::string write_local(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(IncrementalHandle, SharedUploadsAreUniqueAndAnAbortedCheckpointLeavesNone) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck");
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  EXPECT_TRUE(storage.supports_incremental());
  const std::string sst = write_local(tmp / "000007.sst", std::string(5000, 'x'));
  const std::string manifest = write_local(tmp / "MANIFEST-000003", "manifest");
  const std::string job_dir = *storage.job_dir();

  // Checkpoint 1 completes; checkpoint 2 uploads the same SST again, then is aborted.
  auto f1 = storage.stream_factory(CheckpointId(1));
  ASSERT_TRUE(f1.is_ok());
  auto a = (*f1)->write_shared_file("agg subtask 1", "agg-0", sst);
  auto b = (*f1)->write_shared_file("agg subtask 2", "agg-1", sst);  // same local name, other subtask
  auto p = (*f1)->write_private_file("agg subtask 1", "MANIFEST-000003", manifest);
  ASSERT_TRUE(a.is_ok() && b.is_ok() && p.is_ok()) << a.status().to_string();
  EXPECT_NE(a->relative_path, b->relative_path);
  EXPECT_EQ(a->relative_path.rfind("shared/agg-0-", 0), 0u) << a->relative_path;
  EXPECT_EQ(a->relative_path.substr(a->relative_path.size() - 4), ".sst");
  EXPECT_EQ(p->relative_path.rfind("chk-1/MANIFEST-000003-", 0), 0u) << p->relative_path;
  EXPECT_EQ(a->size_bytes, 5000u);
  EXPECT_EQ(a->checksum, XXH3_64bits(std::string(5000, 'x').data(), 5000));
  IncrementalKeyedStateHandle h;
  h.range = KeyGroupRange(0, 127);
  h.backend_id = kBackend;
  h.checkpoint_id = CheckpointId(1);
  h.shared_files = {IncrementalFile{"000007.sst", *a, false}};
  h.private_files = {IncrementalFile{"MANIFEST-000003", *p, false}};
  CheckpointMetadata m = with_incremental(h);
  m.checkpoint_id = CheckpointId(1);
  auto loc = storage.write_metadata(m);
  ASSERT_TRUE(loc.is_ok()) << loc.status().to_string();

  auto f2 = storage.stream_factory(CheckpointId(2));
  ASSERT_TRUE(f2.is_ok());
  auto c = (*f2)->write_shared_file("agg subtask 1", "agg-0", sst);
  ASSERT_TRUE(c.is_ok());
  ASSERT_TRUE(storage.discard(CheckpointId(2)).is_ok());
  EXPECT_FALSE(fs::exists(job_dir + "/" + c->relative_path)) << "an aborted checkpoint's upload is deleted";
  EXPECT_EQ((*f2)->write_shared_file("agg subtask 1", "agg-0", sst).status().code(), StatusCode::kCancelled);
  // The completed checkpoint's files stay even when its folder goes (the registry decides about shared files).
  ASSERT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_TRUE(fs::exists(job_dir + "/" + a->relative_path));
  ASSERT_TRUE(storage.discard_shared_files({a->relative_path, b->relative_path}).is_ok());
  EXPECT_TRUE(fs::is_empty(job_dir + "/shared"));
}

TEST(IncrementalHandle, VerifyChecksSharedAndPrivateFiles) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck");
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  const std::string sst = write_local(tmp / "000007.sst", std::string(3000, 'y'));
  auto f = storage.stream_factory(CheckpointId(4));
  ASSERT_TRUE(f.is_ok());
  auto s = (*f)->write_shared_file("agg subtask 1", "agg-1", sst);
  auto p = (*f)->write_private_file("agg subtask 1", "CURRENT", sst);
  ASSERT_TRUE(s.is_ok() && p.is_ok());
  IncrementalKeyedStateHandle h = sample_handle();
  h.shared_files = {IncrementalFile{"000007.sst", *s, false}};
  h.private_files = {IncrementalFile{"CURRENT", *p, false}};
  auto loc = storage.write_metadata(with_incremental(h));
  ASSERT_TRUE(loc.is_ok()) << loc.status().to_string();
  auto ok = verify_checkpoint(*loc);
  ASSERT_TRUE(ok.is_ok());
  EXPECT_TRUE(ok->ok()) << ok->to_string();
  EXPECT_EQ(ok->checkpoints[0].files_checked, 2u);

  testing::flip_byte(*storage.job_dir() + "/" + s->relative_path, 100);
  auto bad = verify_checkpoint(*loc);
  ASSERT_TRUE(bad.is_ok());
  ASSERT_EQ(bad->problem_count(), 1u) << bad->to_string();
  EXPECT_NE(bad->checkpoints[0].problems[0].problem.find("shared file 000007.sst"), std::string::npos)
      << bad->to_string();
  fs::remove(*storage.job_dir() + "/" + s->relative_path);
  auto missing = verify_checkpoint(*loc);
  ASSERT_TRUE(missing.is_ok());
  EXPECT_EQ(missing->problem_count(), 1u);
}

TEST(IncrementalHandle, ClaimedSharedPathsAreRebasedToSiblingJobFolders) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck");
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  const JobId other(0x3, 0x4);
  fs::create_directories(tmp / ("ck/" + other.to_hex() + "/chk-9"));
  const std::string theirs = tmp / ("ck/" + other.to_hex() + "/chk-9");
  EXPECT_EQ(storage.rebase_shared_path(theirs, "shared/a.sst"), "../" + other.to_hex() + "/shared/a.sst");
  EXPECT_EQ(storage.rebase_shared_path(theirs, "../x/shared/a.sst"), "../x/shared/a.sst");
  const std::string own = *storage.job_dir() + "/chk-3";
  fs::create_directories(own);
  EXPECT_EQ(storage.rebase_shared_path(own, "shared/a.sst"), "shared/a.sst");
  fs::create_directories(tmp / "elsewhere/j/chk-1");
  EXPECT_EQ(storage.rebase_shared_path(tmp / "elsewhere/j/chk-1", "shared/a.sst"), std::nullopt);
  EXPECT_EQ(storage.file_path(theirs, "shared/a.sst"), tmp / ("ck/" + other.to_hex() + "/shared/a.sst"));
}

}  // namespace
}  // namespace sluice::checkpoint
