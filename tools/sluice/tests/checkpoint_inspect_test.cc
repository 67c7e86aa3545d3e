// `sluice checkpoint inspect` on hand-made checkpoint folders: statistics that disagree with _metadata, are
// damaged or are not a file fail loudly (exit 1, naming the file); a directory of incomplete checkpoints only is
// "no complete checkpoint" (exit 2); the table's columns fit their widest value, subtasks in index order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/metadata_codec.h"
#include "checkpoint_inspect.h"
#include "coordinator/checkpoint_stats_json.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / "checkpoint_inspect_test" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// A completed checkpoint `id` of job `dir` (its chk-<id> folder with a valid _metadata).
fs::path write_checkpoint(const fs::path& job_dir, int64_t id) {
  checkpoint::CheckpointMetadata md;
  md.checkpoint_id = CheckpointId(id);
  md.trigger_timestamp_ms = 1000;
  auto bytes = checkpoint::encode_metadata(md);
  EXPECT_TRUE(bytes.is_ok());
  fs::path chk = job_dir / ("chk-" + std::to_string(id));
  fs::create_directories(chk);
  std::ofstream(chk / "_metadata", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  return chk;
}

coordinator::CheckpointStatsEntry stats_of(int64_t id) {
  coordinator::CheckpointStatsEntry e;
  e.id = CheckpointId(id);
  e.status = coordinator::CheckpointStatus::kCompleted;
  e.trigger_timestamp_ms = 1000;
  e.end_to_end_duration_ms = 12;
  e.num_acknowledged = e.num_tasks = 3;
  // Acknowledgement order, not index order.
  for (auto [vertex, subtask] : {std::pair{1, 1}, std::pair{0, 0}, std::pair{1, 0}}) {
    coordinator::SubtaskStatsEntry s;
    s.vertex = vertex;
    s.subtask = subtask;
    s.ack_duration_ms = 10 + vertex * 2 + subtask;
    e.subtasks.push_back(s);
  }
  return e;
}

void write_stats(const fs::path& chk, const coordinator::CheckpointStatsEntry& e) {
  write(chk / coordinator::kCheckpointStatsFileName, coordinator::to_json(e).dump());
}

TEST(CheckpointInspect, StatisticsOfAnotherCheckpointIdAreAnError) {
  const fs::path job = fresh_dir("mismatch") / "0123456789abcdef0123456789abcdef";
  write_stats(write_checkpoint(job, 4), stats_of(3));
  auto r = inspect_checkpoints(job.string());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->exit_code, 1);
  ASSERT_EQ(r->document["problems"].size(), 1u);
  const std::string p = r->document["problems"][0].get<std::string>();
  EXPECT_NE(p.find("_checkpoint_stats.json"), std::string::npos) << p;
  EXPECT_NE(p.find("of checkpoint 3, the _metadata next to them of checkpoint 4"), std::string::npos) << p;
  EXPECT_TRUE(r->document["checkpoints"][0]["stats"].is_null());
  EXPECT_NE(r->table.find("problem: "), std::string::npos) << r->table;
}

TEST(CheckpointInspect, CorruptStatisticsFailNamingTheFile) {
  const fs::path job = fresh_dir("corrupt") / "0123456789abcdef0123456789abcdef";
  const fs::path chk = write_checkpoint(job, 2);
  for (const std::string& text : {std::string("{\"id\": 2, "), std::string("{\"id\": 2}")}) {
    write(chk / coordinator::kCheckpointStatsFileName, text);
    auto r = inspect_checkpoints(chk.string());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->exit_code, 1) << text;
    ASSERT_EQ(r->document["problems"].size(), 1u) << text;
    EXPECT_NE(r->document["problems"][0].get<std::string>().find((chk / "_checkpoint_stats.json").string()),
              std::string::npos)
        << r->document["problems"][0];
  }
}

TEST(CheckpointInspect, StatisticsThatAreADirectoryAreAnError) {
  const fs::path job = fresh_dir("directory") / "0123456789abcdef0123456789abcdef";
  const fs::path chk = write_checkpoint(job, 5);
  fs::create_directories(chk / coordinator::kCheckpointStatsFileName);
  auto r = inspect_checkpoints(chk.string());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->exit_code, 1);
  ASSERT_EQ(r->document["problems"].size(), 1u);
  EXPECT_NE(r->document["problems"][0].get<std::string>().find("not a regular file"), std::string::npos)
      << r->document["problems"][0];
}

// Found by the fresh-clone review: a channel-state file of chk-12 was inspected as checkpoint 12 with exit 0.
TEST(CheckpointInspect, AFileOtherThanMetadataIsRefused) {
  const fs::path job = fresh_dir("notmetadata") / "0123456789abcdef0123456789abcdef";
  const fs::path chk = write_checkpoint(job, 12);
  write(chk / "auto-0-bids-channel-00ff", "channel state bytes");
  auto r = inspect_checkpoints((chk / "auto-0-bids-channel-00ff").string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("is a file but not a _metadata file"), std::string::npos)
      << r.status().to_string();
  auto direct = inspect_checkpoints((chk / "_metadata").string());  // the _metadata itself still works
  ASSERT_TRUE(direct.is_ok()) << direct.status().to_string();
  EXPECT_EQ(direct->exit_code, 0);
}

TEST(CheckpointInspect, OnlyIncompleteCheckpointsIsNoCheckpoint) {
  const fs::path dir = fresh_dir("incomplete");
  fs::create_directories(dir / "0123456789abcdef0123456789abcdef" / "chk-3");
  fs::create_directories(dir / "0123456789abcdef0123456789abcdef" / "chk-4");
  auto r = inspect_checkpoints(dir.string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);  // the command exits 2
  EXPECT_NE(r.status().message().find("no complete checkpoint"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("2 incomplete"), std::string::npos) << r.status().message();
  // One complete checkpoint beside them is enough.
  write_checkpoint(dir / "0123456789abcdef0123456789abcdef", 2);
  auto ok = inspect_checkpoints(dir.string());
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok->exit_code, 0);
}

// The lines of `text` from the one starting with `first` to the next empty line.
std::vector<std::string> block(const std::string& text, const std::string& first) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  bool on = false;
  while (std::getline(in, line)) {
    if (!on && line.rfind(first, 0) == 0) on = true;
    if (on && line.empty()) break;
    if (on) out.push_back(line);
  }
  return out;
}

TEST(CheckpointInspect, ColumnsFitTheWidestValueAndSubtasksAreInIndexOrder) {
  // A job folder name longer than the old fixed 34-character column.
  const fs::path job = fresh_dir("widths") / "0123456789abcdef0123456789abcdef-with-a-long-suffix";
  const fs::path chk = write_checkpoint(job, 123456789012);
  auto e = stats_of(123456789012);
  e.end_to_end_duration_ms = 12345678901;  // wider than the old 7-digit column
  write_stats(chk, e);
  auto r = inspect_checkpoints(chk.string());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->exit_code, 0) << r->table;
  const auto main = block(r->table, "job / checkpoint");
  ASSERT_EQ(main.size(), 2u) << r->table;
  // Every column boundary of the header lines up with the row: the "duration" header ends where the value does.
  const size_t header_end = main[0].find("duration") + std::string("duration").size();
  const size_t value_end = main[1].find("12345678901ms") + std::string("12345678901ms").size();
  EXPECT_EQ(header_end, value_end) << r->table;
  EXPECT_EQ(main[0].find(" id ") + 3, main[1].find(" 123456789012 ") + 13) << r->table;
  EXPECT_EQ(main[0].find("status"), main[1].find("completed")) << r->table;

  const auto per = block(r->table, "vertex");
  ASSERT_EQ(per.size(), 4u) << r->table;
  auto first_two = [](const std::string& line) {
    std::istringstream in(line);
    int v = -1, s = -1;
    in >> v >> s;
    return std::pair(v, s);
  };
  EXPECT_EQ(first_two(per[1]), std::pair(0, 0)) << r->table;
  EXPECT_EQ(first_two(per[2]), std::pair(1, 0)) << r->table;
  EXPECT_EQ(first_two(per[3]), std::pair(1, 1)) << r->table;
  for (const auto& line : per) EXPECT_EQ(line.size(), per[0].size()) << r->table;
}

}  // namespace
}  // namespace sluice::cli
