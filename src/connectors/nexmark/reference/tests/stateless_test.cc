// q0, q1, q2 on hand-built events, and the multiset comparison and digest.
#include <gtest/gtest.h>

#include "builders.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {
namespace {

using testing::auction;
using testing::bid;
using testing::person;

TEST(NexmarkReferenceStateless, Q0PassesEveryBidWithAllFields) {
  const std::vector<Event> events = {bid(1001, 7, 500, 20, "u2", "e2"), person(1000, "OR", 5),
                                     auction(1000, 1000, 10, 6), bid(1000, 8, 300, 10, "u1", "e1")};
  const std::vector<Q0Row> expected = {{1000, 8, 300, "c", "u1", 10, "e1"}, {1001, 7, 500, "c", "u2", 20, "e2"}};
  EXPECT_EQ(reference_q0(events), expected);
}

TEST(NexmarkReferenceStateless, Q1ConvertsExactlyInThousandths) {
  const std::vector<Event> events = {bid(1000, 8, 100, 10), bid(1001, 9, 99'999'999, 11)};
  const std::vector<Q1Row> expected = {{1000, 8, 90'800, 10, "x"}, {1001, 9, 90'799'999'092, 11, "x"}};
  EXPECT_EQ(reference_q1(events), expected);
}

TEST(NexmarkReferenceStateless, Q2KeepsMultiplesOf123) {
  const std::vector<Event> events = {bid(1230, 1, 5, 0), bid(1231, 1, 6, 0), bid(1353, 2, 7, 0),
                                     bid(1230, 3, 4, 9), auction(1230, 1, 10, 0)};
  const std::vector<Q2Row> expected = {{1230, 4}, {1230, 5}, {1353, 7}};
  EXPECT_EQ(reference_q2(events), expected);
}

TEST(NexmarkReferenceCompare, EqualMultisetsInAnyOrderAreOk) {
  const std::vector<Q2Row> expected = {{1, 2}, {3, 4}, {3, 4}};
  EXPECT_TRUE(compare_multiset("q2", expected, {{3, 4}, {1, 2}, {3, 4}}).is_ok());
}

TEST(NexmarkReferenceCompare, NamesTheFirstMissingRow) {
  const Status s = compare_multiset<Q2Row>("q2", {{1, 2}, {3, 4}, {3, 4}}, {{3, 4}, {1, 2}});
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("q2: engine output differs from the reference (3 expected rows, 2 actual)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("missing (auction, price) = (3, 4) (expected 2 times, got 1)"), std::string::npos)
      << s.message();
}

TEST(NexmarkReferenceCompare, NamesTheFirstUnexpectedRowInCanonicalOrder) {
  const Status s = compare_multiset<Q3Row>("q3", {{"b", "c", "OR", 5}}, {{"b", "c", "OR", 5}, {"a", "c", "ID", 9}});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("unexpected (name, city, state, auction_id) = (\"a\", \"c\", \"ID\", 9) "
                             "(expected 0 times, got 1)"),
            std::string::npos)
      << s.message();
}

TEST(NexmarkReferenceCompare, LongStringsAreCutInMessages) {
  Q0Row row{1, 2, 3, "c", std::string(100, 'u'), 4, "e"};
  const std::string text = describe_row(row);
  EXPECT_NE(text.find("\"" + std::string(40, 'u') + "\"... (100 bytes)"), std::string::npos) << text;
}

TEST(NexmarkReferenceCompare, DigestIsOrderIndependentAndSensitiveToContent) {
  const std::vector<Event> events = {bid(1000, 8, 300, 10), bid(1001, 7, 500, 20), bid(1001, 7, 500, 20)};
  const std::vector<Q0Row> rows = reference_q0(events);
  EXPECT_EQ(reference_digest_q0(events), digest_of(rows));
  EXPECT_EQ(reference_digest_q0(events), digest_of(std::vector<Q0Row>{rows[2], rows[0], rows[1]}));
  EXPECT_TRUE(compare_digests("q0", digest_of(rows), digest_of(std::vector<Q0Row>{rows[2], rows[0], rows[1]})).is_ok());
  std::vector<Q0Row> changed = rows;
  changed[1].extra = "y";
  EXPECT_FALSE(digest_of(changed) == digest_of(rows));
  EXPECT_FALSE(compare_digests("q0", digest_of(rows), digest_of(changed)).is_ok());
  std::vector<Q0Row> fewer(rows.begin(), rows.begin() + 2);
  const Status s = compare_digests("q0", digest_of(rows), digest_of(fewer));
  EXPECT_NE(s.message().find("row counts differ"), std::string::npos) << s.message();
  EXPECT_EQ(reference_digest_q1(events), digest_of(reference_q1(events)));
  EXPECT_EQ(reference_digest_q2(events), digest_of(reference_q2(events)));
}

}  // namespace
}  // namespace sluice::nexmark::reference
