#include "sluice/core/duration.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <utility>

namespace sluice {
namespace {

std::string lower_trim(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Splits "12ms" into 12 and "ms". Fails if no leading digits.
bool split_number(const std::string& s, uint64_t* number, std::string* unit) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + i, *number);
  if (ec != std::errc() || p != s.data() + i) return false;
  *unit = s.substr(i);
  return true;
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1.0},          {"ns", 1e-6},      {"nano", 1e-6},    {"nanos", 1e-6},   {"nanosecond", 1e-6},
      {"nanoseconds", 1e-6}, {"us", 1e-3},   {"micro", 1e-3},   {"micros", 1e-3},  {"microsecond", 1e-3},
      {"microseconds", 1e-3}, {"ms", 1.0},   {"milli", 1.0},    {"millis", 1.0},   {"millisecond", 1.0},
      {"milliseconds", 1.0}, {"s", 1e3},     {"sec", 1e3},      {"secs", 1e3},     {"second", 1e3},
      {"seconds", 1e3},   {"m", 6e4},        {"min", 6e4},      {"mins", 6e4},     {"minute", 6e4},
      {"minutes", 6e4},   {"h", 3.6e6},      {"hour", 3.6e6},   {"hours", 3.6e6},  {"d", 8.64e7},
      {"day", 8.64e7},    {"days", 8.64e7}};
  std::string s = lower_trim(text);
  uint64_t n = 0;
  std::string unit;
  if (!split_number(s, &n, &unit)) {
    return Status::invalid_argument("'" + std::string(text) +
                                    "' is not a duration: expected a number and a unit such as 200ms, 1s, 2 min");
  }
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      double ms = static_cast<double>(n) * factor;
      if (ms > static_cast<double>(std::numeric_limits<int64_t>::max() / 2)) {
        return Status::invalid_argument("duration '" + std::string(text) + "' is too large");
      }
      return std::chrono::milliseconds(static_cast<int64_t>(ms));
    }
  }
  return Status::invalid_argument("'" + std::string(text) + "' has unknown time unit '" + unit +
                                  "': expected one of ns, us, ms, s, min, h, d");
}

Result<uint64_t> parse_memory_size_bytes(std::string_view text) {
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"", 1},         {"b", 1},           {"bytes", 1},         {"k", 1ull << 10},     {"kb", 1ull << 10},
      {"kibibytes", 1ull << 10}, {"m", 1ull << 20}, {"mb", 1ull << 20}, {"mebibytes", 1ull << 20},
      {"g", 1ull << 30}, {"gb", 1ull << 30}, {"gibibytes", 1ull << 30}, {"t", 1ull << 40}, {"tb", 1ull << 40},
      {"tebibytes", 1ull << 40}};
  std::string s = lower_trim(text);
  uint64_t n = 0;
  std::string unit;
  if (!split_number(s, &n, &unit)) {
    return Status::invalid_argument("'" + std::string(text) +
                                    "' is not a memory size: expected a number and a unit such as 64mb, 1gb");
  }
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      if (n > std::numeric_limits<uint64_t>::max() / factor) {
        return Status::invalid_argument("memory size '" + std::string(text) + "' is too large");
      }
      return n * factor;
    }
  }
  return Status::invalid_argument("'" + std::string(text) + "' has unknown memory unit '" + unit +
                                  "': expected one of b, kb, mb, gb, tb");
}

std::string format_duration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms != 0 && ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "min";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace sluice
