// The demo's output folder: the record of its runs reads back what it wrote and refuses damaged lines; a fresh run
// removes only recorded runs' part files (a killed run's included), refuses beside another job's part files with
// nothing removed or written, and a restored run keeps every part file and records its lineage.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "demo_output.h"

namespace sluice::cli {
namespace {

namespace stdfs = std::filesystem;

const std::string kDemoA(32, 'a');
const std::string kDemoB(32, 'b');
const std::string kForeign(32, 'f');
const std::string kNew(32, 'c');

stdfs::path fresh_dir(const std::string& name) {
  stdfs::path p = stdfs::path(::testing::TempDir()) / "demo_output_test" / name;
  stdfs::remove_all(p);
  stdfs::create_directories(p);
  return p;
}

void write(const stdfs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string read(const stdfs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string part(const std::string& job, int subtask) { return "part-" + job + "-" + std::to_string(subtask) + "-1-0"; }

DemoOutputRun run_in(const stdfs::path& dir, OutputStart start) {
  DemoOutputRun run;
  run.output_dir = (dir / "out").string();
  run.checkpoint_dir = (dir / "ck").string();
  run.job_id = kNew;
  run.start = start;
  return run;
}

std::vector<std::string> recorded(const stdfs::path& out) {
  auto ids = parse_demo_runs(read(out / std::string(kDemoRunsFileName)), "record");
  EXPECT_TRUE(ids.is_ok()) << ids.status().to_string();
  return ids.is_ok() ? *ids : std::vector<std::string>{};
}

TEST(DemoOutput, RecordReadsBackAndRefusesDamagedLines) {
  auto ids = parse_demo_runs(format_demo_runs({kDemoA, kDemoB}), "out/.sluice-demo-runs");
  ASSERT_TRUE(ids.is_ok()) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<std::string>{kDemoA, kDemoB}));
  for (const std::string& bad : {std::string("not-an-id"), std::string(32, 'A'), std::string(31, 'a')}) {
    auto r = parse_demo_runs("# comment\n" + kDemoA + "\n" + bad + "\n", "out/.sluice-demo-runs");
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("out/.sluice-demo-runs line 3"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find("'" + bad + "'"), std::string::npos) << r.status().to_string();
  }
}

TEST(DemoOutput, PlanSplitsPartFilesByRecordedJobAndIgnoresOtherFiles) {
  const std::vector<fs::DirEntry> entries = {
      {part(kDemoA, 0), fs::PathKind::kFile},   {part(kForeign, 0), fs::PathKind::kFile},
      {part(kDemoB, 1), fs::PathKind::kFile},   {"part-notes.txt", fs::PathKind::kFile},
      {part(kForeign, 1), fs::PathKind::kDirectory}, {std::string(kDemoRunsFileName), fs::PathKind::kFile}};
  const OutputCleanup plan = plan_output_cleanup(entries, {kDemoA, kDemoB});
  EXPECT_EQ(plan.demo_files, (std::vector<std::string>{part(kDemoA, 0), part(kDemoB, 1)}));
  EXPECT_EQ(plan.foreign_files, (std::vector<std::string>{part(kForeign, 0)}));
}

TEST(DemoOutput, FreshRunBesideAnotherJobsPartFilesIsRefusedTouchingNothing) {
  const stdfs::path dir = fresh_dir("foreign");
  const stdfs::path out = dir / "out";
  stdfs::create_directories(out);
  write(out / part(kForeign, 0), "the user's committed output\n");
  write(out / part(kDemoA, 0), "an earlier demo run's output\n");  // not recorded: foreign as well
  Status s = prepare_demo_output(fs::FileSystemRegistry(), run_in(dir, OutputStart::kFresh));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  for (const std::string& named : {"output folder '" + out.string() + "'", std::string("holds 2 part file(s)"),
                                   std::string("--output"), std::string("remove those files yourself")}) {
    EXPECT_NE(s.message().find(named), std::string::npos) << named << " missing in " << s.to_string();
  }
  EXPECT_NE(s.message().find("of job id " + kDemoA), std::string::npos) << s.to_string();  // the first, by name
  EXPECT_EQ(read(out / part(kForeign, 0)), "the user's committed output\n");
  EXPECT_EQ(read(out / part(kDemoA, 0)), "an earlier demo run's output\n");
  EXPECT_EQ(std::distance(stdfs::directory_iterator(out), stdfs::directory_iterator()), 2);  // no record, no lock
  EXPECT_FALSE(stdfs::exists(dir / "ck"));
}

TEST(DemoOutput, FreshRunRemovesRecordedRunsPartFilesOnlyAndRecordsItself) {
  const stdfs::path dir = fresh_dir("recorded");
  const stdfs::path out = dir / "out";
  stdfs::create_directories(out);
  write(out / std::string(kDemoRunsFileName), format_demo_runs({kDemoA, kDemoB}));
  write(out / part(kDemoA, 0), "a finished run's output\n");
  write(out / part(kDemoB, 3), "a killed run's output (recorded before its job started)\n");
  write(out / "part-notes.txt", "mine\n");
  Status s = prepare_demo_output(fs::FileSystemRegistry(), run_in(dir, OutputStart::kFresh));
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_FALSE(stdfs::exists(out / part(kDemoA, 0)));
  EXPECT_FALSE(stdfs::exists(out / part(kDemoB, 3)));
  EXPECT_EQ(read(out / "part-notes.txt"), "mine\n");
  EXPECT_EQ(recorded(out), (std::vector<std::string>{kDemoA, kDemoB, kNew}));
}

TEST(DemoOutput, RestoredRunKeepsEveryPartFileAndRecordsItsLineage) {
  const stdfs::path dir = fresh_dir("restored");
  const stdfs::path out = dir / "out";
  stdfs::create_directories(out);
  write(out / std::string(kDemoRunsFileName), format_demo_runs({kDemoA}));
  write(out / part(kDemoA, 0), "the restored run's output\n");
  write(out / part(kForeign, 0), "the user's committed output\n");
  DemoOutputRun run = run_in(dir, OutputStart::kRestored);
  run.restored_job_ids = {kDemoB, kDemoA};
  Status s = prepare_demo_output(fs::FileSystemRegistry(), run);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_EQ(read(out / part(kDemoA, 0)), "the restored run's output\n");
  EXPECT_EQ(read(out / part(kForeign, 0)), "the user's committed output\n");
  EXPECT_EQ(recorded(out), (std::vector<std::string>{kDemoA, kDemoB, kNew}));
}

TEST(DemoOutput, DamagedRecordIsRefusedNamingItBeforeAnythingIsRemoved) {
  const stdfs::path dir = fresh_dir("damaged");
  const stdfs::path out = dir / "out";
  stdfs::create_directories(out);
  write(out / std::string(kDemoRunsFileName), kDemoA + "\ngarbage\n");
  write(out / part(kDemoA, 0), "an earlier demo run's output\n");
  Status s = prepare_demo_output(fs::FileSystemRegistry(), run_in(dir, OutputStart::kFresh));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find(std::string(kDemoRunsFileName) + " line 2"), std::string::npos) << s.to_string();
  EXPECT_TRUE(stdfs::exists(out / part(kDemoA, 0)));
}

}  // namespace
}  // namespace sluice::cli
