// The one place where llvm::Error becomes an ecjit::Status.
#pragma once

#include "ecjit/status.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

// Consumes `err`; returns Ok() for success, otherwise `code` with LLVM's message.
Status to_status(llvm::Error err, StatusCode code, const std::string &context);

}  // namespace ecjit::jit
