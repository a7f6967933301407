// Status and Result<T>: how every ecjit call reports success or a specific error, without exceptions.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ecjit {

// Error codes. Stable: tools map them to exit codes and the C API exposes the numbers.
enum class StatusCode : int {
  kOk = 0,
  kInvalidSpec = 1,        // a code description that cannot be parsed or built
  kInvalidArgument = 2,    // a bad argument that is not one of the cases below
  kNullPointer = 3,        // a shard pointer that must be set is null
  kShardCount = 4,         // wrong number of shards / pointers
  kShardSize = 5,          // len is not a multiple of the symbol size (or lengths differ)
  kTooManyErasures = 6,    // more shards missing than the code can rebuild
  kSingular = 7,           // a matrix that must be invertible is not (non-MDS code, bad input)
  kUnsupportedTarget = 8,  // target triple / CPU / features unknown or not runnable here
  kUnsupported = 9,        // a valid request this build cannot serve (field, strategy, ...)
  kJitFailure = 10,        // LLVM could not build, optimize or compile a kernel
  kInternal = 11,          // a broken invariant; a bug in ecjit
  kIoError = 12,           // a file could not be read, written, locked or renamed
};

// Short stable name of a code, e.g. "kTooManyErasures" -> "too-many-erasures".
const char *status_code_name(StatusCode code);

// The result of an operation: a code and, on failure, a message. An ok Status holds no
// heap memory, so returning one on a hot path never allocates.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  // "ok" or "<code-name>: <message>".
  std::string to_string() const;

  // Prefixes context to the message of a failed status ("parsing spec: ...").
  Status with_context(const std::string &context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a failed Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The status: Ok() when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  T &value() & { assert(ok()); return std::get<T>(v_); }
  const T &value() const & { assert(ok()); return std::get<T>(v_); }
  T &&value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ecjit

// Early return of a failed Status from a function returning Status or Result<T>.
#define ECJIT_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::ecjit::Status _ecjit_st = (expr);        \
    if (!_ecjit_st.ok()) return _ecjit_st;     \
  } while (0)
