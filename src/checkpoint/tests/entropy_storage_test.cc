// Entropy injection in the filesystem checkpoint storage (filesystem_checkpoint_storage.h): data files under the
// directory with the marker replaced, `_metadata` and the job folder under the directory without it, absolute
// handles that read, check and discard, savepoints without entropy, and the same names for the same seed. The
// filesystem is the local disk reporting an EntropyInjection (S3's behaviour; the S3 run is s3_entropy_it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
// GCC 12 with sanitizers at -O1 reports a false -Wmaybe-uninitialized inside <regex>'s own automaton code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/checkpoint_verify.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/savepoint_files.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace stdfs = std::filesystem;
using testing::TempDir;

// The local disk, injecting entropy as S3 does when s3.entropy.key is set, with directories implied as on S3 (a
// write creates its parent folders).
class EntropyLocalFileSystem final : public fs::FileSystem {
 public:
  std::string_view scheme() const override { return base_->scheme(); }
  Status create_dir(const std::string& p) override { return base_->create_dir(p); }
  Status write_file(const std::string& p, const std::vector<uint8_t>& b, fs::Durability d) override {
    make_parent(p);
    return base_->write_file(p, b, d);
  }
  Status sync_dir(const std::string& d) override { return base_->sync_dir(d); }
  Result<std::vector<uint8_t>> read_file(const std::string& p) override { return base_->read_file(p); }
  Result<fs::FileDigest> digest_file(const std::string& p) override { return base_->digest_file(p); }
  Result<fs::PathKind> stat(const std::string& p) override { return base_->stat(p); }
  Result<std::vector<fs::DirEntry>> list_dir(const std::string& d) override { return base_->list_dir(d); }
  Status remove_file(const std::string& p) override { return base_->remove_file(p); }
  Status remove_empty_dir(const std::string& p) override { return base_->remove_empty_dir(p); }
  Status remove_all(const std::string& p) override { return base_->remove_all(p); }
  Result<fs::FileDigest> copy_local_file(const std::string& l, const std::string& p, fs::Durability d) override {
    make_parent(p);
    return base_->copy_local_file(l, p, d);
  }
  const fs::EntropyInjection* entropy_injection() const override { return &entropy_; }

 private:
  static void make_parent(const std::string& p) {
    stdfs::create_directories(stdfs::path(fs::strip_file_scheme(p)).parent_path());
  }
  std::shared_ptr<fs::FileSystem> base_ = fs::local_file_system();
  fs::EntropyInjection entropy_{"_entropy_", 5};
};

const JobId kJob(0xaaaa, 0xbbbb);

FileSystemStorageOptions entropy_options(uint64_t seed) {
  FileSystemStorageOptions o;
  o.inline_threshold_bytes = 0;
  o.file_system = std::make_shared<EntropyLocalFileSystem>();
  o.names = NameSource::seeded(seed);
  return o;
}

CheckpointMetadata with_operator_state(CheckpointId id, StreamStateHandle h) {
  OperatorSubtaskState st;
  st.subtask_index = 0;
  st.operator_state = std::move(h);
  return testing::single_subtask_metadata(id, kJob, std::move(st));
}

// "file://<tmp>/<5 of [0-9a-z]>/ck/<job>/<rest>".
std::regex entropy_path(const std::string& tmp, const std::string& rest) {
  return std::regex("file://" + tmp + "/[0-9a-z]{5}/ck/" + kJob.to_hex() + "/" + rest);
}

TEST(EntropyStorage, DataFilesGetEntropyMetadataDoesNot) {
  TempDir tmp;
  const std::string root = tmp.path();
  FileSystemCheckpointStorage storage("file://" + root + "/_entropy_/ck", entropy_options(1));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  EXPECT_EQ(storage.base_dir(), "file://" + root + "/ck");
  EXPECT_EQ(*storage.job_dir(), "file://" + root + "/ck/" + kJob.to_hex());
  auto f = storage.stream_factory(CheckpointId(1));
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  auto h = (*f)->write_state("op subtask 0", "op-op", testing::pattern(100));
  ASSERT_TRUE(h.is_ok()) << h.status().to_string();
  EXPECT_TRUE(std::regex_match(h->relative_path, entropy_path(root, "chk-1/op-op-[0-9a-f]{16}"))) << h->relative_path;
  EXPECT_TRUE(is_absolute_handle_path(h->relative_path));
  auto loc = storage.write_metadata(with_operator_state(CheckpointId(1), *h));
  ASSERT_TRUE(loc.is_ok()) << loc.status().to_string();
  EXPECT_EQ(*loc, "file://" + root + "/ck/" + kJob.to_hex() + "/chk-1");
  EXPECT_TRUE(stdfs::exists(root + "/ck/" + kJob.to_hex() + "/chk-1/_metadata"));
  EXPECT_FALSE(stdfs::exists(root + "/_entropy_"));  // the marker is never a folder

  // Read back, checked, from the location; the metadata validates with its absolute handle.
  auto md = storage.read_metadata(*loc);
  ASSERT_TRUE(md.is_ok()) << md.status().to_string();
  auto located = locate_checkpoint(*fs::local_file_system(), *loc);
  ASSERT_TRUE(located.is_ok()) << located.status().to_string();
  EXPECT_EQ(files_outside_checkpoint_dir(*md, *located), std::vector<std::string>{h->relative_path});
  auto bytes = storage.read_state(*loc, *md->operators[0].subtasks[0].operator_state);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, testing::pattern(100));
  EXPECT_TRUE(storage.check_restore_files(*loc, *md, RestoreFileCheck::kChecksums).is_ok());
  EXPECT_EQ(storage.file_path(*loc, h->relative_path), h->relative_path);
  EXPECT_EQ(storage.rebase_shared_path(*loc, h->relative_path), h->relative_path);

  // `sluice checkpoint verify` of the directory as configured (marker included) finds it and checks the data file.
  fs::FileSystemRegistry registry;
  registry.register_file_system("file", std::make_shared<EntropyLocalFileSystem>());
  auto report = verify_checkpoint("file://" + root + "/_entropy_/ck", registry);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->checkpoints.size(), 1u);
  EXPECT_EQ(report->problem_count(), 0u) << report->to_string();

  // Discarding deletes the entropy file too.
  const std::string data_file = h->relative_path.substr(std::string("file://").size());
  ASSERT_TRUE(stdfs::exists(data_file));
  ASSERT_TRUE(storage.discard(CheckpointId(1)).is_ok());
  EXPECT_FALSE(stdfs::exists(data_file));
  EXPECT_FALSE(stdfs::exists(root + "/ck/" + kJob.to_hex() + "/chk-1"));
}

TEST(EntropyStorage, SharedAndPrivateUploadsGetEntropyAndAreDeletedByTheirOwner) {
  TempDir tmp;
  const std::string root = tmp.path();
  const std::string sst = root + "/000007.sst", manifest = root + "/MANIFEST-000003";
  std::ofstream(sst) << std::string(3000, 'x');
  std::ofstream(manifest) << "manifest";
  FileSystemCheckpointStorage storage("file://" + root + "/_entropy_/ck", entropy_options(2));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto f = storage.stream_factory(CheckpointId(3));
  ASSERT_TRUE(f.is_ok());
  auto shared = (*f)->write_shared_file("agg subtask 0", "agg-0", sst);
  auto priv = (*f)->write_private_file("agg subtask 0", "MANIFEST-000003", manifest);
  ASSERT_TRUE(shared.is_ok() && priv.is_ok());
  EXPECT_TRUE(std::regex_match(shared->relative_path, entropy_path(root, "shared/agg-0-[0-9a-f]{16}\\.sst")))
      << shared->relative_path;
  EXPECT_TRUE(std::regex_match(priv->relative_path, entropy_path(root, "chk-3/MANIFEST-000003-[0-9a-f]{16}")))
      << priv->relative_path;
  // An aborted checkpoint takes its shared and private uploads with it.
  ASSERT_TRUE(storage.discard(CheckpointId(3)).is_ok());
  EXPECT_FALSE(stdfs::exists(shared->relative_path.substr(7)));
  EXPECT_FALSE(stdfs::exists(priv->relative_path.substr(7)));

  // A shared file of a completed checkpoint goes when the registry says so, by its absolute path.
  auto f4 = storage.stream_factory(CheckpointId(4));
  ASSERT_TRUE(f4.is_ok());
  auto kept = (*f4)->write_shared_file("agg subtask 0", "agg-0", sst);
  ASSERT_TRUE(kept.is_ok());
  ASSERT_TRUE(storage.write_metadata(with_operator_state(CheckpointId(4), testing::inline_handle({1}))).is_ok());
  ASSERT_TRUE(storage.discard(CheckpointId(4)).is_ok());
  EXPECT_TRUE(stdfs::exists(kept->relative_path.substr(7)));  // shared: not the checkpoint's to delete
  ASSERT_TRUE(storage.discard_shared_files({kept->relative_path}).is_ok());
  EXPECT_FALSE(stdfs::exists(kept->relative_path.substr(7)));
}

TEST(EntropyStorage, AClaimedCheckpointIsDeletedWithItsEntropyFiles) {
  TempDir tmp;
  const std::string root = tmp.path();
  std::string loc, data;
  {
    FileSystemCheckpointStorage earlier("file://" + root + "/_entropy_/ck", entropy_options(3));
    ASSERT_TRUE(earlier.initialize(kJob).is_ok());
    auto f = earlier.stream_factory(CheckpointId(5));
    ASSERT_TRUE(f.is_ok());
    auto h = (*f)->write_state("op subtask 0", "op-op", testing::pattern(64));
    ASSERT_TRUE(h.is_ok());
    data = h->relative_path.substr(7);
    auto l = earlier.write_metadata(with_operator_state(CheckpointId(5), *h));
    ASSERT_TRUE(l.is_ok());
    loc = *l;
  }
  FileSystemCheckpointStorage later("file://" + root + "/_entropy_/ck", entropy_options(4));
  ASSERT_TRUE(later.initialize(JobId(1, 2)).is_ok());
  ASSERT_TRUE(stdfs::exists(data));
  ASSERT_TRUE(later.discard_location(loc).is_ok());
  EXPECT_FALSE(stdfs::exists(data));
  EXPECT_FALSE(stdfs::exists(root + "/ck/" + kJob.to_hex() + "/chk-5"));
}

// A `_metadata` in this job's chk-1 folder that claims to be another job's checkpoint 1 and names that job's
// entropy-injected file as its own validates (the file lies in "<its job>/chk-1/"), but discarding the folder once
// claimed must not delete the other job's file: only files in the location's own "<job folder>/chk-1/" go (found by
// fuzz/savepoint_folder_fuzzer).
TEST(EntropyStorage, AClaimedCheckpointNeverDeletesAnotherJobsFiles) {
  TempDir tmp;
  const std::string root = tmp.path();
  const JobId other(0xcccc, 0xdddd);
  const std::string theirs = root + "/x7k2/ck/" + other.to_hex() + "/chk-1/op-op-0";
  stdfs::create_directories(stdfs::path(theirs).parent_path());
  std::ofstream(theirs) << "another job's state";
  StreamStateHandle h;
  h.relative_path = "file://" + theirs;
  h.size_bytes = 19;
  CheckpointMetadata planted = testing::single_subtask_metadata(CheckpointId(1), other, [&] {
    OperatorSubtaskState st;
    st.subtask_index = 0;
    st.operator_state = h;
    return st;
  }());
  auto bytes = encode_metadata(planted);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  const std::string folder = root + "/ck/" + kJob.to_hex() + "/chk-1";
  stdfs::create_directories(folder);
  ASSERT_TRUE(fs::local_file_system()->write_file(folder + "/_metadata", *bytes, fs::Durability::kNone).is_ok());

  FileSystemCheckpointStorage later("file://" + root + "/_entropy_/ck", entropy_options(5));
  ASSERT_TRUE(later.initialize(JobId(1, 2)).is_ok());
  ASSERT_TRUE(later.discard_location("file://" + folder).is_ok());
  EXPECT_FALSE(stdfs::exists(folder));
  EXPECT_TRUE(stdfs::exists(theirs));
}

TEST(EntropyStorage, SavepointsGetNoEntropy) {
  TempDir tmp;
  const std::string root = tmp.path();
  FileSystemCheckpointStorage storage("file://" + root + "/_entropy_/ck", entropy_options(5));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto folder = create_savepoint_dir(*std::make_shared<EntropyLocalFileSystem>(), "file://" + root + "/_entropy_/sp",
                                     kJob);
  ASSERT_TRUE(folder.is_ok()) << folder.status().to_string();
  EXPECT_EQ(folder->find("_entropy_"), std::string::npos) << *folder;
  EXPECT_EQ(folder->rfind("file://" + root + "/sp/savepoint-", 0), 0u) << *folder;
  ASSERT_TRUE(storage.begin_savepoint(CheckpointId(6), *folder).is_ok());
  auto f = storage.stream_factory(CheckpointId(6));
  ASSERT_TRUE(f.is_ok());
  auto h = (*f)->write_state("op subtask 0", "op-op", testing::pattern(64));
  ASSERT_TRUE(h.is_ok());
  EXPECT_EQ(h->relative_path.find('/'), std::string::npos) << h->relative_path;  // a plain name in the folder
}

TEST(EntropyStorage, TheSameSeedGivesTheSameNames) {
  auto names_of = [](uint64_t seed) {
    TempDir tmp;
    FileSystemCheckpointStorage storage("file://" + tmp.path() + "/_entropy_/ck", entropy_options(seed));
    EXPECT_TRUE(storage.initialize(kJob).is_ok());
    auto f = storage.stream_factory(CheckpointId(1));
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) {
      auto h = (*f)->write_state("op subtask 0", "op-op", testing::pattern(10));
      out.push_back(h->relative_path.substr(7 + tmp.path().size()));
    }
    return out;
  };
  EXPECT_EQ(names_of(11), names_of(11));
  EXPECT_NE(names_of(11), names_of(12));
}

}  // namespace
}  // namespace sluice::checkpoint
