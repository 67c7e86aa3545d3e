// TransactionalPartWriter restored into a folder another job also wrote to: it aborts the unpublished files of its
// snapshot's lineage (a killed run's leftovers) and never those of a job it does not descend from, whatever their
// subtask index and checkpoint say.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "file_test_dir.h"
#include "sluice/connectors/file/transactional_file_sink.h"

namespace sluice::file {
namespace {

namespace fs = std::filesystem;

const std::string kOtherJob = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";     // another job writing the same folder
const std::string kRestoredRun = "cccccccccccccccccccccccccccccccc";  // the run whose checkpoint is restored
const std::string kThisRun = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

class PartWriterLineageTest : public FileTestDir {
 protected:
  PartWriterConfig config(const std::string& job, const int64_t* next) {
    PartWriterConfig c;
    c.dir = dir_.string();
    c.job_id = job;
    c.subtask = 0;
    c.next_checkpoint_id = [next] { return *next; };
    c.rolling = RollingPolicy::defaults();  // the open file is persisted at a barrier, not rolled
    return c;
  }
  // A run of `job` that opened a part file at checkpoint *next, persisted it at that barrier and then died
  // (the writer's close leaves what a checkpoint references).
  void leave_persisted_file(const std::string& job, const int64_t* next) {
    TransactionalPartWriter w(config(job, next));
    w.append_line("from " + job);
    EXPECT_TRUE(w.prepare_commit().empty());
    EXPECT_EQ(w.snapshot_state().size(), 1u);
  }
  bool has_unpublished_file_of(const std::string& job) {
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.front() == '.' && name.find(job) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(PartWriterLineageTest, ARestoreAbortsOnlyItsLineagesLeftoversNeverAnotherJobs) {
  int64_t next = 3;  // both runs opened their file after checkpoint 2
  leave_persisted_file(kOtherJob, &next);
  leave_persisted_file(kRestoredRun, &next);
  ASSERT_TRUE(has_unpublished_file_of(kOtherJob));
  ASSERT_TRUE(has_unpublished_file_of(kRestoredRun));

  // This run restores the restored run's checkpoint 2: files from checkpoint 3 on are leftovers - of its lineage.
  PartWriterConfig c = config(kThisRun, &next);
  c.recover = true;
  c.lineage_job_ids = {kRestoredRun};
  c.parallelism = 1;
  TransactionalPartWriter restored(std::move(c));
  EXPECT_FALSE(has_unpublished_file_of(kRestoredRun)) << "the restored run's leftover was not aborted";
  EXPECT_TRUE(has_unpublished_file_of(kOtherJob)) << "another job's in-progress file was aborted";
}

TEST_F(PartWriterLineageTest, WithoutALineageOnlyThisRunsOwnFilesAreLeftovers) {
  int64_t next = 3;
  leave_persisted_file(kOtherJob, &next);
  leave_persisted_file(kThisRun, &next);
  PartWriterConfig c = config(kThisRun, &next);
  c.recover = true;  // a failover inside this run: its own checkpoint, no lineage before it
  TransactionalPartWriter restored(std::move(c));
  EXPECT_FALSE(has_unpublished_file_of(kThisRun));
  EXPECT_TRUE(has_unpublished_file_of(kOtherJob));
}

}  // namespace
}  // namespace sluice::file
