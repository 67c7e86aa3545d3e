#include "sluice/core/status.h"

#include <gtest/gtest.h>

#include "sluice/core/ids.h"

namespace sluice {
namespace {

Result<int> half(int x) {
  if (x % 2) return Status::invalid_argument("half: expected an even number, got " + std::to_string(x));
  return x / 2;
}

Result<int> quarter(int x) {
  SLUICE_ASSIGN_OR_RETURN(int h, half(x));
  SLUICE_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST(Status, ResultPropagates) {
  EXPECT_EQ(quarter(8).value(), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().to_string(), "InvalidArgument: half: expected an even number, got 3");
}

TEST(Status, ContextKeepsCodeAndRetriability) {
  Status s = Status::io_error("disk full").with_context("writing chk-3/_metadata");
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_TRUE(s.retriable());
  EXPECT_EQ(s.message(), "writing chk-3/_metadata: disk full");
}

TEST(JobId, HexRoundTrip) {
  JobId id = JobId::generate();
  std::string hex = id.to_hex();
  ASSERT_EQ(hex.size(), 32u);
  for (char c : hex) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  JobId back;
  ASSERT_TRUE(JobId::parse(hex, &back));
  EXPECT_EQ(back, id);
  EXPECT_FALSE(JobId::parse("xyz", &back));
  EXPECT_FALSE(JobId::parse(std::string(32, 'G'), &back));
  EXPECT_NE(JobId::generate(), JobId::generate());
}

}  // namespace
}  // namespace sluice
