#include "restart/failure_classifier.h"

#include <cctype>

#include "core/failure_markers.h"

namespace sluice {
namespace {

bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// `word` (letters and digits) with its volatile parts replaced by '#' (see normalized_failure).
void append_normalized_word(std::string_view word, std::string& out) {
  bool all_hex = true;
  bool has_digit = false;
  for (char c : word) {
    all_hex = all_hex && is_hex_digit(c);
    has_digit = has_digit || is_digit(c);
  }
  if (all_hex && has_digit && word.size() >= 8) {
    out += '#';
    return;
  }
  if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) {
    bool hex_literal = true;
    for (char c : word.substr(2)) hex_literal = hex_literal && is_hex_digit(c);
    if (hex_literal) {
      out += '#';
      return;
    }
  }
  for (size_t i = 0; i < word.size();) {
    if (!is_digit(word[i])) {
      out += word[i++];
      continue;
    }
    while (i < word.size() && is_digit(word[i])) ++i;
    out += '#';
  }
}

}  // namespace

std::string_view failure_class_name(FailureClass c) {
  switch (c) {
    case FailureClass::kNonRecoverable: return "NON_RECOVERABLE_ERROR";
    case FailureClass::kDataMissing: return "DATA_MISSING_ERROR";
    case FailureClass::kEnvironment: return "ENVIRONMENT_ERROR";
    case FailureClass::kRecoverable: return "RECOVERABLE_ERROR";
  }
  return "UNKNOWN_ERROR";
}

bool restart_can_help(FailureClass c) { return c == FailureClass::kRecoverable; }

FailureClass classify_failure(const Status& cause) {
  if (cause.code() == StatusCode::kInvalidArgument) return FailureClass::kNonRecoverable;
  if (has_failure_mark(cause, kCommittableDataGoneMark)) return FailureClass::kDataMissing;
  if (has_failure_mark(cause, kPathRefusedMark)) return FailureClass::kEnvironment;
  return FailureClass::kRecoverable;
}

std::string normalized_failure(const Status& cause) {
  const std::string text = cause.to_string();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!is_word_char(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_word_char(text[end])) ++end;
    append_normalized_word(std::string_view(text).substr(i, end - i), out);
    i = end;
  }
  return out;
}

int32_t IdenticalFailureCounter::record(const Status& cause, int64_t latest_checkpoint_id) {
  std::string identity = normalized_failure(cause);
  if (count_ > 0 && identity == last_ && latest_checkpoint_id == last_checkpoint_id_) {
    ++count_;
  } else {
    count_ = 1;
    last_ = std::move(identity);
  }
  last_checkpoint_id_ = latest_checkpoint_id;
  return count_;
}

}  // namespace sluice
