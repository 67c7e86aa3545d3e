#include "sluice/config/option_type.h"

#include <gtest/gtest.h>

#include "sluice/config/options.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(OptionType, Int32) {
  using OT = OptionType<int32_t>;
  EXPECT_EQ(OT::parse("4").value(), 4);
  EXPECT_EQ(OT::parse(" -1 ").value(), -1);
  EXPECT_EQ(OT::parse("+7").value(), 7);
  EXPECT_EQ(OT::parse("2147483647").value(), 2147483647);
  for (const char* bad : {"", "four", "4.5", "4 cores", "0x10"}) {
    auto r = OT::parse(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("is not an integer"), std::string::npos) << r.status().message();
  }
  auto overflow = OT::parse("2147483648");
  ASSERT_FALSE(overflow.is_ok());
  EXPECT_NE(overflow.status().message().find("out of range for a 32-bit integer"), std::string::npos);
  EXPECT_EQ(OT::format(-1), "-1");
}

TEST(OptionType, Int64) {
  using OT = OptionType<int64_t>;
  EXPECT_EQ(OT::parse("9223372036854775807").value(), INT64_MAX);
  EXPECT_FALSE(OT::parse("9223372036854775808").is_ok());
  EXPECT_EQ(OT::format(INT64_MIN), "-9223372036854775808");
}

TEST(OptionType, BoolAcceptsOnlyTrueAndFalseCaseInsensitive) {
  using OT = OptionType<bool>;
  EXPECT_TRUE(OT::parse("true").value());
  EXPECT_TRUE(OT::parse("TRUE").value());
  EXPECT_FALSE(OT::parse("False").value());
  for (const char* bad : {"yes", "1", "on", ""}) {
    auto r = OT::parse(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("expected true or false"), std::string::npos);
  }
  EXPECT_EQ(OT::format(true), "true");
}

TEST(OptionType, StringIsVerbatim) {
  EXPECT_EQ(OptionType<std::string>::parse(" my job ").value(), " my job ");
  EXPECT_EQ(OptionType<std::string>::parse("").value(), "");
}

TEST(OptionType, DurationUsesFlinkSyntax) {
  using OT = OptionType<milliseconds>;
  EXPECT_EQ(OT::parse("100ms").value(), milliseconds(100));
  EXPECT_EQ(OT::parse("2 min").value(), milliseconds(120000));
  EXPECT_EQ(OT::parse("0").value(), milliseconds(0));
  auto r = OT::parse("fast");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "'fast' is not a duration (expected e.g. 100ms, 1s, 2 min)");
  auto negative = OptionType<std::chrono::milliseconds>::parse("-5s");
  ASSERT_FALSE(negative.is_ok());
  EXPECT_EQ(negative.status().message(), "'-5s': a duration must not be negative (expected e.g. 0ms, 100ms, 1s)");
  EXPECT_EQ(OT::format(milliseconds(1000)), "1s");
  EXPECT_EQ(OT::parse(OT::format(milliseconds(1500))).value(), milliseconds(1500));
}

TEST(OptionType, MemorySize) {
  using OT = OptionType<MemorySize>;
  EXPECT_EQ(OT::parse("32kb").value(), MemorySize::of_kibibytes(32));
  EXPECT_EQ(OT::parse("1 mb").value(), MemorySize::of_mebibytes(1));
  EXPECT_EQ(OT::parse("4096").value(), MemorySize::of_bytes(4096));
  auto r = OT::parse("big");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "'big' is not a memory size (expected e.g. 32kb, 64mb, 1gb)");
  EXPECT_EQ(OT::format(MemorySize::of_kibibytes(32)), "32kb");
  EXPECT_EQ(OT::format(MemorySize::of_mebibytes(16)), "16mb");
  EXPECT_EQ(OT::format(MemorySize{1ull << 30}), "1gb");
  EXPECT_EQ(OT::format(MemorySize{1ull << 41}), "2tb");
  EXPECT_EQ(OT::format(MemorySize{1500}), "1500b");
  EXPECT_EQ(OT::format(MemorySize{0}), "0b");
  for (uint64_t b : {0ull, 1ull, 1023ull, 1024ull, 1536ull, 3ull << 20, 5ull << 40}) {
    EXPECT_EQ(OT::parse(OT::format(MemorySize{b})).value(), MemorySize{b}) << b;
  }
}

TEST(OptionType, EnumIsCaseInsensitiveAndCanonicallyUpperCase) {
  using OT = OptionType<StateBackendType>;
  EXPECT_EQ(OT::parse("hashmap").value(), StateBackendType::kHashMap);
  EXPECT_EQ(OT::parse("HashMap").value(), StateBackendType::kHashMap);
  EXPECT_EQ(OT::parse(" HASHMAP ").value(), StateBackendType::kHashMap);
  EXPECT_EQ(OT::format(StateBackendType::kHashMap), "HASHMAP");
  EXPECT_EQ(OT::parse("RocksDB").value(), StateBackendType::kRocksDB);
  EXPECT_EQ(OT::format(StateBackendType::kRocksDB), "ROCKSDB");
  auto r = OT::parse("heap");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "'heap' is not an accepted value (expected one of HASHMAP, ROCKSDB, JOBMANAGER, MEMORYSTATEBACKEND, "
            "FILESYSTEM, FSSTATEBACKEND, ROCKSDBSTATEBACKEND, case-insensitive)");
}

enum class Color { kRed, kDarkBlue };

}  // namespace

template <>
struct EnumOptionNames<Color> {
  static constexpr std::array<std::pair<Color, std::string_view>, 2> kValues{{
      {Color::kRed, "RED"},
      {Color::kDarkBlue, "DARK_BLUE"},
  }};
};

namespace {

TEST(OptionType, EnumWithSeveralValues) {
  using OT = OptionType<Color>;
  EXPECT_EQ(OT::parse("dark_blue").value(), Color::kDarkBlue);
  EXPECT_EQ(OT::format(Color::kRed), "RED");
  EXPECT_EQ(OT::accepted(), "RED, DARK_BLUE");
  ConfigOption<Color> option{"test.color", Color::kRed, "A color."};
  EXPECT_EQ(option.constraint_description(), "one of RED, DARK_BLUE (case-insensitive)");
  auto bad = option.parse_value("green");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(),
            "test.color: 'green' is not an accepted value (expected one of RED, DARK_BLUE, case-insensitive)");
}

TEST(OptionType, Double) {
  using OT = OptionType<double>;
  EXPECT_EQ(OT::parse("1.5").value(), 1.5);
  EXPECT_EQ(OT::parse(" 2 ").value(), 2.0);
  EXPECT_EQ(OT::parse("+0.1").value(), 0.1);
  EXPECT_EQ(OT::parse("1e-3").value(), 0.001);
  EXPECT_EQ(OT::parse("-4.25").value(), -4.25);
  for (const char* bad : {"", "fast", "1.5x", "nan", "inf", "-inf", "1,5", "1e999"}) {
    auto r = OT::parse(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a number"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(OT::format(1.5), "1.5");
  EXPECT_EQ(OT::format(0.1), "0.1");
  EXPECT_EQ(OT::format(2.0), "2");
  EXPECT_EQ(OT::format(0.0), "0");
  for (double v : {0.1, 1.4, 1.0 / 3.0, 1e-9, 12345.678}) EXPECT_EQ(OT::parse(OT::format(v)).value(), v) << v;
}

// "+-5" was read as -5 (the '+' stripped, from_chars taking the '-'): Java's parsers, whose syntax these follow,
// refuse a second sign, and so do these now (found writing fuzz/config_fuzzer, which checks that what an Integer, Long
// or Double option accepts is written as a number).
TEST(OptionType, NumbersHaveOneSign) {
  for (const char* bad : {"+-5", "++5", "+ 5", "+"}) {
    EXPECT_FALSE(OptionType<int32_t>::parse(bad).is_ok()) << bad;
    EXPECT_FALSE(OptionType<int64_t>::parse(bad).is_ok()) << bad;
  }
  for (const char* bad : {"+-1.5", "++1.5", "+-0"}) {
    auto r = OptionType<double>::parse(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a number"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(OptionType<int32_t>::parse(" +5 ").value(), 5);
  EXPECT_EQ(OptionType<double>::parse("+1.5").value(), 1.5);
}

TEST(OptionType, OptionalIsUnsetWhenBlank) {
  using OT = OptionType<std::optional<Color>>;
  EXPECT_EQ(OT::kTypeName, "Enum");
  EXPECT_EQ(OT::parse("").value(), std::nullopt);
  EXPECT_EQ(OT::parse("  ").value(), std::nullopt);
  EXPECT_EQ(OT::parse("red").value(), std::optional<Color>(Color::kRed));
  EXPECT_EQ(OT::format(std::nullopt), "");
  EXPECT_EQ(OT::format(Color::kDarkBlue), "DARK_BLUE");
  EXPECT_EQ(OT::accepted(), "RED, DARK_BLUE");
  auto bad = OT::parse("green");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("expected one of RED, DARK_BLUE"), std::string::npos);

  ConfigOption<std::optional<Color>> option{"test.maybe-color", std::nullopt, "A color or nothing."};
  EXPECT_EQ(option.default_value_string(), "");
  EXPECT_EQ(option.type_name(), "Enum");
  EXPECT_EQ(option.constraint_description(), "one of RED, DARK_BLUE (case-insensitive), or empty");
  ConfigOption<std::optional<int32_t>> number{"test.maybe-number", std::nullopt, "A number or nothing."};
  EXPECT_EQ(number.parse_value("7")->formatted, "7");
  EXPECT_EQ(number.parse_value("")->formatted, "");
  EXPECT_EQ(number.type_name(), "Integer");
}

TEST(OptionType, EnumWithAliasesFormatsTheFirstName) {
  using OT = OptionType<RestartStrategyType>;
  EXPECT_EQ(OT::parse("off").value(), RestartStrategyType::kNone);
  EXPECT_EQ(OT::parse("disable").value(), RestartStrategyType::kNone);
  EXPECT_EQ(OT::format(RestartStrategyType::kNone), "NONE");
  EXPECT_EQ(OT::parse("fixeddelay").value(), RestartStrategyType::kFixedDelay);
  EXPECT_EQ(OT::format(RestartStrategyType::kFixedDelay), "FIXED-DELAY");
}

TEST(OptionType, EqualsIgnoreCase) {
  EXPECT_TRUE(equals_ignore_case("HashMap", "HASHMAP"));
  EXPECT_FALSE(equals_ignore_case("hash", "HASHMAP"));
  EXPECT_TRUE(equals_ignore_case("", ""));
}

}  // namespace
}  // namespace sluice
