// Savepoints in the filesystem storage (begin_savepoint), their folders, self-containment, and dispose.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_verify.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/savepoint_files.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

namespace fs = std::filesystem;
using sluice::fs::local_file_system;
using testing::pattern;
using testing::TempDir;

const JobId kJob(0x1234567890abcdefULL, 0xbbbb);

// Savepoint `id` of one operator (keyed and operator state, both files at threshold 0) into `folder`.
Result<std::pair<CheckpointMetadata, std::string>> write_savepoint(FileSystemCheckpointStorage& storage, CheckpointId id,
                                                                   const std::string& folder) {
  SLUICE_RETURN_IF_ERROR(storage.begin_savepoint(id, folder));
  SLUICE_ASSIGN_OR_RETURN(auto factory, storage.stream_factory(id));
  SLUICE_ASSIGN_OR_RETURN(StreamStateHandle k, factory->write_state("op", "keyed-0", pattern(300, 3)));
  SLUICE_ASSIGN_OR_RETURN(StreamStateHandle o, factory->write_state("op", "operator-0", pattern(40, 5)));
  CheckpointMetadata m;
  m.checkpoint_id = id;
  m.job_id = kJob;
  m.type = SnapshotType::kSavepoint;
  OperatorState op;
  op.operator_id = "per-auction";
  op.operator_name = "per-auction";
  op.parallelism = 1;
  op.max_parallelism = 128;
  OperatorSubtaskState st;
  st.keyed_state = testing::keyed(KeyGroupRange(0, 127), k);
  st.operator_state = o;
  op.subtasks = {st};
  m.operators = {op};
  SLUICE_ASSIGN_OR_RETURN(std::string location, storage.write_metadata(m));
  return std::make_pair(m, location);
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(SavepointStorage, WritesIntoItsOwnFolderWithPlainNamesAndRestoresAfterAMove) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck", testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto folder = create_savepoint_dir(*local_file_system(), tmp / "sp/deeper", kJob);
  ASSERT_TRUE(folder.is_ok()) << folder.status().to_string();
  EXPECT_EQ(fs::path(*folder).filename().string().rfind("savepoint-123456-", 0), 0u) << *folder;
  EXPECT_EQ(fs::path(*folder).filename().string().size(), std::string("savepoint-123456-").size() + 12);
  auto written = write_savepoint(storage, CheckpointId(7), *folder);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(written->second, *folder);
  // Nothing in the job's checkpoint folder; everything in the savepoint's.
  EXPECT_EQ(entries(*storage.job_dir()), (std::set<std::string>{"shared", "taskowned"}));
  const auto files = entries(*folder);
  EXPECT_EQ(files.size(), 3u);
  EXPECT_TRUE(files.count("_metadata"));
  for (const auto* h : {&written->first.operators[0].subtasks[0].keyed_state->stream,
                        &*written->first.operators[0].subtasks[0].operator_state}) {
    EXPECT_EQ(h->relative_path.find('/'), std::string::npos) << h->relative_path;
  }
  // Moved and renamed: it reads and verifies from its new place.
  const std::string moved = tmp / "elsewhere";
  fs::rename(*folder, moved);
  auto md = storage.read_metadata(moved);
  ASSERT_TRUE(md.is_ok()) << md.status().to_string();
  EXPECT_EQ(md->type, SnapshotType::kSavepoint);
  auto keyed = storage.read_state(moved, md->operators[0].subtasks[0].keyed_state->stream);
  ASSERT_TRUE(keyed.is_ok()) << keyed.status().to_string();
  EXPECT_EQ(*keyed, pattern(300, 3));
  EXPECT_TRUE(storage.check_restore_files(moved, *md, RestoreFileCheck::kChecksums).is_ok());
  auto report = verify_checkpoint(moved);
  ASSERT_TRUE(report.is_ok());
  EXPECT_TRUE(report->ok()) << report->to_string();
}

// Checkpointing off: the storage serves savepoints only. It makes no folder of its own (not even with a base
// directory), refuses checkpoints, and writes, aborts and reads savepoints as ever.
TEST(SavepointStorage, InitializedForSavepointsOnlyItMakesNoFolderAndRefusesCheckpoints) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck", testing::threshold(0));
  ASSERT_TRUE(storage.initialize_for_savepoints(kJob).is_ok());
  EXPECT_FALSE(fs::exists(tmp / "ck"));
  auto checkpoint = storage.stream_factory(CheckpointId(1));
  ASSERT_FALSE(checkpoint.is_ok());
  EXPECT_EQ(checkpoint.status().code(), StatusCode::kFailedPrecondition) << checkpoint.status().to_string();
  EXPECT_NE(checkpoint.status().message().find("savepoints only"), std::string::npos) << checkpoint.status().to_string();
  EXPECT_TRUE(storage.discard(CheckpointId(1)).is_ok()) << "nothing to remove for a checkpoint never written";
  EXPECT_FALSE(storage.job_dir().is_ok());

  auto folder = create_savepoint_dir(*local_file_system(), tmp / "sp", kJob);
  ASSERT_TRUE(folder.is_ok()) << folder.status().to_string();
  auto written = write_savepoint(storage, CheckpointId(2), *folder);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(written->second, *folder);
  EXPECT_EQ(entries(*folder).size(), 3u);
  auto md = storage.read_metadata(*folder);
  ASSERT_TRUE(md.is_ok()) << md.status().to_string();
  EXPECT_EQ(md->checkpoint_id, CheckpointId(2));

  auto aborted = create_savepoint_dir(*local_file_system(), tmp / "sp", kJob);
  ASSERT_TRUE(aborted.is_ok()) << aborted.status().to_string();
  ASSERT_TRUE(storage.begin_savepoint(CheckpointId(3), *aborted).is_ok());
  ASSERT_TRUE(storage.stream_factory(CheckpointId(3)).is_ok());
  EXPECT_TRUE(storage.discard(CheckpointId(3)).is_ok());
  EXPECT_FALSE(fs::exists(*aborted));
  auto removed = storage.remove_job_dir_if_empty();
  ASSERT_TRUE(removed.is_ok()) << removed.status().to_string();
  EXPECT_FALSE(*removed);
  EXPECT_EQ(entries(tmp.path()), (std::set<std::string>{"sp"})) << "the savepoint folder is all it wrote";
}

TEST(SavepointStorage, AnAbortedSavepointLeavesNoFolder) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck", testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto folder = create_savepoint_dir(*local_file_system(), tmp / "sp", kJob);
  ASSERT_TRUE(folder.is_ok());
  ASSERT_TRUE(storage.begin_savepoint(CheckpointId(3), *folder).is_ok());
  auto factory = storage.stream_factory(CheckpointId(3));
  ASSERT_TRUE(factory.is_ok());
  ASSERT_TRUE((*factory)->write_state("op", "keyed-0", pattern(100)).is_ok());
  // A native savepoint's RocksDB files go into its own folder under plain names, never into shared/.
  const std::string local = tmp / "000012.sst";
  testing::write_raw(local, pattern(64, 9));
  auto upload = (*factory)->write_shared_file("op", "per-auction-0", local);
  ASSERT_TRUE(upload.is_ok()) << upload.status().to_string();
  EXPECT_EQ(upload->relative_path.find('/'), std::string::npos) << upload->relative_path;
  EXPECT_EQ(fs::path(upload->relative_path).extension(), ".sst");
  EXPECT_TRUE(fs::exists(fs::path(*folder) / upload->relative_path));
  auto manifest = (*factory)->write_private_file("op", "MANIFEST-000005", local);
  ASSERT_TRUE(manifest.is_ok()) << manifest.status().to_string();
  EXPECT_EQ(manifest->relative_path.find('/'), std::string::npos) << manifest->relative_path;
  EXPECT_TRUE(fs::is_empty(*storage.job_dir() + "/shared"));
  ASSERT_TRUE(storage.discard(CheckpointId(3)).is_ok());
  EXPECT_FALSE(fs::exists(*folder));
  EXPECT_TRUE(fs::exists(tmp / "sp"));
  // A checkpoint id already being written cannot become a savepoint.
  ASSERT_TRUE(storage.stream_factory(CheckpointId(4)).is_ok());
  EXPECT_EQ(storage.begin_savepoint(CheckpointId(4), tmp / "x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(create_savepoint_dir(*local_file_system(), "", kJob).status().code(), StatusCode::kInvalidArgument);
}

TEST(SavepointStorage, MetadataOfASavepointMustBeSelfContained) {
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(2);
  m.job_id = kJob;
  m.type = SnapshotType::kSavepoint;
  OperatorState op;
  op.operator_id = "op";
  op.parallelism = 1;
  op.max_parallelism = 128;
  OperatorSubtaskState st;
  StreamStateHandle h;
  h.relative_path = "chk-2/keyed-0-0123456789abcdef";
  h.size_bytes = 1;
  st.operator_state = h;
  op.subtasks = {st};
  m.operators = {op};
  Status refused = validate_metadata(m);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("plain file name"), std::string::npos) << refused.to_string();
  m.type = SnapshotType::kCheckpoint;  // a checkpoint's files live in chk-<n>/
  EXPECT_TRUE(validate_metadata(m).is_ok());
}

TEST(SavepointStorage, OnlyANativeSavepointHoldsRocksDBFilesAndOnlyUnderPlainNames) {
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(4);
  m.job_id = kJob;
  m.type = SnapshotType::kSavepoint;
  m.savepoint_format = SavepointFormatType::kNative;
  m.state_backend = "rocksdb";
  OperatorState op;
  op.operator_id = "per-auction";
  op.parallelism = 1;
  op.max_parallelism = 128;
  IncrementalKeyedStateHandle h;
  h.range = KeyGroupRange(0, 127);
  h.backend_id = std::string(32, 'a');
  h.checkpoint_id = CheckpointId(4);
  h.shared_files = {{"000012.sst", testing::file_handle("per-auction-0-0123456789abcdef.sst", 64, 1), false}};
  h.private_files = {{"CURRENT", testing::file_handle("CURRENT-0123456789abcdef", 16, 2), false}};
  OperatorSubtaskState st;
  st.incremental_keyed_state = h;
  op.subtasks = {st};
  m.operators = {op};
  ASSERT_TRUE(validate_metadata(m).is_ok()) << validate_metadata(m).to_string();
  EXPECT_TRUE(m.shared_files().empty()) << "a native savepoint's files are its own";
  EXPECT_EQ(m.referenced_files().size(), 2u);
  // The format and the backend survive the encoding; older metadata (no such fields) reads as canonical.
  auto bytes = encode_metadata(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto back = decode_metadata(*bytes, "test");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);
  EXPECT_TRUE(back->is_native_savepoint());
  EXPECT_EQ(back->state_backend, "rocksdb");

  CheckpointMetadata canonical = m;
  canonical.savepoint_format = SavepointFormatType::kCanonical;
  EXPECT_NE(validate_metadata(canonical).message().find("only a native one"), std::string::npos)
      << validate_metadata(canonical).to_string();
  CheckpointMetadata in_shared = m;
  in_shared.operators[0].subtasks[0].incremental_keyed_state->shared_files[0].file.relative_path = "shared/x.sst";
  EXPECT_NE(validate_metadata(in_shared).message().find("plain file name"), std::string::npos)
      << validate_metadata(in_shared).to_string();
  CheckpointMetadata reused = m;
  reused.operators[0].subtasks[0].incremental_keyed_state->shared_files[0].reused = true;
  EXPECT_NE(validate_metadata(reused).message().find("reuses no file"), std::string::npos)
      << validate_metadata(reused).to_string();
  CheckpointMetadata checkpoint = m;
  checkpoint.type = SnapshotType::kCheckpoint;
  EXPECT_EQ(validate_metadata(checkpoint).code(), StatusCode::kInvalidArgument) << "a checkpoint has no format";

  EXPECT_EQ(parse_savepoint_format("Native"), SavepointFormatType::kNative);
  EXPECT_EQ(parse_savepoint_format("CANONICAL"), SavepointFormatType::kCanonical);
  EXPECT_FALSE(parse_savepoint_format("fast").has_value());
  EXPECT_STREQ(savepoint_format_name(SavepointFormatType::kNative), "NATIVE");
}

TEST(SavepointStorage, DisposeDeletesTheSavepointAndRefusesCheckpoints) {
  TempDir tmp;
  FileSystemCheckpointStorage storage(tmp / "ck", testing::threshold(0));
  ASSERT_TRUE(storage.initialize(kJob).is_ok());
  auto folder = create_savepoint_dir(*local_file_system(), tmp / "sp", kJob);
  ASSERT_TRUE(folder.is_ok());
  ASSERT_TRUE(write_savepoint(storage, CheckpointId(9), *folder).is_ok());
  testing::write_raw(*folder + "/notes.txt", testing::bytes_of("mine"));
  auto r = dispose_savepoint(*local_file_system(), *folder);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->savepoint_id, CheckpointId(9));
  EXPECT_EQ(r->files_deleted, 3);
  EXPECT_EQ(r->bytes_deleted, 340u);
  EXPECT_EQ(r->kept, std::vector<std::string>{*folder + "/notes.txt"});
  EXPECT_FALSE(r->folder_removed);
  fs::remove(*folder + "/notes.txt");
  // Gone: disposing again fails naming _metadata.
  auto again = dispose_savepoint(*local_file_system(), *folder);
  EXPECT_EQ(again.status().code(), StatusCode::kNotFound) << again.status().to_string();
  EXPECT_NE(again.status().message().find("_metadata"), std::string::npos);

  // A checkpoint is the job's, not the user's to dispose of.
  auto factory = storage.stream_factory(CheckpointId(10));
  ASSERT_TRUE(factory.is_ok());
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(10);
  m.job_id = kJob;
  auto location = storage.write_metadata(m);
  ASSERT_TRUE(location.is_ok()) << location.status().to_string();
  auto refused = dispose_savepoint(*local_file_system(), *location);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fs::exists(*location + "/_metadata"));
}

}  // namespace
}  // namespace sluice::checkpoint
