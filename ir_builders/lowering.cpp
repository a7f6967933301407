// make_lowering: the one place that maps a Strategy to its MultiplyLowering class.
#include "ir_builders/lowering.h"

#include <algorithm>
#include <cassert>

#include "ir_builders/clmul_insn.h"
#include "ir_builders/clmul_shift.h"
#include "ir_builders/gfni_affine.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/split_table.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/Error.h"

namespace ecjit::ir {

namespace {

// For packed symbols: `pattern` (an l-bit value) repeated in every l-bit lane of ty.
llvm::Constant *lane_splat(llvm::Type *ty, uint64_t pattern, unsigned l) {
  const unsigned width = ty->getIntegerBitWidth();
  llvm::APInt v(width, 0);
  for (unsigned pos = 0; pos < width; pos += l) v.insertBits(llvm::APInt(l, pattern), pos);
  return llvm::ConstantInt::get(ty, v);
}

bool is_packed(llvm::Type *ty, unsigned l) {
  return ty->isIntegerTy() && ty->getIntegerBitWidth() != l;
}

uint64_t low_bits(unsigned n) { return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1; }

}  // namespace

MultiplyLowering::~MultiplyLowering() = default;

void MultiplyLowering::accumulate_data(llvm::Value *, llvm::Value *) {
  assert(false && "accumulate_data on a lowering without a run-time form");
}

std::vector<llvm::Value *> MultiplyLowering::emit_outputs(
    llvm::IRBuilderBase &b, llvm::Type *ty, const std::vector<std::vector<Product>> &products) {
  std::vector<llvm::Value *> values;
  values.reserve(products.size());
  for (const std::vector<Product> &terms : products) {
    llvm::Value *plain = nullptr;  // sum of the inputs with constant 1
    bool lowered = false;
    for (const Product &p : terms) {
      if (p.coeff) {
        if (!lowered) begin_output(b, ty);
        lowered = true;
        accumulate_data(p.input, p.coeff);
        continue;
      }
      if (p.constant == 1) {
        plain = plain ? b.CreateXor(plain, p.input) : p.input;
        continue;
      }
      if (!lowered) begin_output(b, ty);
      lowered = true;
      accumulate(p.input, p.constant);
    }
    llvm::Value *v = lowered ? finish_output() : nullptr;
    if (plain) v = v ? b.CreateXor(v, plain) : plain;
    values.push_back(v ? v : llvm::Constant::getNullValue(ty));
  }
  return values;
}

llvm::Value *lane_shl(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l) {
  llvm::Type *ty = x->getType();
  llvm::Value *s = b.CreateShl(x, llvm::ConstantInt::get(ty, amount));
  if (!is_packed(ty, l)) return s;
  return b.CreateAnd(s, lane_splat(ty, low_bits(l) & ~low_bits(amount), l));
}

llvm::Value *lane_lshr(llvm::IRBuilderBase &b, llvm::Value *x, unsigned amount, unsigned l) {
  llvm::Type *ty = x->getType();
  llvm::Value *s = b.CreateLShr(x, llvm::ConstantInt::get(ty, amount));
  if (!is_packed(ty, l)) return s;
  return b.CreateAnd(s, lane_splat(ty, low_bits(l - amount), l));
}

llvm::Expected<std::unique_ptr<MultiplyLowering>> make_lowering(Strategy strategy,
                                                                const codes::Field &field,
                                                                const TargetInfo &target) {
  switch (strategy) {
    case Strategy::kClmulShift:
      return make_clmul_shift_lowering(field, target.vector_regs);
    case Strategy::kSplitTable:
      return make_split_table_lowering(field, target);
    case Strategy::kGfni:
      return make_gfni_lowering(field, target);
    case Strategy::kClmulInsn:
      return make_clmul_insn_lowering(field, target);
    case Strategy::kClmulMixed:
      return make_clmul_mixed_lowering(field, target);
    case Strategy::kAuto:
      break;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "strategy '%s' has no lowering (resolve 'auto' first)",
                                 strategy_name(strategy));
}

std::optional<Strategy> shape_strategy(Strategy strategy) {
  switch (strategy) {
    case Strategy::kSplitTable:
    case Strategy::kGfni:
    case Strategy::kClmulInsn:
      return strategy;
    case Strategy::kClmulMixed:
      return Strategy::kClmulInsn;
    default:
      return std::nullopt;
  }
}

bool shape_kernel_supported(Strategy strategy, const codes::Field &field, const TargetInfo &target) {
  const std::optional<Strategy> s = shape_strategy(strategy);
  if (!s || *s != strategy) return false;
  auto lowering = make_lowering(strategy, field, target);
  if (!lowering) {
    llvm::consumeError(lowering.takeError());
    return false;
  }
  // The skeleton's vectors (<lanes x iL>; packed symbols at 64 bits and below) must be the
  // lowering's full-vector form.
  const unsigned bits = kernel_vector_lanes(field, target) * field.bits();
  return bits > 64 && bits == (*lowering)->runtime_vector_bits();
}

std::optional<Strategy> pick_shape_strategy(Strategy requested, Strategy resolved, const codes::Field &field,
                                            const TargetInfo &target) {
  const std::optional<Strategy> own = shape_strategy(requested == Strategy::kAuto ? resolved : requested);
  if (own && shape_kernel_supported(*own, field, target)) return own;
  if (requested != Strategy::kAuto) return std::nullopt;
  for (Strategy s : {Strategy::kGfni, Strategy::kSplitTable, Strategy::kClmulInsn})
    if (shape_kernel_supported(s, field, target)) return s;
  return std::nullopt;
}

namespace {

// Vector accumulators one output of a shape kernel keeps: 1 for split-table GF(2^8) and gfni,
// 2 or 4 for split-table GF(2^16), 2 / 4 for clmul-insn GF(2^64) / GF(2^32).
unsigned shape_accumulators(Strategy strategy, const codes::Field &field, const TargetInfo &target) {
  if (strategy == Strategy::kClmulInsn) return field.bits() == 64 ? 2 : 4;
  if (strategy == Strategy::kSplitTable && field.bits() == 16)
    return split_table_shuffle(target) == ByteShuffle::kSsse3 ? 4 : 2;
  return 1;
}

}  // namespace

unsigned shape_outputs_per_kernel(Strategy strategy, const codes::Field &field,
                                  const TargetInfo &target) {
  return std::clamp(target.vector_regs / 2 / shape_accumulators(strategy, field, target), 1u, 8u);
}

unsigned shape_unroll(Strategy strategy, const codes::Field &field, const TargetInfo &target,
                      unsigned outputs) {
  const unsigned accs = outputs * shape_accumulators(strategy, field, target);
  if (target.vector_regs < 32) return 1;
  for (unsigned u : {4u, 2u})
    if (u * accs <= target.vector_regs / 2) return u;
  return 1;
}

codes::CostModel strategy_cost_model(Strategy strategy, const codes::Field &field) {
  switch (strategy) {
    case Strategy::kClmulShift:
      return codes::CostModel::kSetBits;
    case Strategy::kClmulMixed:
      return codes::CostModel{clmul_mixed_short_bits(field) + 1};
    default:
      return codes::CostModel::kProducts;
  }
}

}  // namespace ecjit::ir
