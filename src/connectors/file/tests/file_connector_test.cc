#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sluice/connectors/file/file_sink.h"
#include "sluice/connectors/file/file_source.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"
#include "file_test_dir.h"

namespace sluice::file {
namespace {

namespace fs = std::filesystem;

class FileConnectorTest : public FileTestDir {};

TEST(PartFileName, OnlyTheNamesTheSinkWrites) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(is_part_file_name("part-" + job + "-0-1-0"));
  EXPECT_TRUE(is_part_file_name("part-" + job + "-12-345-6789"));
  for (const std::string& name :
       {std::string("part-mine.txt"), std::string("part-0-1"), std::string("part-0123-0-1-0"), "part-" + job,
        "part-" + job + "-0-1", "part-" + job + "-0-1-", "part-" + job + "-0--1-0", "part-" + job + "-0-1-0.txt",
        "part-" + job + "-0-1-0-2", "part-" + job + "-a-1-0", "part-" + job + "-0-1-x",
        std::string("part-0123456789ABCDEF0123456789abcdef-0-1-0"), "." + ("part-" + job + "-0-1-0"),
        ".part-" + job + "-0-1-0.inprogress", "Part-" + job + "-0-1-0", std::string(""), std::string("part-")}) {
    EXPECT_FALSE(is_part_file_name(name)) << name;
  }
}

TEST_F(FileConnectorTest, ListsFilesRecursivelySkippingHiddenOnes) {
  write(dir_ / "b.txt", "x\n");
  write(dir_ / "a.txt", "x\n");
  write(dir_ / "sub" / "c.txt", "x\n");
  write(dir_ / ".hidden", "x\n");
  write(dir_ / "_SUCCESS", "");
  write(dir_ / ".git" / "d.txt", "x\n");
  auto files = list_files({dir_.string()});
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  std::vector<std::string> expected{(dir_ / "a.txt").string(), (dir_ / "b.txt").string(), (dir_ / "sub" / "c.txt").string()};
  EXPECT_EQ(files.value(), expected);
}

TEST_F(FileConnectorTest, MissingPathIsNamedInTheError) {
  auto files = list_files({(dir_ / "nope").string()});
  ASSERT_FALSE(files.is_ok());
  EXPECT_EQ(files.status().code(), StatusCode::kNotFound);
  EXPECT_NE(files.status().message().find("nope"), std::string::npos);

  StreamExecutionEnvironment env;
  env.from_source(FileSource::for_paths({(dir_ / "nope").string()}), "lines").sink_to(DiscardingSink<std::string>());
  // The split enumerator starts with the first deployment, after the submission: the job fails, naming the path.
  auto r = env.execute("missing");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_NE(r->error.message().find("nope"), std::string::npos) << r->error.to_string();
}

TEST_F(FileConnectorTest, ReadsEveryLineOfEveryFileAtAnyParallelism) {
  std::vector<std::string> expected;
  for (int f = 0; f < 7; ++f) {
    std::string text;
    for (int l = 0; l < 500 + f * 100; ++l) {
      std::string line = "file" + std::to_string(f) + " line " + std::to_string(l) + std::string(static_cast<size_t>(l % 50), 'z');
      expected.push_back(line);
      text += line + (l % 3 == 0 ? "\r\n" : "\n");
    }
    if (f == 3) {  // no trailing newline
      text.pop_back();
    }
    write(dir_ / ("f" + std::to_string(f) + ".txt"), text);
  }
  std::sort(expected.begin(), expected.end());
  for (int p : {1, 3}) {
    StreamExecutionEnvironment env;
    env.set_parallelism(p);
    auto out = std::make_shared<CollectedRecords<std::string>>();
    env.from_source(FileSource::for_paths({dir_.string()}), "lines").sink_to(CollectSink<std::string>(out));
    auto r = env.execute("read");
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
    auto got = out->snapshot();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << "parallelism " << p;
  }
}

// A reader given a split with an offset resumes at that byte, and its snapshot reports the position.
TEST_F(FileConnectorTest, SplitOffsetsResumeMidFile) {
  write(dir_ / "a.txt", "one\ntwo\nthree\n");
  struct Ctx final : SourceReaderContext {
    int32_t subtask_index() const override { return 0; }
    int32_t parallelism() const override { return 1; }
    void send_split_request() override { ++requests; }
    MetricGroup& metric_group() override { return registry.root(); }
    const Clock& clock() const override { return clock_; }
    int requests = 0;
    MetricRegistry registry;
    ManualClock clock_;
  } ctx;
  struct Sink final : Output<std::string> {
    void collect(std::string&& s) override { lines.push_back(std::move(s)); }
    std::vector<std::string> lines;
  } sink;
  ReaderOutput<std::string> out(&sink);
  FileSource src({dir_.string()});
  auto reader = src.create_reader(ctx);
  reader->start();
  reader->add_splits({FileSplit{(dir_ / "a.txt").string(), 4}});  // after "one\n"
  ASSERT_EQ(reader->poll_next(out), InputStatus::kMoreAvailable);
  auto snap = reader->snapshot_state();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].offset, 8);  // after "two\n"
  reader->notify_no_more_splits();
  while (reader->poll_next(out) == InputStatus::kMoreAvailable) {
  }
  EXPECT_EQ(sink.lines, (std::vector<std::string>{"two", "three"}));
}

TEST_F(FileConnectorTest, SinkWritesPartFilesPerSubtaskAndRolls) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  std::string out = (dir_ / "out").string();
  env.from_sequence(1, 10'000)
      .sink_to(FileSink<int64_t>::for_row_format(out, [](const int64_t& x, std::string& line) { line += std::to_string(x); },
                                                 /*part_size_bytes=*/8 * 1024));
  auto r = env.execute("sink");
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
  std::vector<int64_t> values;
  int parts = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    std::string name = e.path().filename().string();
    if (name == ".sluice-job.lock") continue;  // the running job's claim (docs/safety.md); readers skip hidden files
    ASSERT_EQ(name.rfind("part-", 0), 0u) << name;
    EXPECT_LE(fs::file_size(e.path()), 8 * 1024 + 16u);
    ++parts;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) values.push_back(std::stoll(line));
  }
  EXPECT_GT(parts, 4);  // ~49 KB of text in 8 KB parts
  std::sort(values.begin(), values.end());
  ASSERT_EQ(values.size(), 10'000u);
  for (int64_t i = 0; i < 10'000; ++i) EXPECT_EQ(values[static_cast<size_t>(i)], i + 1);
}

TEST_F(FileConnectorTest, UnwritableSinkDirectoryFailsTheTaskNamingIt) {
  write(dir_ / "blocker", "a regular file where a directory should be");
  StreamExecutionEnvironment env;
  std::string out = (dir_ / "blocker" / "out").string();
  env.from_sequence(1, 10).sink_to(FileSink<int64_t>::for_row_format(out, [](const int64_t& x, std::string& l) { l += std::to_string(x); }));
  // Refused at submission, when the job claims its output folder (docs/safety.md), before any task starts.
  auto r = env.execute("bad-sink");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("output folder '" + out + "': cannot create '" + out + "'"), std::string::npos)
      << r.status().to_string();
}

// A part file's <checkpoint> is the first checkpoint that can pre-commit it: it follows the ids the sink
// really sees, also when checkpoints 2-4 never reached it (aborted before their barriers arrived).
TEST_F(FileConnectorTest, PartFileNamesCarryTheCheckpointIdTheSinkSees) {
  int64_t next_checkpoint = 1;
  const std::string job = "0123456789abcdef0123456789abcdef";
  TransactionalPartWriter writer(dir_.string(), job, 3, [&] { return next_checkpoint; }, 1 << 20, false, {});
  writer.append_line("a");
  std::vector<FileCommittable> first = writer.prepare_commit();  // checkpoint 1's barrier
  next_checkpoint = 5;                                          // the next barrier the sink sees is 5
  writer.append_line("b");
  std::vector<FileCommittable> second = writer.prepare_commit();
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(fs::path(first[0].final_path).filename().string(), "part-" + job + "-3-1-0");
  EXPECT_EQ(fs::path(second[0].final_path).filename().string(), "part-" + job + "-3-5-1");
  commit_part_files(first);
  commit_part_files(second);
  commit_part_files(second);  // idempotent
  EXPECT_TRUE(fs::exists(first[0].final_path));
  EXPECT_TRUE(fs::exists(second[0].final_path));
}

// A restart without a checkpoint (the failure came before the first one) aborts what the failed attempt of
// the same run left hidden (here a process killed before its writer could close); another run's hidden files stay
// (a checkpoint of that run may still own them).
TEST_F(FileConnectorTest, ARestartWithoutACheckpointRemovesItsRunsLingeringFiles) {
  const std::string job = "0123456789abcdef0123456789abcdef", other = "fedcba9876543210fedcba9876543210";
  write(dir_ / (".part-" + job + "-0-1-0.inprogress"), "lost with the killed attempt\n");
  write(dir_ / (".part-" + other + "-0-3-0.pending"), "another run's pre-committed data\n");
  ASSERT_TRUE(fs::exists(dir_ / (".part-" + job + "-0-1-0.inprogress")));
  TransactionalPartWriter restarted(dir_.string(), job, 0, [] { return int64_t{1}; }, 1 << 20, false, {});
  EXPECT_FALSE(fs::exists(dir_ / (".part-" + job + "-0-1-0.inprogress")));
  EXPECT_TRUE(fs::exists(dir_ / (".part-" + other + "-0-3-0.pending")));
}

// Committables outlive the process (they are kept in checkpoints), so committing must not depend on the
// working directory nor on where the output directory was when the checkpoint was taken: the sink's
// committer commits each file by name inside its own directory. A restore started from another directory
// (with --output adjusted) commits into the same files; a restore of a copied output directory commits into
// the copy, never into the original.
TEST_F(FileConnectorTest, CommitterCommitsInItsOwnDirectoryWhateverTheWorkingDirectory) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  auto encode = [](const std::string& s, std::string& out) { out = s; };
  const fs::path cwd = fs::current_path();
  fs::create_directories(dir_ / "elsewhere");
  fs::current_path(dir_);
  std::vector<FileCommittable> files;
  {
    TransactionalPartWriter writer("out", job, 0, [] { return int64_t{1}; }, 1 << 20, false, {});
    writer.append_line("committed after a restore from another directory");
    files = writer.prepare_commit();
  }
  fs::copy(dir_ / "out", dir_ / "copy");
  fs::current_path(dir_ / "elsewhere");  // the restored run starts here, with --output ../out
  std::string error;
  try {
    TransactionalFileSink<std::string>("../out", encode).create_committer()->commit(files);
    TransactionalFileSink<std::string>("../copy", encode).create_committer()->commit(files);
  } catch (const std::exception& e) {
    error = e.what();
  }
  fs::current_path(cwd);
  ASSERT_EQ(error, "");
  ASSERT_EQ(files.size(), 1u);
  const std::string name = "part-" + job + "-0-1-0";
  EXPECT_TRUE(fs::exists(dir_ / "out" / name));
  EXPECT_TRUE(fs::exists(dir_ / "copy" / name));
  EXPECT_FALSE(fs::exists(dir_ / "copy" / ("." + name + ".pending")));
}

// Committables are split-distributed operator state: on restore a subtask may receive a pre-committed file
// another subtask wrote (after a rescale, or when subtasks held different numbers of committables), while
// the subtask whose index the file carries receives none. That subtask must not abort the file as a leftover:
// it belongs to the restored checkpoint (its <checkpoint> is not after it) and is being committed elsewhere.
// Files pre-committed after the restored checkpoint, and every in-progress file, are still aborted.
TEST_F(FileConnectorTest, ARestoredSubtaskKeepsPendingFilesOfTheRestoredCheckpointItDoesNotOwn) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  const std::string owned_elsewhere = ".part-" + job + "-0-7-3.pending";  // in checkpoint 7's state, given to subtask 1
  const std::string after_restore = ".part-" + job + "-0-8-4.pending";    // pre-committed after checkpoint 7
  const std::string in_progress = ".part-" + job + "-0-8-5.inprogress";
  for (const std::string& name : {owned_elsewhere, after_restore, in_progress}) write(dir_ / name, "data\n");
  // Subtask 0 restored from checkpoint 7 with no committables of its own: its next checkpoint is 8.
  TransactionalPartWriter restored(dir_.string(), job, 0, [] { return int64_t{8}; }, 1 << 20, true, {});
  EXPECT_TRUE(fs::exists(dir_ / owned_elsewhere)) << "a file of the restored checkpoint was aborted";
  EXPECT_FALSE(fs::exists(dir_ / after_restore));
  EXPECT_FALSE(fs::exists(dir_ / in_progress));
  // Subtask 1, which owns it, commits it.
  const std::string owned_name = owned_elsewhere.substr(1, owned_elsewhere.size() - 9);
  commit_part_files_in(dir_.string(), {FileCommittable{owned_name, 5, serialize_bytes(owned_elsewhere)}});
  EXPECT_TRUE(fs::exists(dir_ / ("part-" + job + "-0-7-3")));
}

// After a scale-down (here 4 -> 2) no subtask carries indexes 2 and 3 any more: restored subtask 0 aborts their
// in-progress files and their pending files pre-committed after the restored checkpoint, and keeps their pending
// files of the restored checkpoint (handed to some subtask, which commits them). Subtask 1 leaves them alone.
TEST_F(FileConnectorTest, RestoredSubtaskZeroCleansLeftoversOfVanishedSubtasks) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  const std::string in_progress_3 = ".part-" + job + "-3-8-5.inprogress";
  const std::string after_restore_2 = ".part-" + job + "-2-8-4.pending";
  const std::string of_restored_2 = ".part-" + job + "-2-7-3.pending";
  const std::string in_progress_1 = ".part-" + job + "-1-8-2.inprogress";
  for (const std::string& name : {in_progress_3, after_restore_2, of_restored_2, in_progress_1}) write(dir_ / name, "x\n");
  {
    TransactionalPartWriter one(dir_.string(), job, 1, [] { return int64_t{8}; }, 1 << 20, true, {},
                                TransactionalPartWriter::kDefaultBytesPerSync, 2);
    EXPECT_TRUE(fs::exists(dir_ / in_progress_3)) << "subtask 1 must not touch other indexes";
    EXPECT_FALSE(fs::exists(dir_ / in_progress_1));
  }
  TransactionalPartWriter zero(dir_.string(), job, 0, [] { return int64_t{8}; }, 1 << 20, true, {},
                               TransactionalPartWriter::kDefaultBytesPerSync, 2);
  EXPECT_FALSE(fs::exists(dir_ / in_progress_3));
  EXPECT_FALSE(fs::exists(dir_ / after_restore_2));
  EXPECT_TRUE(fs::exists(dir_ / of_restored_2)) << "a pending file of the restored checkpoint was aborted";
}

// Early writeback (bytes_per_sync) only changes when pages reach the disk: a part file holds exactly the lines
// written, in order, whether writeback starts after every write, every 4 KiB or never.
TEST_F(FileConnectorTest, EarlyWritebackKeepsEveryLineInOrder) {
  const std::string job = "0123456789abcdef0123456789abcdef";
  for (int64_t bytes_per_sync : {int64_t{0}, int64_t{1}, int64_t{4096}}) {
    SCOPED_TRACE("bytes_per_sync=" + std::to_string(bytes_per_sync));
    fs::remove_all(dir_);
    TransactionalPartWriter writer(dir_.string(), job, 0, [] { return int64_t{1}; }, 64 << 20, false, {},
                                   bytes_per_sync);
    std::string expected;
    for (int i = 0; i < 50'000; ++i) {  // ~340 KB: several 64 KiB write-outs
      std::string line = "line-" + std::to_string(i);
      writer.append_line(line);
      expected += line + "\n";
    }
    std::vector<FileCommittable> files = writer.prepare_commit();
    ASSERT_EQ(files.size(), 1u);
    commit_part_files(files);
    std::ifstream in(files[0].final_path, std::ios::binary);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, expected);
  }
}

}  // namespace
}  // namespace sluice::file
