#include "fs/entropy_injection.h"

#include <gtest/gtest.h>

namespace sluice::fs {
namespace {

TEST(EntropyInjectionTest, RemovesAWholeSegmentWithOneSeparator) {
  EXPECT_EQ(remove_entropy_key("s3://b/_entropy_/ck", "_entropy_"), "s3://b/ck");
  EXPECT_EQ(remove_entropy_key("s3://b/ck/_entropy_", "_entropy_"), "s3://b/ck");
  EXPECT_EQ(remove_entropy_key("s3://b/_entropy_/ck/job/chk-1", "_entropy_"), "s3://b/ck/job/chk-1");
  EXPECT_EQ(remove_entropy_key("/local/_entropy_/ck", "_entropy_"), "/local/ck");
}

TEST(EntropyInjectionTest, RemovesPartOfASegment) {
  EXPECT_EQ(remove_entropy_key("s3://b/ck_e_x/y", "_e_"), "s3://b/ckx/y");
  EXPECT_EQ(remove_entropy_key("s3://b/ck_e_/y", "_e_"), "s3://b/ck/y");
}

TEST(EntropyInjectionTest, OnlyTheFirstOccurrence) {
  EXPECT_EQ(remove_entropy_key("s3://b/_e_/x/_e_", "_e_"), "s3://b/x/_e_");
  EXPECT_EQ(inject_entropy("s3://b/_e_/x/_e_", "_e_", "ab12"), "s3://b/ab12/x/_e_");
}

TEST(EntropyInjectionTest, InjectReplacesTheMarker) {
  EXPECT_EQ(inject_entropy("s3://b/_entropy_/ck/job/chk-3/f", "_entropy_", "x7k2"), "s3://b/x7k2/ck/job/chk-3/f");
  EXPECT_EQ(inject_entropy("s3://b/pre_entropy_/ck", "_entropy_", "x7k2"), "s3://b/prex7k2/ck");
}

TEST(EntropyInjectionTest, NoMarkerNoChange) {
  EXPECT_FALSE(has_entropy_key("s3://b/ck", "_entropy_"));
  EXPECT_FALSE(has_entropy_key("s3://b/ck", ""));
  EXPECT_EQ(remove_entropy_key("s3://b/ck", "_entropy_"), "s3://b/ck");
  EXPECT_EQ(inject_entropy("s3://b/ck", "_entropy_", "abcd"), "s3://b/ck");
  EXPECT_EQ(remove_entropy_key("s3://b/ck", ""), "s3://b/ck");
}

TEST(EntropyInjectionTest, ValidateNamesTheKey) {
  EntropyInjection ok{"_entropy_", 4};
  EXPECT_TRUE(ok.validate("s3.entropy.key", "s3.entropy.length").is_ok());
  Status s = EntropyInjection{"_a/b_", 4}.validate("s3.entropy.key", "s3.entropy.length");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("s3.entropy.key"), std::string::npos) << s.message();
  s = EntropyInjection{"", 4}.validate("s3.entropy.key", "s3.entropy.length");
  EXPECT_NE(s.message().find("s3.entropy.key"), std::string::npos) << s.message();
  s = EntropyInjection{"_e_", 0}.validate("s3.entropy.key", "s3.entropy.length");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("s3.entropy.length"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice::fs
