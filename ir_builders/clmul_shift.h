// clmul-shift: the lowering of Nešković 2018 (ch. 3.1, 5.2) — shifts and XORs, one Barrett reduction.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "codes/gf.h"
#include "ir_builders/lowering.h"

namespace llvm {
class IRBuilderBase;
class Type;
class Value;
}  // namespace llvm

namespace ecjit::ir {

// For each output: lo = hi = 0; for each input d with constant a and each set bit i of a,
//   lo ^= d << i;  if i > 0: hi ^= d >> (l - i)      (lane-wise, iL lanes: the 2l-bit product;
//                                                     masked per symbol in the packed i64 form)
// then once per output (eq. 3.25) the Barrett reduction of eq. 3.21 on (hi:lo):
//   t = hi ^ M^l(hi x q+_low)  = hi ^ XOR_{j in q+_low, j >= 1} (hi >> (l - j))
//   u = L^l(p* x t)            = XOR_{j in p*} (t << j)
//   result = lo ^ u
// Emitted in the redundant form on purpose: repeated shifts of the same input are left to
// LLVM's CSE (Nešković 2018, Fig. 5-4). The terms are ordered input by input, shift by shift,
// across the outputs of a pass ((vector_regs - 4) / 2 outputs: two accumulators each), so a
// shift is used up where it is made. Works for every field (8, 16, 32, 64) and target.
std::unique_ptr<MultiplyLowering> make_clmul_shift_lowering(const codes::Field &field,
                                                            unsigned vector_regs = 16);

// One output's carry-less sum before the reduction: the low and high l bits of each
// symbol's 2l-bit sum (nullptr stands for 0; no hi when only bit 0 of a constant was set).
struct CarrylessSum {
  llvm::Value *lo = nullptr;
  llvm::Value *hi = nullptr;
};

// The unreduced sums of outputs[0, count) (count <= 64), emitted as above: input by input,
// shift by shift across these outputs. For lowerings that add other products to a sum before
// its one reduction (clmul-mixed). products and ty as for MultiplyLowering::emit_outputs
// (constants 1 allowed: bit 0 is the input itself).
std::vector<CarrylessSum> emit_shift_sums(llvm::IRBuilderBase &b, const codes::Field &field,
                                          llvm::Type *ty, const std::vector<Product> *outputs,
                                          size_t count);

// Outputs per pass (emitted together) with vector_regs vector registers: two accumulators
// per output, about four registers for the input and the shift in flight, at most 64.
unsigned clmul_shift_pass_outputs(unsigned vector_regs);

// The reduction above on its own: lo ^ L^l(p* x (hi ^ M^l(hi x q+_low))) symbol by symbol,
// where (hi:lo) is an unreduced 2l-bit carry-less sum split into its low and high l bits.
// lo and hi have the same type (<N x iL>, iL, or packed iW as for MultiplyLowering).
llvm::Value *barrett_reduce(llvm::IRBuilderBase &b, const codes::Field &field, llvm::Value *lo,
                            llvm::Value *hi);

}  // namespace ecjit::ir
