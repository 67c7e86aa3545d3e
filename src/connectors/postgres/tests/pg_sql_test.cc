// The pure parts of the PostgreSQL sinks, without a server: SQL text, quoting, gids, the roll-back rule, backoff.
#include <gtest/gtest.h>

#include "sluice/connectors/postgres/postgres_options.h"

namespace sluice::postgres {
namespace {

PostgresTableOptions counts_table(WriteMode mode = WriteMode::kUpsert) {
  PostgresTableOptions t;
  t.table = "public.counts";
  t.columns = {"id", "n", "note"};
  t.key_columns = {"id"};
  t.mode = mode;
  return t;
}

TEST(PostgresSql, QuotesLiteralsWhateverStandardConformingStringsSays) {
  EXPECT_EQ(quote_literal("abc"), "E'abc'");
  EXPECT_EQ(quote_literal("it's"), "E'it''s'");
  EXPECT_EQ(quote_literal("a\\b"), "E'a\\\\b'");
  EXPECT_EQ(quote_literal(""), "E''");
  EXPECT_THROW(quote_literal(std::string("a\0b", 3)), std::invalid_argument);
}

TEST(PostgresSql, QuotesIdentifiersAndSchemaQualifiedNames) {
  EXPECT_EQ(quote_identifier("Col"), "\"Col\"");
  EXPECT_EQ(quote_identifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(quote_qualified_name("s.t"), "\"s\".\"t\"");
  EXPECT_EQ(quote_qualified_name("t"), "\"t\"");
}

TEST(PostgresSql, UpsertStatementUpdatesTheNonKeyColumns) {
  std::vector<Row> rows = {{"1", "10", std::nullopt}, {"2", "20", "x'y"}};
  EXPECT_EQ(build_write_statement(counts_table(), rows),
            "INSERT INTO \"public\".\"counts\" (\"id\", \"n\", \"note\") VALUES (E'1',E'10',NULL),(E'2',E'20',E'x''y')"
            " ON CONFLICT (\"id\") DO UPDATE SET \"n\" = EXCLUDED.\"n\", \"note\" = EXCLUDED.\"note\"");
  EXPECT_EQ(build_write_statement(counts_table(WriteMode::kInsert), {{"1", "2", "3"}}),
            "INSERT INTO \"public\".\"counts\" (\"id\", \"n\", \"note\") VALUES (E'1',E'2',E'3')");
  auto only_keys = counts_table();
  only_keys.key_columns = {"id", "n", "note"};
  EXPECT_NE(build_write_statement(only_keys, {{"1", "2", "3"}}).find("ON CONFLICT (\"id\", \"n\", \"note\") DO NOTHING"),
            std::string::npos);
}

TEST(PostgresSql, RowsWithTheWrongNumberOfValuesAreRejected) {
  EXPECT_THROW(build_write_statement(counts_table(), {{"1", "2"}}), std::invalid_argument);
}

TEST(PostgresSql, AnUpsertBatchKeepsTheLastRowOfEachKey) {
  std::vector<Row> rows = {{"1", "1", "a"}, {"2", "1", "b"}, {"1", "2", "c"}, {std::nullopt, "9", "d"}, {"2", "2", "e"}};
  std::vector<Row> want = {{"1", "2", "c"}, {std::nullopt, "9", "d"}, {"2", "2", "e"}};
  EXPECT_EQ(last_row_per_key(counts_table(), rows), want);
  EXPECT_EQ(last_row_per_key(counts_table(WriteMode::kInsert), rows), rows);
  // Keys compare value by value: ("1","23") and ("12","3") differ.
  auto two_keys = counts_table();
  two_keys.key_columns = {"id", "n"};
  std::vector<Row> distinct = {{"1", "23", "a"}, {"12", "3", "b"}};
  EXPECT_EQ(last_row_per_key(two_keys, distinct), distinct);
}

TEST(PostgresSql, OptionsAreValidatedNamingTheField) {
  auto t = counts_table();
  t.key_columns = {"missing"};
  try {
    validate(t, "PostgresUpsertSink");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("key column 'missing'"), std::string::npos) << e.what();
  }
  t = counts_table();
  t.key_columns.clear();
  EXPECT_THROW(validate(t, "x"), std::invalid_argument);
  t.mode = WriteMode::kInsert;
  EXPECT_NO_THROW(validate(t, "x"));
  PostgresConnectionOptions c;
  EXPECT_THROW(validate(c, "x"), std::invalid_argument);
  c.conninfo = "host=127.0.0.1";
  c.retry.max_attempts = 0;
  EXPECT_THROW(validate(c, "x"), std::invalid_argument);
}

TEST(PostgresSql, BackoffDoublesUpToTheCap) {
  RetryOptions r;
  r.initial_backoff_ms = 50;
  r.max_backoff_ms = 300;
  EXPECT_EQ(backoff_ms(r, 0), 50);
  EXPECT_EQ(backoff_ms(r, 1), 100);
  EXPECT_EQ(backoff_ms(r, 2), 200);
  EXPECT_EQ(backoff_ms(r, 3), 300);
  EXPECT_EQ(backoff_ms(r, 40), 300);
}

TEST(PostgresSql, TransactionIdsComeFromAStablePrefix) {
  EXPECT_EQ(transaction_prefix("", "job", "sink"), "job/sink");
  EXPECT_EQ(transaction_prefix("mine", "job", ""), "mine");
  EXPECT_THROW(transaction_prefix("", "job", ""), std::invalid_argument);
  const std::string longp = transaction_prefix("", std::string(200, 'j'), "sink");
  EXPECT_LE(longp.size(), 120u);
  EXPECT_EQ(longp, transaction_prefix("", std::string(200, 'j'), "sink"));  // deterministic
  EXPECT_NE(longp, transaction_prefix("", std::string(200, 'j'), "sink2"));

  EXPECT_EQ(transaction_gid("job/sink", 3, 17), "job/sink:3:17");
  auto p = parse_gid("job/sink:3:17", "job/sink");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->subtask, 3);
  EXPECT_EQ(p->checkpoint, 17);
  EXPECT_FALSE(parse_gid("job/sink2:3:17", "job/sink"));
  EXPECT_FALSE(parse_gid("job/sink:3", "job/sink"));
  EXPECT_FALSE(parse_gid("job/sink:x:1", "job/sink"));
  EXPECT_FALSE(parse_gid("job/sink:1:2:3", "job/sink"));
}

TEST(PostgresSql, RollBackRuleTakesOnlyOwnLingeringTransactions) {
  const std::vector<std::string> prepared = {"p:0:3", "p:0:5", "p:0:6", "p:1:6", "p:3:7", "q:0:9", "p:0:4"};
  // Fresh start, subtask 1 of 2: every prepared transaction of its index.
  EXPECT_EQ(transactions_to_roll_back(prepared, "p", 1, 2, false, 0, {}), (std::vector<std::string>{"p:1:6"}));
  // Fresh start, subtask 0 of 2: its own and those of vanished indexes (3 >= 2), never another prefix.
  EXPECT_EQ(transactions_to_roll_back(prepared, "p", 0, 2, false, 0, {}),
            (std::vector<std::string>{"p:0:3", "p:0:5", "p:0:6", "p:3:7", "p:0:4"}));
  // Restored from checkpoint 4 (next id 5): only those pre-committed after it, and not those the state keeps.
  EXPECT_EQ(transactions_to_roll_back(prepared, "p", 0, 4, true, 5, {"p:0:5"}), (std::vector<std::string>{"p:0:6"}));
  EXPECT_EQ(transactions_to_roll_back(prepared, "p", 0, 2, true, 5, {}),
            (std::vector<std::string>{"p:0:5", "p:0:6", "p:3:7"}));
}

}  // namespace
}  // namespace sluice::postgres
