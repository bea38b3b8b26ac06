// One error convention for everything below the C API: a negative errno plus a message
// that names the argument or the device condition. The C API (lib/api) turns it into an
// ork_status and ork_last_error(). No exceptions cross layer boundaries.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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
  // Reading the value of an error is a bug in the caller: it stops the process with the
  // error's message instead of reading an empty optional (undefined behaviour, which once
  // let a test pass on x86 on garbage and crash on aarch64).
  T& value() & { return checked(), *value_; }
  const T& value() const& { return checked(), *value_; }
  T&& value() && { return checked(), std::move(*value_); }
  T* operator->() { return checked(), &*value_; }
  const T* operator->() const { return checked(), &*value_; }
  T& operator*() { return checked(), *value_; }
  const Error& error() const { return error_; }

 private:
  void checked() const {
    if (value_.has_value()) return;
    std::fprintf(stderr, "ork: the value of a failed Result was read (error: %s)\n", error_.message.c_str());
    std::abort();
  }
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
