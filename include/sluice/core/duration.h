// Durations and memory sizes in Flink's configuration syntax.
//
// Durations: "<number><unit>" with optional spaces, units as Flink's TimeUtils accepts them:
// ns|nano|nanos|nanosecond|nanoseconds, us|micro|micros|microsecond|microseconds,
// ms|milli|millis|millisecond|milliseconds, s|sec|secs|second|seconds, min|m|minute|minutes,
// h|hour|hours, d|day|days. A bare number means milliseconds (Flink's default unit). Examples: "200ms",
// "1s", "2 min". Memory sizes: "<number><unit>" with b|bytes, k|kb|kibibytes, m|mb|mebibytes,
// g|gb|gibibytes, t|tb|tebibytes (powers of 1024, as Flink's MemorySize); a bare number means bytes.
// Errors: kInvalidArgument naming the text and the accepted forms. Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice {

Result<std::chrono::milliseconds> parse_duration(std::string_view text);
Result<uint64_t> parse_memory_size_bytes(std::string_view text);
// The shortest exact form: "100ms", "1s", "2min", "3h".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace sluice
