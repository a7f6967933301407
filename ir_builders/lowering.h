// MultiplyLowering: the per-strategy part of a kernel, "acc += constant * input" as IR (internal).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"

namespace llvm {
class IRBuilderBase;
class Type;
class Value;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// One term of an output: constant * input, constant a field element in [1, 2^l).
// In a shape kernel (KernelDesc::runtime_coeffs) the constant is not known: `coeff` points
// at its prepared data (codes::CoeffLayout of the strategy) and `constant` is ignored.
struct Product {
  llvm::Value *input;
  uint64_t constant;
  llvm::Value *coeff = nullptr;
};

// The kernel skeleton (kernel_builder.cpp) owns loops, loads and stores. It asks for the
// outputs of one vector position together, at the builder's insertion point:
//   values = emit_outputs(b, ty, products)
// products[r] lists output r's terms (coefficients 0 already dropped); values[r] must hold,
// symbol by symbol, the field sum of a * x over them (ty's zero for an empty list). ty is
// the skeleton's data type, l = field.bits(): <N x iL> in the vector loops, iL in the scalar
// tail, or, on targets without a vector unit (TargetInfo::vector_bits == 64, l < 64), i64
// holding 64 / l packed symbols (SWAR). Every input has type ty. The lane_* helpers below
// give symbol-wise shifts for all three forms.
//
// The default emit_outputs takes the constants 1 as plain XORs and, for each output with
// another constant, calls, in output order:
//   begin_output(b, ty);  accumulate(x, a) ...;  v = finish_output();
// A lowering that wants another order of the terms (all outputs' uses of one input's shift
// next to each other: clmul-shift) overrides emit_outputs instead. One object serves one
// build_kernel call (not thread-safe); it may keep state between the calls.
class MultiplyLowering {
 public:
  virtual ~MultiplyLowering();
  virtual std::vector<llvm::Value *> emit_outputs(llvm::IRBuilderBase &b, llvm::Type *ty,
                                                  const std::vector<std::vector<Product>> &products);
  virtual void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) = 0;
  // constant: a field element in [2, 2^l).
  virtual void accumulate(llvm::Value *input, uint64_t constant) = 0;
  virtual llvm::Value *finish_output() = 0;
  // Shape kernels: the width in bits of the vectors accumulate_data serves (the lowering's
  // full-vector form; never the scalar or packed forms), 0 without a run-time form.
  virtual unsigned runtime_vector_bits() const { return 0; }
  // Whether accumulate_data also takes several such vectors as one value (a vector type of a
  // power-of-two multiple of runtime_vector_bits(), as a shape kernel's unrolled step passes
  // them): each
  // coefficient prepared once, applied to every vector next to each other.
  virtual bool runtime_vector_multiples() const { return false; }
  // acc += c * input for a coefficient known only at run time, its prepared data at `coeff`
  // (an i8 pointer; codes::CoeffLayout runtime_layout(strategy)). Called between
  // begin_output and finish_output, only on vectors of runtime_vector_bits() (or, with
  // runtime_vector_multiples(), of a multiple of it).
  virtual void accumulate_data(llvm::Value *input, llvm::Value *coeff);
  // How the cost of a constant multiply grows with the constant (two-stage kernels run as
  // such only when cheaper under this model, see build_kernel).
  virtual codes::CostModel cost_model() const { return codes::CostModel::kProducts; }
};

// Symbol-wise logical shifts of x (type as above) by `amount` in [1, l): a plain shl / lshr
// for <N x iL> and iL; shift plus an AND mask that drops the bits crossing into the
// neighbouring symbol for packed iW (W > l).
llvm::Value *lane_shl(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l);
llvm::Value *lane_lshr(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l);

// MultiplyLowering::cost_model of a strategy's lowering for `field`, without building one:
// what a decode plan for a kernel of that strategy is optimized for (codes::plan_decode).
// kSetBits for clmul-shift, set bits capped at clmul_mixed_short_bits + 1 for clmul-mixed,
// kProducts for the others (and kAuto).
codes::CostModel strategy_cost_model(Strategy strategy, const codes::Field &field);

// The strategy whose run-time form serves shape kernels of `strategy` (the lowering that
// reads prepared coefficients): split-table and gfni themselves, clmul-insn for clmul-insn and
// clmul-mixed; nullopt for clmul-shift and kAuto (their run-time form is the generic kernel).
std::optional<Strategy> shape_strategy(Strategy strategy);
// The strategy of a field's shape kernels on `target` for JitOptions::strategy `requested`:
// a forced strategy's own run-time form (shape_strategy(requested)) when the target builds it,
// else none - a forced strategy is never replaced; under kAuto, shape_strategy(resolved) (the
// static choice) when it has a shape kernel there, else the first of gfni, split-table and
// clmul-insn that does; nullopt when none does (no vector unit, or no byte shuffle, GFNI or
// carry-less multiply for it).
std::optional<Strategy> pick_shape_strategy(Strategy requested, Strategy resolved, const codes::Field &field,
                                            const TargetInfo &target);
// Outputs one shape kernel of `strategy` should compute at once on `target`: its
// accumulators (per output: 1 for split-table GF(2^8) and gfni, 2 or 4 for split-table
// GF(2^16), 2 / 4 for clmul-insn GF(2^64) / GF(2^32)) within half the vector registers,
// 1..8. More outputs run as several kernels (each reads the inputs again): loaded
// coefficients leave the code generator no constant to fold, and past this it spills
// (clmul-insn GF(2^32), 4 outputs, 256-bit: 144 spills in the loop; 2 outputs: none).
unsigned shape_outputs_per_kernel(Strategy strategy, const codes::Field &field,
                                  const TargetInfo &target);
// Vectors per input one step of a shape kernel's main loop takes (CompileRequest::unroll):
// with 32 or more vector registers (AVX-512) the most of 4 and 2 whose accumulators
// (outputs x accumulators per output x vectors) fit in half of them, so that each loaded
// coefficient serves that many vectors (MultiplyLowering::runtime_vector_multiples); else 1.
// 512-bit GFNI, 10 inputs x 4 outputs, 16 KiB: 2.37 us with 2 vectors as separate copies,
// 1.84 as one value, 1.60 with 4 (the unrolled encoder with constant matrices: 1.30).
unsigned shape_unroll(Strategy strategy, const codes::Field &field, const TargetInfo &target,
                      unsigned outputs);
// Whether a shape kernel of `strategy` can be built for `field` on `target`: a shape
// strategy whose lowering exists there and takes run-time coefficients in full vectors.
bool shape_kernel_supported(Strategy strategy, const codes::Field &field, const TargetInfo &target);

// The lowering for a concrete strategy (kAuto must be resolved by the caller first). Fails
// with an llvm::Error when the strategy cannot serve this field or target.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_lowering(Strategy strategy,
                                                                const codes::Field &field,
                                                                const TargetInfo &target);

}  // namespace ecjit::ir
