// Status and Result<T>: the one error type of the project, carrying a stable LOUSHO_* code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "support/error_codes.h"

namespace lousho {

// An error: a stable machine code (e.g. ErrorCode::kConfigInvalid, "LOUSHO_CONFIG_INVALID" on
// the wire) and a one-line message. Value type; copy freely.
struct Error {
  ErrorCode code{};
  std::string message;
  // Provider errors: how long the server asked us to wait (Retry-After), -1 when unknown.
  long retry_after_ms = -1;
  // True when trying again later may succeed (429, 5xx, connection reset before output).
  bool retryable = false;

  std::string ToString() const { return std::string(ErrorCodeName(code)) + ": " + message; }
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

// A value or an Error. Cheap to move; not thread-safe. Dropping one unread is a compile error:
// handle it, or cast to (void) with a comment saying why the failure does not matter.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result of an operation with no value; [[nodiscard]] like Result.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace lousho
