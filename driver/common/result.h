// One error convention for everything below the C API: a negative errno plus a message
// that names the argument or the device condition. The C API (lib/api) turns it into an
// ork_status and ork_last_error(). No exceptions cross layer boundaries.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

namespace ork {

struct Error {
  int code = -EINVAL;   // negative errno (-EINVAL, -ENOMEM, -ETIMEDOUT, -EIO, ...)
  std::string message;  // names the bad argument or condition, e.g. "K = 0: must be >= 1"
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error)) {}     // NOLINT: implicit by design
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const Error& error() const { return error_; }

 private:
  std::optional<T> value_;
  Error error_;
};

// Result<void>: success, or an Error.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit
  static Status success() { return {}; }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error make_error(int code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace ork
