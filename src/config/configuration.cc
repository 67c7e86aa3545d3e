#include "sluice/config/configuration.h"

#include <spdlog/spdlog.h>

#include <cctype>

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

bool is_sensitive_key(std::string_view key) {
  // The substrings of Flink's GlobalConfiguration.isSensitive (its SENSITIVE_KEYS), matched case-insensitively.
  static constexpr std::string_view kSensitive[] = {"password", "secret", "fs.azure.account.key", "apikey",
                                                    "api-key", "auth-params", "service-key", "token",
                                                    "basic-auth", "jaas.config", "http-headers"};
  std::string lower(key);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : kSensitive) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string redact_sensitive_values(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool redact_next = false;  // a sensitive key without '=': the next word is its value
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n') ++end;
    const std::string_view word = text.substr(i, end - i);
    i = end;
    if (redact_next) {
      out += kRedacted;
      redact_next = false;
      continue;
    }
    const size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq);
    // Without '=', only a word shaped like a configuration key (dotted, or "key:") announces a value: an operator
    // named "tokenize" in a log line is not a key, and the word after it is not a secret.
    const bool key_shaped =
        eq != std::string_view::npos || key.find('.') != std::string_view::npos || key.ends_with(':');
    if (!key_shaped || !is_sensitive_key(key)) {
      out += word;
    } else if (eq == std::string_view::npos) {
      out += word;
      redact_next = true;  // "s3.secret-key VALUE" or "s3.secret-key: VALUE": the value follows
    } else {
      out += word.substr(0, eq + 1);
      out += kRedacted;
      if (word.back() == '\'' || word.back() == '"') out += word.back();
    }
  }
  return out;
}

Status Configuration::set_string(std::string_view key, std::string_view value) {
  OptionLookup found = find_option(key);
  if (found.option == nullptr) return unknown_key_error(key);
  Result<ParsedOptionValue> parsed = found.option->parse_value(value);
  if (!parsed.is_ok()) {
    if (!is_sensitive_key(found.option->key)) return parsed.status();
    return Status::invalid_argument("'" + std::string(key) + "': the value is not valid (not shown: the key holds a secret)");
  }
  if (found.deprecated) {
    spdlog::warn("configuration key '{}' is deprecated; use '{}' instead", key, found.option->key);
    auto existing = entries_.find(found.option->key);
    if (existing != entries_.end() && !existing->second.from_deprecated_key) {
      spdlog::warn("ignoring deprecated key '{}' because '{}' is also set", key, found.option->key);
      return Status::ok();  // the canonical key wins, in whatever order they come (Flink's rule)
    }
  }
  entries_[found.option->key] = Entry{std::move(parsed->value), std::move(parsed->formatted), found.deprecated};
  return Status::ok();
}

Status Configuration::apply_dynamic_property(std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos) {
    return Status::invalid_argument("dynamic property '" + redact_sensitive_values(key_equals_value) +
                                    "' is not of the form key=value");
  }
  std::string_view key = trim(key_equals_value.substr(0, eq));
  if (key.empty()) {
    return Status::invalid_argument("dynamic property '" + redact_sensitive_values(key_equals_value) +
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
