// The line formats of Sluice's logger (docs/configuration.md, "Logging"): spdlog formatters that add each line's
// job id and task (core/log_context.h) and keep secrets out of every line.
//   - text_formatter(pattern): spdlog's pattern syntax plus the flag %J ("[<job id>] ", "[<job id> <task>] ", or
//     nothing when neither is known);
//   - json_formatter(): one JSON object per line: {"time": "2026-12-07T05:01:02.345Z", "level": "info",
//     "thread": 1234, "job": "<hex>", "task": "Source: bids (1/2)#0", "message": "..."} (job and task only when
//     known), UTF-8 with anything that is not valid UTF-8 replaced by U+FFFD, so every line parses.
// Both pass the message through config's redact_sensitive_values first: a value of a sensitive key (s3.secret-key,
// *password*, ...) written as `key=value` or `key: value` becomes `<redacted>`.
// Thread-safety: a formatter is used by one sink at a time (spdlog clones it per sink and locks the sink).
#pragma once

#include <memory>
#include <string>

#include <spdlog/formatter.h>

namespace sluice::logging {

std::unique_ptr<spdlog::formatter> text_formatter(const std::string& pattern);
std::unique_ptr<spdlog::formatter> json_formatter();

// `text` as the body of a JSON string (quotes not included): ", \ and control characters escaped, invalid UTF-8
// replaced by U+FFFD.
void append_json_string_body(std::string_view text, std::string& out);

}  // namespace sluice::logging
