#include "sluice/config/configuration.h"

#include <spdlog/spdlog.h>

#include "sluice/config/options.h"

namespace sluice {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Status unknown_key_error(std::string_view key) {
  std::string message = "unknown configuration key '" + std::string(key) + "'";
  std::vector<std::string> close = suggest_keys(key);
  if (close.empty()) {
    message += " (see docs/configuration.md for the known keys)";
  } else {
    message += "; did you mean ";
    for (size_t i = 0; i < close.size(); ++i) {
      if (i > 0) message += i + 1 == close.size() ? " or " : ", ";
      message += "'" + close[i] + "'";
    }
    message += "?";
  }
  return Status::invalid_argument(std::move(message));
}

}  // namespace

Status Configuration::set_string(std::string_view key, std::string_view value) {
  OptionLookup found = find_option(key);
  if (found.option == nullptr) return unknown_key_error(key);
  Result<ParsedOptionValue> parsed = found.option->parse_value(value);
  if (!parsed.is_ok()) return parsed.status();
  if (found.deprecated) {
    spdlog::warn("configuration key '{}' is deprecated; use '{}' instead", key, found.option->key);
  }
  entries_[found.option->key] = Entry{std::move(parsed->value), std::move(parsed->formatted)};
  return Status::ok();
}

Status Configuration::apply_dynamic_property(std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos) {
    return Status::invalid_argument("dynamic property '" + std::string(key_equals_value) +
                                    "' is not of the form key=value");
  }
  std::string_view key = trim(key_equals_value.substr(0, eq));
  if (key.empty()) {
    return Status::invalid_argument("dynamic property '" + std::string(key_equals_value) +
                                    "' has an empty key (expected key=value)");
  }
  return set_string(key, key_equals_value.substr(eq + 1));
}

void Configuration::merge(const Configuration& other) {
  for (const auto& [key, entry] : other.entries_) entries_[key] = entry;
}

bool Configuration::contains(std::string_view key) const {
  OptionLookup found = find_option(key);
  if (found.option != nullptr) return entries_.find(found.option->key) != entries_.end();
  return entries_.find(key) != entries_.end();  // an unregistered option stored through set()
}

std::map<std::string, std::string> Configuration::to_map() const {
  std::map<std::string, std::string> out;
  for (const auto& [key, entry] : entries_) out.emplace(key, entry.formatted);
  return out;
}

void Configuration::log_rejected_set(const Status& status) {
  spdlog::error("Configuration::set ignored an invalid value: {}", status.message());
}

void Configuration::log_type_mismatch(std::string_view key) {
  spdlog::error("configuration key '{}' holds a value of another type than the option read; using the default",
                key);
}

}  // namespace sluice
