#include "logging/log_format.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>

#include "core/log_context.h"
#include "sluice/config/configuration.h"

namespace sluice::logging {
namespace {

// The level as log.level names it (log4j's names, as Flink's JSON log lines carry them), not spdlog's "warning".
const char* log4j_level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "TRACE";
    case spdlog::level::debug: return "DEBUG";
    case spdlog::level::info: return "INFO";
    case spdlog::level::warn: return "WARN";
    case spdlog::level::err: return "ERROR";
    case spdlog::level::critical: return "FATAL";
    case spdlog::level::off:
    case spdlog::level::n_levels: break;
  }
  return "OFF";
}

// %J: "[<job id>] " or "[<job id> <task>] ", nothing without either.
class JobFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    const log::LogContext c = log::current();
    if (c.job_id.empty() && c.task.empty()) return;
    std::string s = "[" + c.job_id;
    if (!c.task.empty()) s += (c.job_id.empty() ? "" : " ") + c.task;
    s += "] ";
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JobFlag>(); }
};

// The message with secrets redacted, formatted by `inner`.
class RedactingFormatter final : public spdlog::formatter {
 public:
  explicit RedactingFormatter(std::unique_ptr<spdlog::formatter> inner) : inner_(std::move(inner)) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string redacted = redact_sensitive_values(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(redacted.data(), redacted.size());
    inner_->format(copy, dest);
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<RedactingFormatter>(inner_->clone());
  }

 private:
  std::unique_ptr<spdlog::formatter> inner_;
};

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs).count();
    const std::time_t t = static_cast<std::time_t>(secs.count());
    std::tm utc{};
    gmtime_r(&t, &utc);
    char time_text[96];  // room for any int the compiler cannot rule out
    std::snprintf(time_text, sizeof time_text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
    std::string line = "{\"time\":\"";
    line += time_text;
    line += "\",\"level\":\"";
    line += log4j_level_name(msg.level);
    line += "\",\"thread\":" + std::to_string(msg.thread_id);
    const log::LogContext c = log::current();
    if (!c.job_id.empty()) {
      line += ",\"job\":\"";
      append_json_string_body(c.job_id, line);
      line += '"';
    }
    if (!c.task.empty()) {
      line += ",\"task\":\"";
      append_json_string_body(c.task, line);
      line += '"';
    }
    line += ",\"message\":\"";
    append_json_string_body(std::string_view(msg.payload.data(), msg.payload.size()), line);
    line += "\"}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

// The length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 when it is not one (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void append_json_string_body(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
      }
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t n = utf8_sequence(text.substr(i)); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
}

std::unique_ptr<spdlog::formatter> text_formatter(const std::string& pattern) {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<JobFlag>('J').set_pattern(pattern);
  return std::make_unique<RedactingFormatter>(std::move(f));
}

std::unique_ptr<spdlog::formatter> json_formatter() {
  return std::make_unique<RedactingFormatter>(std::make_unique<JsonFormatter>());
}

}  // namespace sluice::logging
