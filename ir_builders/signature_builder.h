// The OutputMode::kSignature kernel of build_kernel: algebraic signature lanes (internal).
#pragma once

#include "ir_builders/kernel_builder.h"
#include "ir_builders/lowering.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace ecjit::ir {

// Emits desc.symbol into `mod` with the kernel ABI: in[0] is a shard of `len` bytes, out[0]
// receives desc.coeffs.rows x vector_lanes symbols, component-major (layout and meaning in
// kernel_builder.h, OutputMode::kSignature). desc is validated by build_kernel (coefficients
// in the field, nonzero, one column). Nešković 2018, ch. 2.4, eq. 2.34, evaluated by Horner's
// rule per lane with the constant alpha_i^N: one constant multiply (through `lowering`) and
// one XOR per vector and component, latency-bound per component, so the components form
// independent chains.
void emit_signature_kernel(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target,
                           MultiplyLowering &lowering, unsigned vector_lanes);

}  // namespace ecjit::ir
