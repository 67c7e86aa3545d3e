#include "sluice/config/option_type.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "sluice/core/duration.h"

namespace sluice {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict on `"'" + std::string(...)` (GCC bug 105651).
std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

// A leading '+' removed, as Java's parsers accept one; false for a second sign after it ("+-5"), which
// from_chars would read as a negative number and Java refuses.
bool strip_plus(std::string_view* s) {
  if (s->empty() || s->front() != '+') return true;
  s->remove_prefix(1);
  return s->empty() || (s->front() != '-' && s->front() != '+');
}

// Whole-string integer parse; a leading '+' is accepted as Java's Integer.parseInt does.
template <class Int>
Result<Int> parse_integer(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  if (!strip_plus(&s)) {
    return Status::invalid_argument(quoted(text) + " is not an integer (expected a whole number such as 4)");
  }
  Int v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return Status::invalid_argument(quoted(text) + " is out of range for " + std::string(what));
  }
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return Status::invalid_argument(quoted(text) + " is not an integer (expected a whole number such as 4)");
  }
  return v;
}

}  // namespace

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string format_memory_size(MemorySize size) {
  static constexpr std::pair<const char*, unsigned> kUnits[] = {{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}};
  uint64_t b = size.bytes;
  for (const auto& [unit, shift] : kUnits) {
    uint64_t factor = uint64_t{1} << shift;
    if (b != 0 && b % factor == 0) return std::to_string(b / factor) + unit;
  }
  return std::to_string(b) + "b";
}

namespace detail {
Status enum_parse_error(std::string_view text, std::string_view accepted) {
  return Status::invalid_argument(quoted(text) + " is not an accepted value (expected one of " +
                                  std::string(accepted) + ", case-insensitive)");
}
}  // namespace detail

Result<int32_t> OptionType<int32_t>::parse(std::string_view text) {
  return parse_integer<int32_t>(text, "a 32-bit integer");
}

Result<int64_t> OptionType<int64_t>::parse(std::string_view text) {
  return parse_integer<int64_t>(text, "a 64-bit integer");
}

Result<double> OptionType<double>::parse(std::string_view text) {
  std::string_view s = trim(text);
  const bool one_sign = strip_plus(&s);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!one_sign || s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return Status::invalid_argument(quoted(text) + " is not a number (expected a decimal such as 1.5 or 0.1)");
  }
  return v;
}

std::string OptionType<double>::format(double v) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);  // shortest round-trip form
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

Result<bool> OptionType<bool>::parse(std::string_view text) {
  std::string_view s = trim(text);
  if (equals_ignore_case(s, "true")) return true;
  if (equals_ignore_case(s, "false")) return false;
  return Status::invalid_argument(quoted(text) + " is not a boolean (expected true or false)");
}

Result<std::chrono::milliseconds> OptionType<std::chrono::milliseconds>::parse(std::string_view text) {
  auto r = parse_duration(text);
  if (!r.is_ok()) {
    std::string_view t = trim(text);
    if (!t.empty() && t.front() == '-' && parse_duration(t.substr(1)).is_ok()) {
      return Status::invalid_argument(quoted(text) + ": a duration must not be negative (expected e.g. 0ms, 100ms, 1s)");
    }
    return Status::invalid_argument(quoted(text) + " is not a duration (expected e.g. 100ms, 1s, 2 min)");
  }
  return r;
}

std::string OptionType<std::chrono::milliseconds>::format(std::chrono::milliseconds v) {
  return format_duration(v);
}

Result<MemorySize> OptionType<MemorySize>::parse(std::string_view text) {
  auto r = parse_memory_size_bytes(text);
  if (!r.is_ok()) {
    return Status::invalid_argument(quoted(text) + " is not a memory size (expected e.g. 32kb, 64mb, 1gb)");
  }
  return MemorySize{*r};
}

}  // namespace sluice
