// Conversion of llvm::Error into ecjit::Status.
#include "jit/llvm_status.h"

namespace ecjit::jit {

Status to_status(llvm::Error err, StatusCode code, const std::string &context) {
  if (!err) return Status::Ok();
  return Status(code, context + ": " + llvm::toString(std::move(err)));
}

}  // namespace ecjit::jit
