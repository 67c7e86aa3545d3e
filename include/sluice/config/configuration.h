// Configuration: the key/value settings of a job or a process, as Flink's Configuration.
//
// Sources, lowest precedence first (callers merge them in this order): defaults of each ConfigOption,
// a config.yaml file (from_yaml_file), programmatic set(), -D key=value flags (apply_dynamic_property).
//
// Every stored value has been parsed and validated against its option, and is stored under the option's
// canonical key; a deprecated (Flink 1.x) key is resolved to its canonical key with a spdlog warning.
// Text entry points (set_string, -D, YAML) accept registered keys only (see options.h): an unknown key is an
// error that suggests the closest known keys.
//
// Thread-safety: a value type, not synchronized. Copy it to share it between threads.
#pragma once

#include <any>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "sluice/config/config_option.h"
#include "sluice/core/status.h"

namespace sluice {

class Configuration {
 public:
  Configuration() = default;

  // The value set for `option`, or its default when unset.
  template <class T>
  T get(const ConfigOption<T>& option) const;

  // Stores `value` for `option` (need not be registered). Precondition: `value` satisfies the option's
  // constraint; an invalid value is logged as an error and NOT stored. Use try_set for values from users.
  template <class T>
  void set(const ConfigOption<T>& option, T value);
  // As set(), but returns kInvalidArgument (naming key and value) instead of logging.
  template <class T>
  Status try_set(const ConfigOption<T>& option, T value);

  // Parses `value` for the registered option `key` (canonical or deprecated). Errors (kInvalidArgument):
  // unknown key (the message suggests close keys), or a value the option does not accept (the message
  // names the key, the value and what is accepted). On error the configuration is unchanged.
  Status set_string(std::string_view key, std::string_view value);

  // A canonical key wins over its deprecated keys in whatever order they are set (Flink's rule): setting a
  // deprecated key after the canonical one logs a warning and changes nothing. A value rejected for a key that
  // holds a secret (is_sensitive_key) is not repeated in the error.
  // Applies one -D flag "key=value". The key ends at the first '=' ("a=b=c" sets a to "b=c"); surrounding
  // whitespace of the key is ignored. Errors: no '=' or an empty key, plus those of set_string.
  Status apply_dynamic_property(std::string_view key_equals_value);

  // Loads a Flink 2 style config.yaml: flat keys (`a.b.c: v`), nested maps (`a: {b: {c: v}}`) or both.
  // When a deprecated key and its canonical key both appear, the canonical one wins (as in Flink).
  // Errors: kNotFound / kIOError if the file cannot be read (naming the path); kInvalidArgument for bad
  // YAML (naming the path and yaml-cpp's line and column), a non-map document, a list value, an unknown
  // key or a bad value (naming the path, the line and the key).
  static Result<Configuration> from_yaml_file(const std::string& path);
  // As from_yaml_file; messages say "<string>" where they would name the path.
  static Result<Configuration> from_yaml_string(std::string_view yaml);

  // Copies every value set in `other` into this configuration; `other` wins on conflicts.
  void merge(const Configuration& other);

  // True if a value was set for `key` (canonical or deprecated alias); defaults do not count.
  bool contains(std::string_view key) const;

  // The values that were set, canonical key -> canonical text ("100ms", "32kb", "HASHMAP"), sorted by key.
  std::map<std::string, std::string> to_map() const;

  bool operator==(const Configuration& other) const { return to_map() == other.to_map(); }

 private:
  struct Entry {
    std::any value;          // holds exactly the T of the option that stored it
    std::string formatted;   // OptionType<T>::format(value)
    bool from_deprecated_key = false;  // a later canonical key replaces it; a later deprecated one does not win
  };
  static void log_rejected_set(const Status& status);
  static void log_type_mismatch(std::string_view key);

  std::map<std::string, Entry, std::less<>> entries_;
};

// ---- template implementations -------------------------------------------------------------------------

template <class T>
T Configuration::get(const ConfigOption<T>& option) const {
  auto it = entries_.find(option.key);
  if (it == entries_.end()) return option.default_value;
  if (const T* v = std::any_cast<T>(&it->second.value)) return *v;
  // Two options with one key and different types: a programming error in the option declarations.
  log_type_mismatch(option.key);
  return option.default_value;
}

template <class T>
Status Configuration::try_set(const ConfigOption<T>& option, T value) {
  SLUICE_RETURN_IF_ERROR(option.validate(value));
  std::string formatted = OptionType<T>::format(value);
  entries_[option.key] = Entry{std::any(std::move(value)), std::move(formatted)};
  return Status::ok();
}

template <class T>
void Configuration::set(const ConfigOption<T>& option, T value) {
  Status s = try_set(option, std::move(value));
  if (!s.is_ok()) log_rejected_set(s);
}

// Whether `key` holds a secret whose value must never be printed: it contains (case-insensitively) one of the
// substrings Flink's GlobalConfiguration.isSensitive uses ("password", "secret", "token", "apikey", ...).
bool is_sensitive_key(std::string_view key);

inline constexpr std::string_view kRedacted = "<redacted>";

// `text` (a command line, an error message) with the value of every sensitive key replaced by kRedacted: the part
// after '=' of a word "key=value", or the word after a sensitive key-shaped word without '=' (dotted, as
// "s3.secret-key VALUE", or ending in ':', as "password: VALUE"). Other text unchanged: "tokenize (1/2)" stays.
std::string redact_sensitive_values(std::string_view text);

}  // namespace sluice
