// Status and Result<T>: the one error type inside the engine.
//
// Every fallible engine call returns a Status (or Result<T>), both [[nodiscard]]. A Status names its code,
// carries a message that says which input was wrong and what was expected, and whether retrying can help
// (the restart strategy reads `retriable()`). User-function exceptions are not Statuses: they fail the task
// (see runtime/task.h) and become a Status with code kUserFunction at the task boundary.
//
// Thread-safety: values; safe to copy between threads.
#pragma once

#include <cassert>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,     // bad config value, bad flag, bad API use: fix the input
  kNotFound,            // a named file, key or job does not exist
  kCorruption,          // bytes on disk or in a channel do not decode as expected
  kIOError,             // the filesystem or network refused
  kFailedPrecondition,  // the call is valid but not in the current state
  kCancelled,           // the job or task was cancelled
  kTimeout,             // a deadline passed
  kUserFunction,        // a user function threw
  kInternal,            // a bug in Sluice
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, bool retriable = false)
      : code_(code), message_(std::move(message)), retriable_(retriable) {}

  static Status ok() { return Status(); }
  static Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status io_error(std::string m) { return {StatusCode::kIOError, std::move(m), true}; }
  static Status failed_precondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status timeout(std::string m) { return {StatusCode::kTimeout, std::move(m), true}; }
  static Status user_function(std::string m) { return {StatusCode::kUserFunction, std::move(m), true}; }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool retriable() const { return retriable_; }

  // "InvalidArgument: execution.buffer-timeout.interval: expected a duration such as 100ms, got 'fast'"
  std::string to_string() const;

  // Prefixes the message with context, keeping code and retriability: s.with_context("restoring chk-3").
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  bool retriable_ = false;
};

// Throwing a Status where an exception must cross a boundary (operator restore, the task loop): the task
// catches it and fails with this Status, keeping its code, so the restart strategy still sees, for example, an
// InvalidArgument (never restarted) rather than a generic Internal failure. Thread-safety: as Status.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(Status status) : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Result<T>: a T or the Status that says why there is none. Never holds an ok Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, as absl::StatusOr
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).is_ok() && "Result constructed from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  // Reading the value of an error Result is a bug in the caller: it throws std::logic_error carrying the
  // Status's text, so the mistake is at least reported clearly.
  T& value() & {
    check();
    return std::get<T>(v_);
  }
  const T& value() const& {
    check();
    return std::get<T>(v_);
  }
  T&& value() && {
    check();
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void check() const {
    if (!is_ok()) throw std::logic_error("value() of a failed Result: " + std::get<Status>(v_).to_string());
  }
  std::variant<T, Status> v_;
};

}  // namespace sluice

// Propagates a non-ok Status to the caller.
#define SLUICE_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::sluice::Status _sluice_st = (expr);       \
    if (!_sluice_st.is_ok()) return _sluice_st; \
  } while (0)

#define SLUICE_CONCAT_INNER(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_INNER(a, b)
// SLUICE_ASSIGN_OR_RETURN(auto x, compute()); assigns the value or returns the Status.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr) SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(_sluice_r, __LINE__), lhs, expr)
#define SLUICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.is_ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
