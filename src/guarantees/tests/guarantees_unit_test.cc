// The pure parts of the guarantee experiment: the expected table, the classification of outcomes, the comparison
// with the failure-free results, the record log's two ways of reading, the result-line parser.
#include <gtest/gtest.h>

#include "guarantees/cell_runner.h"
#include "guarantees/embedded_target.h"
#include "guarantees/guarantee_table.h"
#include "guarantees/record_log.h"

namespace sluice::guarantees {
namespace {

TEST(SeedTable, MatchesSeed004) {
  for (SinkKind k : kSinkKinds) EXPECT_EQ(expected_guarantee(SourceKind::kNotReplayable, k), Guarantee::kAtMostOnce);
  EXPECT_EQ(expected_guarantee(SourceKind::kReplayable, SinkKind::kPlain), Guarantee::kAtLeastOnce);
  EXPECT_EQ(expected_guarantee(SourceKind::kReplayable, SinkKind::kIdempotent), Guarantee::kExactlyOnce);
  EXPECT_EQ(expected_guarantee(SourceKind::kReplayable, SinkKind::kWriteAheadLog), Guarantee::kAtLeastOnce);
  EXPECT_EQ(expected_guarantee(SourceKind::kReplayable, SinkKind::kTwoPhaseCommit), Guarantee::kExactlyOnce);
}

TEST(MeasuredGuarantee, LossBeatsDuplicates) {
  EXPECT_EQ(measured_guarantee({1, 1, 10, 0, 0}), Guarantee::kExactlyOnce);
  EXPECT_EQ(measured_guarantee({1, 1, 10, 0, 3}), Guarantee::kAtLeastOnce);
  EXPECT_EQ(measured_guarantee({1, 1, 10, 2, 0}), Guarantee::kAtMostOnce);
  EXPECT_EQ(measured_guarantee({1, 1, 10, 2, 3}), Guarantee::kAtMostOnce);
}

TEST(FormatTable, MarksEachDifferingCellAndErrors) {
  std::vector<Cell> cells;
  cells.push_back({SourceKind::kReplayable, SinkKind::kPlain, "t", "s", {1, 1, 10, 0, 2}, ""});          // as expected
  cells.push_back({SourceKind::kReplayable, SinkKind::kTwoPhaseCommit, "t", "s", {1, 1, 10, 0, 1}, ""});  // differs
  cells.push_back({SourceKind::kNotReplayable, SinkKind::kPlain, "t", "s", {}, "boom"});                  // error
  int mismatches = -1;
  const std::string text = format_table(cells, &mismatches);
  EXPECT_EQ(mismatches, 2);
  EXPECT_NE(text.find("MISMATCH t, replayable source, two-phase commit sink: measured at-least-once, expected "
                      "exactly-once"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("MISMATCH t, not replayable source, plain sink: did not run: boom"), std::string::npos);
  EXPECT_EQ(text.find("MISMATCH t, replayable source, plain sink"), std::string::npos);
}

TEST(CompareWithFailureFree, AppendedResults) {
  // records 0..5, 2 keys: key 0 -> counts 1,2,3; key 1 -> 1,2,3.
  TargetContents got;
  got.rows = {{0, 1}, {0, 2}, {0, 2}, {1, 1}, {1, 2}, {1, 3}, {7, 1}};  // (0,3) lost, (0,2) twice, (7,1) unknown
  const RunResult r = compare_with_failure_free(got, 6, 2);
  EXPECT_EQ(r.expected, 6);
  EXPECT_EQ(r.lost, 1);
  EXPECT_EQ(r.duplicated, 2);
}

TEST(CompareWithFailureFree, UpsertedResults) {
  TargetContents got;
  got.upserted = true;
  got.rows = {{0, 2}, {1, 4}};  // key 0 counted 2 of 3, key 1 counted 4 of 3
  const RunResult r = compare_with_failure_free(got, 6, 2);
  EXPECT_EQ(r.lost, 1);
  EXPECT_EQ(r.duplicated, 1);
  got.rows = {{0, 3}, {1, 3}};
  const RunResult exact = compare_with_failure_free(got, 6, 2);
  EXPECT_EQ(exact.lost + exact.duplicated, 0);
}

TEST(RecordLog, OffsetsReplayTakesDoNot) {
  RecordLog log;
  log.append({10, 11, 12});
  EXPECT_EQ(log.read_at(1, 5), (std::vector<int64_t>{11, 12}));
  EXPECT_EQ(log.read_at(0, 1), (std::vector<int64_t>{10}));  // going back is allowed
  EXPECT_EQ(log.delivered(), 3);
  RecordLog queue;
  queue.append({1, 2, 3});
  EXPECT_EQ(queue.take(2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(queue.take(5), (std::vector<int64_t>{3}));  // 1 and 2 are never handed out again
  EXPECT_TRUE(queue.take(5).empty());
  queue.close();
  EXPECT_TRUE(queue.closed());
  EXPECT_THROW(queue.append({4}), std::logic_error);
}

TEST(ResultLines, ParseStrictly) {
  EXPECT_EQ(parse_key_count("3,14"), (KeyCount{3, 14}));
  EXPECT_FALSE(parse_key_count("3,").has_value());
  EXPECT_FALSE(parse_key_count(",3").has_value());
  EXPECT_FALSE(parse_key_count("3;4").has_value());
  EXPECT_FALSE(parse_key_count("3,4x").has_value());
}

}  // namespace
}  // namespace sluice::guarantees
