#include "sluice/core/duration.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(Duration, ParsesFlinkSyntax) {
  EXPECT_EQ(parse_duration("200ms").value(), milliseconds(200));
  EXPECT_EQ(parse_duration("1s").value(), milliseconds(1000));
  EXPECT_EQ(parse_duration("2 min").value(), milliseconds(120000));
  EXPECT_EQ(parse_duration("3h").value(), milliseconds(3 * 3600000));
  EXPECT_EQ(parse_duration("1 d").value(), milliseconds(86400000));
  EXPECT_EQ(parse_duration("150").value(), milliseconds(150));
  EXPECT_EQ(parse_duration("10 Seconds").value(), milliseconds(10000));
  EXPECT_EQ(parse_duration("5000us").value(), milliseconds(5));
}

TEST(Duration, RejectsGarbageWithClearMessage) {
  for (const char* bad : {"", "fast", "10 parsecs", "-5s", "ms"}) {
    auto r = parse_duration(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

TEST(Duration, FormatsShortest) {
  EXPECT_EQ(format_duration(milliseconds(100)), "100ms");
  EXPECT_EQ(format_duration(milliseconds(1000)), "1s");
  EXPECT_EQ(format_duration(milliseconds(120000)), "2min");
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
}

TEST(MemorySize, ParsesFlinkSyntax) {
  EXPECT_EQ(parse_memory_size_bytes("64mb").value(), 64ull << 20);
  EXPECT_EQ(parse_memory_size_bytes("1 gb").value(), 1ull << 30);
  EXPECT_EQ(parse_memory_size_bytes("32k").value(), 32ull << 10);
  EXPECT_EQ(parse_memory_size_bytes("100").value(), 100ull);
  EXPECT_FALSE(parse_memory_size_bytes("lots").is_ok());
  EXPECT_FALSE(parse_memory_size_bytes("1 zb").is_ok());
}

}  // namespace
}  // namespace sluice
