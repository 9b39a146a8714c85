// leasehold/status.h: errors as values, shared by every layer.
//
// A Status is either OK or an error code with a human-readable message that
// names the problem. Result<T> holds either a T or a non-OK Status. No layer
// throws exceptions across its boundary; every fallible call returns one of
// these.
//
// Thread-safety: plain values; safe to copy and move between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace leasehold {

// What went wrong, coarse enough for a caller to act on.
enum class ErrorCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,   // bad input: malformed, out of range, unknown command
  kLimitExceeded,     // a configured size or count limit would be broken
  kNotFound,          // no such session, lock or key
  kNotHolder,         // the caller does not hold the lock
  kStaleToken,        // a token lower/older than the current one
  kSessionExpired,    // the session is gone (expired, closed or killed)
  kConflict,          // the operation conflicts with the current state
  kWouldBlock,        // a non-waiting request could not be granted now
  kTimedOut,          // a deadline passed
  kUnavailable,       // the service (or its consensus engine) cannot serve now
  kUnreachable,       // no connection to any endpoint
  kRedirect,          // not the primary; message holds the primary address
  kCorruption,        // stored data failed a check
  kIoError,           // the operating system refused an I/O operation
  kInternal,          // a bug: an invariant did not hold
};

// Stable lowercase name of a code ("invalid_argument", ...), for logs and wire.
std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: ttl must be > 0"
  std::string to_string() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// Either a value or an error Status. Accessing value() on an error, or
// status() semantics on a value, is a programming error (asserted).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  Result(ErrorCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }

  // The error; OK when this holds a value.
  Status status() const { return is_ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace leasehold
