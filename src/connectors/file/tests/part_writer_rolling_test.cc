// TransactionalPartWriter with rolling policies that keep part files open across checkpoints: rolling on
// processing time (a ManualClock, nothing sleeps), the open file persisted into writer state and recovered from it
// exactly (also after a scale-down and a second restore from the same checkpoint), and the cleanup at close.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "file_test_dir.h"
#include "sluice/connectors/file/transactional_file_sink.h"

namespace sluice::file {
namespace {

namespace fs = std::filesystem;

const std::string kJob = "0123456789abcdef0123456789abcdef";

class PartWriterRollingTest : public FileTestDir {
 protected:
  // Size 1 MiB, rollover 1 s, inactivity 300 ms; the next checkpoint is *next.
  PartWriterConfig config(int32_t subtask, const int64_t* next) {
    PartWriterConfig c;
    c.dir = dir_.string();
    c.job_id = kJob;
    c.subtask = subtask;
    c.next_checkpoint_id = [next] { return *next; };
    c.rolling = RollingPolicy::defaults();  // keeps files open (the sink's default rolls at every checkpoint)
    c.rolling.part_size_bytes = 1 << 20;
    c.rolling.rollover_interval_ms = 1'000;
    c.rolling.inactivity_interval_ms = 300;
    c.clock = &clock_;
    return c;
  }
  PartWriterConfig restored(int32_t subtask, const int64_t* next, std::vector<InProgressPart> resume,
                            int32_t parallelism = 0) {
    PartWriterConfig c = config(subtask, next);
    c.recover = true;
    c.resume = std::move(resume);
    c.parallelism = parallelism;
    return c;
  }
  // A writer of `subtask` that wrote `line` and took checkpoint *next: its writer state (the writer then closes as
  // a failed run's does).
  std::vector<InProgressPart> persisted(int32_t subtask, const int64_t* next, const std::string& line) {
    TransactionalPartWriter w(config(subtask, next));
    w.append_line(line);
    EXPECT_TRUE(w.prepare_commit().empty());
    return w.snapshot_state();
  }
  // The one file w rolls at this barrier, committed: its content ("<none>" unless exactly one rolled).
  std::string commit_rolled(TransactionalPartWriter& w) {
    std::vector<FileCommittable> rolled = w.prepare_commit();
    if (rolled.size() != 1) return "<" + std::to_string(rolled.size()) + " files>";
    commit_part_files(rolled);
    return read(rolled[0].final_path);
  }
  std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::vector<std::string> hidden_files() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().front() == '.') names.push_back(e.path().filename().string());
    }
    return names;
  }
  ManualClock clock_{1'000'000};
};

TEST_F(PartWriterRollingTest, AFileStaysOpenAcrossCheckpointsUntilItsRolloverInterval) {
  int64_t next = 1;
  TransactionalPartWriter w(config(0, &next));
  for (int i = 0; i < 4; ++i) {  // four checkpoints 200 ms apart, a write 100 ms before each
    clock_.advance_ms(100);
    w.append_line("line-" + std::to_string(i));
    clock_.advance_ms(100);
    EXPECT_TRUE(w.prepare_commit().empty()) << "checkpoint " << next;
    std::vector<InProgressPart> open = w.snapshot_state();
    ASSERT_EQ(open.size(), 1u);
    EXPECT_EQ(open[0].position_bytes, 7u * static_cast<uint64_t>(i + 1));
    EXPECT_EQ(open[0].creation_time_ms, 1'000'100);
    ++next;
  }
  clock_.advance_ms(200);  // open 1000 ms now: the next record goes to a new file
  w.append_line("line-4");
  std::vector<FileCommittable> rolled = w.prepare_commit();
  ASSERT_EQ(rolled.size(), 1u);
  EXPECT_EQ(fs::path(rolled[0].final_path).filename().string(), "part-" + kJob + "-0-1-0");
  commit_part_files(rolled);
  EXPECT_EQ(read(rolled[0].final_path), "line-0\nline-1\nline-2\nline-3\n");
  ASSERT_EQ(w.snapshot_state().size(), 1u);
}

TEST_F(PartWriterRollingTest, AnInactiveFileRollsAtTheNextCheckpoint) {
  int64_t next = 1;
  TransactionalPartWriter w(config(0, &next));
  w.append_line("a");
  clock_.advance_ms(299);
  EXPECT_TRUE(w.prepare_commit().empty());
  EXPECT_EQ(w.snapshot_state().size(), 1u);
  clock_.advance_ms(1);
  std::vector<FileCommittable> rolled = w.prepare_commit();
  ASSERT_EQ(rolled.size(), 1u);
  EXPECT_TRUE(w.snapshot_state().empty());
}

TEST_F(PartWriterRollingTest, TheEndOfInputRollsTheOpenFile) {
  int64_t next = 1;
  TransactionalPartWriter w(config(0, &next));
  w.append_line("a");
  w.flush();
  w.end_input();
  EXPECT_EQ(w.prepare_commit().size(), 1u);
  EXPECT_TRUE(w.snapshot_state().empty());
}

// The restore keeps every byte the checkpoint persisted and nothing the failed run wrote after it.
TEST_F(PartWriterRollingTest, ARestoredFileContinuesExactlyAtThePersistedPosition) {
  int64_t next = 1;
  std::vector<InProgressPart> state;
  {
    TransactionalPartWriter w(config(0, &next));
    w.append_line("kept-1");
    w.append_line("kept-2");
    ASSERT_TRUE(w.prepare_commit().empty());
    state = w.snapshot_state();
    w.append_line("written after the checkpoint, lost with the failed run");
    w.flush();
  }  // the failed run's writer closes; the persisted file stays
  ASSERT_EQ(state.size(), 1u);
  next = 2;
  clock_.advance_ms(500);
  TransactionalPartWriter r(restored(0, &next, state));
  r.append_line("after-restore");  // open 500 ms, written now: same file
  r.end_input();
  EXPECT_EQ(commit_rolled(r), "kept-1\nkept-2\nafter-restore\n");
}

// The creation time travels in the writer state: the rollover interval counts across the restore.
TEST_F(PartWriterRollingTest, TheRolloverIntervalCountsAcrossARestore) {
  int64_t next = 1;
  const std::vector<InProgressPart> state = persisted(0, &next, "a");
  next = 2;
  clock_.advance_ms(1'000);
  TransactionalPartWriter r(restored(0, &next, state));
  r.append_line("b");  // the restored file is 1000 ms old: b starts a new one
  EXPECT_EQ(commit_rolled(r), "a\n");
}

// A second restore from the same checkpoint after the first restored run rolled the file (but failed before the
// checkpoint that would commit it completed) still finds the persisted bytes.
TEST_F(PartWriterRollingTest, ASecondRestoreFromTheSameCheckpointFindsTheFileAgain) {
  int64_t next = 1;
  const std::vector<InProgressPart> state = persisted(0, &next, "persisted");
  next = 2;
  {
    TransactionalPartWriter first(restored(0, &next, state));
    first.append_line("first restore");
    first.end_input();
    ASSERT_EQ(first.prepare_commit().size(), 1u);  // pre-committed in checkpoint 2, which never completes
  }
  TransactionalPartWriter second(restored(0, &next, state));
  second.append_line("second restore");
  second.end_input();
  EXPECT_EQ(commit_rolled(second), "persisted\nsecond restore\n");
}

// After a scale-down (2 -> 1) subtask 0 receives both open files: it writes on its own and closes the other for
// commit with the next checkpoint.
TEST_F(PartWriterRollingTest, AfterAScaleDownOneRestoredFileContinuesAndTheOthersAreCommitted) {
  int64_t next = 1;
  std::vector<InProgressPart> state;
  for (int32_t subtask : {0, 1}) {
    for (auto& p : persisted(subtask, &next, "from-" + std::to_string(subtask))) state.push_back(std::move(p));
  }
  next = 2;
  TransactionalPartWriter r(restored(0, &next, {state[1], state[0]}, /*parallelism=*/1));
  EXPECT_EQ(hidden_files().size(), 2u) << "a restored file was aborted";
  r.append_line("more-0");
  std::vector<FileCommittable> rolled = r.prepare_commit();
  ASSERT_EQ(rolled.size(), 1u);
  EXPECT_EQ(fs::path(rolled[0].final_path).filename().string(), "part-" + kJob + "-1-1-0");
  commit_part_files(rolled);
  EXPECT_EQ(read(rolled[0].final_path), "from-1\n");
  r.end_input();
  rolled = r.prepare_commit();
  ASSERT_EQ(rolled.size(), 1u);
  commit_part_files(rolled);
  EXPECT_EQ(read(rolled[0].final_path), "from-0\nmore-0\n");
}

// An open file of the restored checkpoint handed to another subtask is not a leftover of the subtask whose index it
// carries; files that subtask started after the restored checkpoint are.
TEST_F(PartWriterRollingTest, AnOpenFileOwnedByAnotherSubtaskIsNotAborted) {
  int64_t next = 1;
  const std::vector<InProgressPart> state = persisted(1, &next, "owned by subtask 0 after the restore");
  std::ofstream(dir_ / (".part-" + kJob + "-1-2-7.inprogress")) << "after the restored checkpoint\n";
  next = 2;
  TransactionalPartWriter one(restored(1, &next, {}, 2));
  EXPECT_EQ(hidden_files(), std::vector<std::string>{"." + fs::path(state[0].final_path).filename().string() +
                                                     ".inprogress"});
  TransactionalPartWriter zero(restored(0, &next, state, 2));
  zero.end_input();
  EXPECT_EQ(zero.prepare_commit().size(), 1u);
}

TEST_F(PartWriterRollingTest, CloseAbortsWhatNoCheckpointReferencesAndKeepsWhatOneDoes) {
  int64_t next = 1;
  {
    TransactionalPartWriter w(config(0, &next));
    w.append_line("never in a checkpoint");
    w.flush();
    ASSERT_EQ(hidden_files().size(), 1u);
  }
  EXPECT_TRUE(hidden_files().empty());
  {
    TransactionalPartWriter w(config(0, &next));
    w.append_line("persisted at checkpoint 1");
    ASSERT_TRUE(w.prepare_commit().empty());
    ASSERT_EQ(w.snapshot_state().size(), 1u);
    w.append_line("more");
    clock_.advance_ms(1'000);
    w.append_line("rolled the referenced file; this one is in no checkpoint");
    w.flush();
    ASSERT_EQ(hidden_files().size(), 2u);
  }
  EXPECT_EQ(hidden_files(), std::vector<std::string>{".part-" + kJob + "-0-1-0.pending"});  // the referenced one
}

TEST_F(PartWriterRollingTest, AnInvalidPolicyFailsNamingTheField) {
  int64_t next = 1;
  PartWriterConfig c = config(0, &next);
  c.rolling.rollover_interval_ms = 0;
  try {
    TransactionalPartWriter w(std::move(c));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rollover_interval_ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::file
