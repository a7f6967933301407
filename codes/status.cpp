// Names and formatting of Status values.
#include "ecjit/status.h"

namespace ecjit {

const char *status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidSpec: return "invalid-spec";
    case StatusCode::kInvalidArgument: return "invalid-argument";
    case StatusCode::kNullPointer: return "null-pointer";
    case StatusCode::kShardCount: return "shard-count";
    case StatusCode::kShardSize: return "shard-size";
    case StatusCode::kTooManyErasures: return "too-many-erasures";
    case StatusCode::kSingular: return "singular";
    case StatusCode::kUnsupportedTarget: return "unsupported-target";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kJitFailure: return "jit-failure";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kIoError: return "io-error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string &context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace ecjit
