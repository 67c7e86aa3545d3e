// ConfigOption<T>: one configuration key with its type, documented default, aliases and valid range.
//
// Options are declared once (see options.h) and read through a Configuration:
//   int32_t p = config.get(options::kDefaultParallelism);
// ConfigOptionBase is the type-erased view the registry, the text parser and the docs test use.
//
// Keys: Flink 2.x names are canonical; Flink 1.x names go into `deprecated_keys` and are accepted with a
// warning. Thread-safety: immutable after construction; options are normally namespace-scope constants
// (do not read them from other static initializers).
#pragma once

#include <any>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/config/option_type.h"
#include "sluice/core/status.h"

namespace sluice {

// A validated value in both forms: typed (for get) and canonical text (for to_map and docs).
struct ParsedOptionValue {
  std::any value;
  std::string formatted;
};

// What a value must satisfy beyond parsing as T. An empty `allows` accepts every value of T.
template <class T>
struct Constraint {
  std::function<bool(const T&)> allows;
  std::string description;  // shown in errors and docs, e.g. ">= 1" or "-1 or in [1, 32768]"
};

class ConfigOptionBase {
 public:
  std::string key;                           // canonical (Flink 2.x) key
  std::string description;                   // one or two sentences for docs/configuration.md
  std::vector<std::string> deprecated_keys;  // Flink 1.x names, accepted with a warning

  virtual ~ConfigOptionBase() = default;

  virtual std::string_view type_name() const = 0;
  // The default in canonical text form ("100ms", "32kb", "HASHMAP", "" for an empty string).
  virtual std::string default_value_string() const = 0;
  // Accepted values beyond the type ("" when any value of the type is fine).
  virtual std::string constraint_description() const = 0;
  // Parses and validates `text`. Errors (kInvalidArgument) name the key, the text and what is accepted:
  // "execution.buffer-timeout.interval: 'fast' is not a duration (expected e.g. 100ms, 1s, 2 min)".
  virtual Result<ParsedOptionValue> parse_value(std::string_view text) const = 0;

 protected:
  ConfigOptionBase(std::string k, std::string d, std::vector<std::string> deprecated)
      : key(std::move(k)), description(std::move(d)), deprecated_keys(std::move(deprecated)) {}
  ConfigOptionBase(const ConfigOptionBase&) = default;
  ConfigOptionBase& operator=(const ConfigOptionBase&) = default;
};

template <class T>
class ConfigOption final : public ConfigOptionBase {
 public:
  T default_value;
  Constraint<T> constraint;

  ConfigOption(std::string k, T default_v, std::string d, std::vector<std::string> deprecated = {},
               Constraint<T> c = {})
      : ConfigOptionBase(std::move(k), std::move(d), std::move(deprecated)),
        default_value(std::move(default_v)),
        constraint(std::move(c)) {}

  // Ok if `v` satisfies the constraint; else kInvalidArgument
  // "parallelism.default: 0 is out of range (expected >= 1)".
  Status validate(const T& v) const {
    if (!constraint.allows || constraint.allows(v)) return Status::ok();
    return Status::invalid_argument(key + ": " + quote_if_needed(OptionType<T>::format(v)) +
                                    " is out of range (expected " + constraint.description + ")");
  }

  std::string_view type_name() const override { return OptionType<T>::kTypeName; }
  std::string default_value_string() const override { return OptionType<T>::format(default_value); }
  std::string constraint_description() const override {
    if constexpr (requires { OptionType<T>::accepted(); }) {
      std::string out = "one of " + OptionType<T>::accepted() + " (case-insensitive)";
      if constexpr (kIsOptional) out += ", or empty";
      return out;
    } else {
      return constraint.description;
    }
  }

  Result<ParsedOptionValue> parse_value(std::string_view text) const override {
    Result<T> parsed = OptionType<T>::parse(text);
    if (!parsed.is_ok()) return Status::invalid_argument(key + ": " + parsed.status().message());
    SLUICE_RETURN_IF_ERROR(validate(*parsed));
    std::string formatted = OptionType<T>::format(*parsed);
    return ParsedOptionValue{std::any(std::move(parsed).value()), std::move(formatted)};
  }

 private:
  static constexpr bool kIsOptional = requires(const T& v) { v.has_value(); };
  static std::string quote_if_needed(std::string s) {
    if constexpr (std::is_same_v<T, std::string>) return "'" + s + "'";
    return s;
  }
};

}  // namespace sluice
