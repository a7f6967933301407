// MultiplyLowering: the per-strategy part of a kernel, "acc += constant * input" as IR (internal).
#pragma once

#include <cstdint>
#include <memory>

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

// The kernel skeleton (kernel_builder.cpp) owns loops, loads and stores, and handles the
// coefficients 0 (skipped) and 1 (plain XOR) itself. For each output value it needs that has
// at least one other coefficient it calls, at the builder's insertion point:
//   begin_output(b, ty);  accumulate(x, a) ...;  v = finish_output();
// ty is the skeleton's data type, l = field.bits(): <N x iL> in the vector loops, iL in the
// scalar tail, or, on targets without a vector unit (TargetInfo::vector_bits == 64, l < 64),
// i64 holding 64 / l packed symbols (SWAR). Every input x has type ty, and v must have type
// ty and hold, symbol by symbol, the field sum of a * x over all accumulate calls. The
// lane_* helpers below give symbol-wise shifts for all three forms. One object serves one build_kernel call
// (not thread-safe); it may keep per-output state between begin_output and finish_output.
class MultiplyLowering {
 public:
  virtual ~MultiplyLowering();
  virtual void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) = 0;
  // constant: a field element in [2, 2^l).
  virtual void accumulate(llvm::Value *input, uint64_t constant) = 0;
  virtual llvm::Value *finish_output() = 0;
  // How the cost of a constant multiply grows with the constant (two-stage kernels run as
  // such only when cheaper under this model, see build_kernel).
  virtual codes::CostModel cost_model() const { return codes::CostModel::kProducts; }
};

// Symbol-wise logical shifts of x (type as above) by `amount` in [1, l): a plain shl / lshr
// for <N x iL> and iL; shift plus an AND mask that drops the bits crossing into the
// neighbouring symbol for packed iW (W > l).
llvm::Value *lane_shl(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l);
llvm::Value *lane_lshr(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l);

// The lowering for a concrete strategy (kAuto must be resolved by the caller first). Fails
// with an llvm::Error when the strategy cannot serve this field or target.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_lowering(Strategy strategy,
                                                                const codes::Field &field,
                                                                const TargetInfo &target);

}  // namespace ecjit::ir
