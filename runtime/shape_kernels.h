// Shape kernels of a codec, compiled with its encoder before codec() returns, on two threads where there are two cores.
#pragma once

#include <functional>
#include <vector>

#include "codes/gf.h"
#include "ecjit/status.h"
#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// One shape kernel: `inputs` x `outputs` run-time coefficients; accumulate: out ^= C * in.
struct ShapeRequest {
  unsigned inputs = 0;
  unsigned outputs = 0;
  bool accumulate = false;
};

// Runs `first` (the encoder's compile) and compiles (or loads) every requested shape kernel
// of `field` on the Jit's shape strategy into `shapes` (request order): a work queue served
// by the calling thread and, where the machine has more than one core, a helper. Errors:
// the first failure in that order (`first`'s, then kJitFailure of a shape).
Status compile_with_shapes(JitImpl &jit, const codes::Field &field,
                           const std::vector<ShapeRequest> &requests,
                           const std::function<Status()> &first, std::vector<Kernel> *shapes);

}  // namespace ecjit::runtime
