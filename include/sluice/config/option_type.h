// The value types a configuration option can have, and how each is parsed from and formatted to text.
//
// OptionType<T> is a trait with three members:
//   kTypeName                    the name shown in docs/configuration.md ("Integer", "Duration", ...)
//   Result<T> parse(text)        the text form used in config.yaml and -D flags; errors name the text and
//                                what is accepted, but not the key (ConfigOption adds the key)
//   std::string format(value)    the canonical text form; parse(format(v)) == v
// Supported: int32_t, int64_t, double, bool, std::string, std::chrono::milliseconds (Flink duration syntax,
// see core/duration.h), MemorySize (Flink memory-size syntax, powers of 1024), any enum E for which
// EnumOptionNames<E> is specialized (case-insensitive as Flink; the canonical form is upper-case), and
// std::optional<T> of those: Flink's "no default value" options, where empty text means unset (nullopt) and
// the effective value is derived from other options (documented per option).
// Types with a fixed set of names also have `std::string accepted()` (shown in errors and docs).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "sluice/core/status.h"

namespace sluice {

// A memory size in bytes; a distinct type so a size can never be mistaken for a count.
struct MemorySize {
  uint64_t bytes = 0;

  static constexpr MemorySize of_bytes(uint64_t n) { return MemorySize{n}; }
  static constexpr MemorySize of_kibibytes(uint64_t n) { return MemorySize{n << 10}; }
  static constexpr MemorySize of_mebibytes(uint64_t n) { return MemorySize{n << 20}; }
  auto operator<=>(const MemorySize&) const = default;
};

// The shortest exact form in Flink's syntax: "32kb", "16mb", "1gb", "100b".
std::string format_memory_size(MemorySize size);

// Case-insensitive ASCII comparison (Flink matches enum values case-insensitively).
bool equals_ignore_case(std::string_view a, std::string_view b);

template <class T>
struct OptionType;  // specialized below; a missing specialization is a compile error, by design

template <>
struct OptionType<int32_t> {
  static constexpr std::string_view kTypeName = "Integer";
  static Result<int32_t> parse(std::string_view text);
  static std::string format(int32_t v) { return std::to_string(v); }
};

template <>
struct OptionType<int64_t> {
  static constexpr std::string_view kTypeName = "Long";
  static Result<int64_t> parse(std::string_view text);
  static std::string format(int64_t v) { return std::to_string(v); }
};

template <>
struct OptionType<double> {
  static constexpr std::string_view kTypeName = "Double";
  // A finite decimal number: "1.5", "2", "0.1", "1e-3"; not nan or inf.
  static Result<double> parse(std::string_view text);
  // The shortest text that parses back to the same double: "1.5", "0.1", "2".
  static std::string format(double v);
};

template <>
struct OptionType<bool> {
  static constexpr std::string_view kTypeName = "Boolean";
  // "true" or "false", case-insensitive, as Flink (not YAML 1.1's yes/no/on/off).
  static Result<bool> parse(std::string_view text);
  static std::string format(bool v) { return v ? "true" : "false"; }
};

template <>
struct OptionType<std::string> {
  static constexpr std::string_view kTypeName = "String";
  static Result<std::string> parse(std::string_view text) { return std::string(text); }
  static std::string format(const std::string& v) { return v; }
};

template <>
struct OptionType<std::chrono::milliseconds> {
  static constexpr std::string_view kTypeName = "Duration";
  static Result<std::chrono::milliseconds> parse(std::string_view text);
  static std::string format(std::chrono::milliseconds v);
};

template <>
struct OptionType<MemorySize> {
  static constexpr std::string_view kTypeName = "MemorySize";
  static Result<MemorySize> parse(std::string_view text);
  static std::string format(MemorySize v) { return format_memory_size(v); }
};

// Specialize for every enum used as an option type:
//   template <> struct EnumOptionNames<StateBackendType> {
//     static constexpr std::array<std::pair<StateBackendType, std::string_view>, 1> kValues{{
//         {StateBackendType::kHashMap, "HASHMAP"}}};
//   };
// Names are the canonical upper-case text form; parsing ignores case.
template <class E>
struct EnumOptionNames;

namespace detail {
Status enum_parse_error(std::string_view text, std::string_view accepted);
}  // namespace detail

template <class E>
  requires std::is_enum_v<E>
struct OptionType<E> {
  static constexpr std::string_view kTypeName = "Enum";

  static Result<E> parse(std::string_view text) {
    std::string_view trimmed = trim(text);
    for (const auto& [value, name] : EnumOptionNames<E>::kValues) {
      if (equals_ignore_case(trimmed, name)) return value;
    }
    return detail::enum_parse_error(text, accepted());
  }
  static std::string format(E v) {
    for (const auto& [value, name] : EnumOptionNames<E>::kValues) {
      if (value == v) return std::string(name);
    }
    return "UNKNOWN(" + std::to_string(static_cast<long long>(v)) + ")";
  }
  // "HASHMAP" or "HASHMAP, EMBEDDED_ROCKSDB"
  static std::string accepted() {
    std::string out;
    for (const auto& [value, name] : EnumOptionNames<E>::kValues) {
      if (!out.empty()) out += ", ";
      out += name;
    }
    return out;
  }

 private:
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  }
};

// An option without a default value (Flink's noDefaultValue()): empty or blank text is "unset" (nullopt).
template <class T>
struct OptionType<std::optional<T>> {
  static constexpr std::string_view kTypeName = OptionType<T>::kTypeName;

  static Result<std::optional<T>> parse(std::string_view text) {
    bool blank = true;
    for (char c : text) blank = blank && (c == ' ' || c == '\t');
    if (blank) return std::optional<T>();
    Result<T> parsed = OptionType<T>::parse(text);
    if (!parsed.is_ok()) return parsed.status();
    return std::optional<T>(std::move(parsed).value());
  }
  static std::string format(const std::optional<T>& v) { return v ? OptionType<T>::format(*v) : std::string(); }
  static std::string accepted()
    requires requires { OptionType<T>::accepted(); }
  {
    return OptionType<T>::accepted();
  }
};

}  // namespace sluice
