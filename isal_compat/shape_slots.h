// ShapeSlots: the drop-in's shape kernels by (strategy, columns, rows, mode), compiled on the kernel service's background thread on first request.
#pragma once

#include "ir_builders/strategy.h"
#include "isal_compat/jit_plugin_api.h"
#include "jit/kernel_service.h"

namespace ecjit::isal {


// The ready shape kernel for `rows` (1..kShapeRows) outputs and `cols` inputs over GF(2^8)
// with `strategy` (accumulate: out ^= C * in), or null. The first request of a (strategy,
// cols, accumulate) queues the compiles of every rows 1..kShapeRows on the Jit's background
// thread (a caller never waits for LLVM); with `wait` the request compiles the one kernel
// on the calling thread instead (ECJIT_ISAL_COMPILE=shape, for tests). Kernels live as long
// as the process. Thread-safe.
jit::ShapeFn shape_kernel(jit::KernelService &jit, ir::Strategy strategy, int cols, int rows,
                              bool accumulate, bool wait);

// Shape kernels compiled so far.
uint64_t shape_kernels_compiled();

}  // namespace ecjit::isal
