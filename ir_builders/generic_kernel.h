// build_generic_kernel: a kernel whose coefficient matrix is an argument, for erasure sets unknown at build time.
#pragma once

#include <memory>
#include <string>

#include "codes/gf.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Emits
//   void <symbol>(const uint8_t *coeffs, unsigned rows, unsigned cols,
//                 const uint8_t *const *in, uint8_t *const *out, size_t len)
// computing out[r] = sum_c coeffs[r][c] * in[c] over `field` for r < rows, c < cols, symbol
// by symbol. coeffs holds rows x cols symbols, row-major, each field.bytes() bytes
// little-endian, read at any alignment (no constraint on values: every l-bit value is a
// field element). len is bytes per shard; only the whole symbols of [0, len) are read or
// written (a trailing partial symbol is left untouched), at any alignment. rows == 0 does
// nothing; cols == 0 writes zeros. Outputs are overwritten, never read; they must not overlap
// each other, the inputs or coeffs (inputs may overlap each other).
//
// Lowering (no per-target code): Nešković 2018's clmul-shift with a run-time multiplier.
// For each coefficient a and bit i of it, the input vector shifted left by i (low half) and
// right by l - i (high half) is ANDed with a mask splat from bit i of a and XORed into two
// accumulators; one Barrett reduction by the field's constant polynomial per output vector.
// The main loop ("vloop") runs over whole vectors of the same type build_kernel uses
// (<N x iL>, or symbols packed into an i64 without a vector unit); the remainder shorter
// than a vector runs the same body one symbol at a time ("tail"). Loops over rows and
// columns are run-time loops (the matrix size is an argument).
// Module triple and target attributes come from `target`, as for build_kernel; the module is
// verified. Errors (llvm::Error): empty symbol, a vector width that does not hold whole
// symbols, a big-endian target with symbols wider than a byte, a verifier failure.
// Thread-safe for distinct contexts.
llvm::Expected<std::unique_ptr<llvm::Module>> build_generic_kernel(llvm::LLVMContext &ctx,
                                                                   const codes::Field &field,
                                                                   const TargetInfo &target,
                                                                   const std::string &symbol);

}  // namespace ecjit::ir
