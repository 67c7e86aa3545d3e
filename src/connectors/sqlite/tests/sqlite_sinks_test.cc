// The SQLite sinks' writer without a job: upserts keep the last value per key, inserts append, a batch is one
// transaction (a bad row leaves nothing), markers are recognised, bad options are named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sluice/connectors/sqlite/sqlite_sinks.h"

namespace sluice::sqlite {
namespace {

std::string fresh_db(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "sqlite-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".db";
  std::filesystem::remove(path);
  return path;
}

TEST(SqliteTableWriter, UpsertKeepsTheLastValuePerKey) {
  const std::string db = fresh_db("upsert");
  ASSERT_TRUE(sqlite_execute(db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)").is_ok());
  SqliteTableWriter w({db, "t", {"k", "v"}, {"k"}});
  w.write({{"1", "10"}, {"2", "20"}});
  w.write({{"1", "11"}});
  w.write({{"1", "11"}});  // a replay writes the same again: no change
  auto rows = sqlite_query(db, "SELECT k, v FROM t ORDER BY k");
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  EXPECT_EQ(*rows, (std::vector<SqliteRow>{{"1", "11"}, {"2", "20"}}));
}

TEST(SqliteTableWriter, InsertAppendsAndABatchIsOneTransaction) {
  const std::string db = fresh_db("insert");
  ASSERT_TRUE(sqlite_execute(db, "CREATE TABLE t (k INTEGER NOT NULL, v INTEGER NOT NULL)").is_ok());
  SqliteTableOptions o{db, "t", {"k", "v"}, {}, SqliteWriteMode::kInsert};
  SqliteTableWriter w(o, "markers");
  w.write({{"1", "10"}, {"1", "10"}});
  EXPECT_THROW(w.write({{"2", "20"}, {"3"}}), std::invalid_argument);  // second row short: the batch rolls back
  auto rows = sqlite_query(db, "SELECT count(*) FROM t");
  ASSERT_TRUE(rows.is_ok());
  EXPECT_EQ((*rows)[0][0], "2");
  EXPECT_FALSE(w.has_marker("job:sink:0:1"));
  w.write_marker("job:sink:0:1");
  w.write_marker("job:sink:0:1");  // idempotent
  EXPECT_TRUE(w.has_marker("job:sink:0:1"));
  EXPECT_FALSE(w.has_marker("job:sink:1:1"));
}

TEST(SqliteOptions, BadOptionsAreNamed) {
  try {
    validate({"x.db", "t", {"k"}, {}, SqliteWriteMode::kUpsert}, "SqliteUpsertSink");
    FAIL() << "no key columns accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SqliteUpsertSink: key_columns"), std::string::npos);
  }
  EXPECT_THROW(validate({"", "t", {"k"}, {"k"}}, "s"), std::invalid_argument);
  auto bad = sqlite_query(fresh_db("bad"), "SELECT * FROM missing");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().to_string().find("missing"), std::string::npos);
}

}  // namespace
}  // namespace sluice::sqlite
