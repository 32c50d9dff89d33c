#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace stagegate {

/// The outcome of an operation that can fail for expected reasons (bad input, a missing file, an
/// SQLite error). Cheap to copy when ok. A failed request to a target is not a Status: it is data,
/// recorded as an outcome.
class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kInvalidInput, kNotFound, kIoError, kStoreError, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message) {
    return {Code::kInvalidInput, std::move(message)};
  }
  static Status NotFound(std::string message) { return {Code::kNotFound, std::move(message)}; }
  static Status IoError(std::string message) { return {Code::kIoError, std::move(message)}; }
  static Status StoreError(std::string message) { return {Code::kStoreError, std::move(message)}; }
  static Status Internal(std::string message) { return {Code::kInternal, std::move(message)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns this status with `context + ": "` before its message; an ok status stays ok.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

/// Either a value or a failed Status. Accessing value() of a failed result is a programmer error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "a Result needs a value or a failed Status");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> state_;
};

}  // namespace stagegate

/// Returns early from the enclosing function when `expr` yields a failed Status.
#define SG_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::stagegate::Status sg_status_ = (expr); \
    if (!sg_status_.ok()) return sg_status_; \
  } while (0)
