// clmul-insn lowering: (V)PCLMULQDQ products summed unreduced, one Barrett reduction per output.
#include "ir_builders/clmul_insn.h"

#include <array>
#include <cassert>
#include <vector>

#include "ir_builders/clmul_shift.h"
#include "ir_builders/input_order.h"
#include "ir_builders/target_features.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsAArch64.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

// The carry-less multiply intrinsic for the target's vector width, or not_intrinsic: x86
// (V)PCLMULQDQ, or AArch64 PMULL (64 x 64 -> 128 bits, the AES extension) at 128 bits.
llvm::Intrinsic::ID clmul_intrinsic(const TargetInfo &target) {
  const llvm::Triple triple(target.triple);
  if (triple.isAArch64())
    return triple.isLittleEndian() && target.vector_bits == 128 && has_feature(target, "aes")
               ? llvm::Intrinsic::aarch64_neon_pmull64
               : llvm::Intrinsic::not_intrinsic;
  if (!triple.isX86()) return llvm::Intrinsic::not_intrinsic;
  switch (target.vector_bits) {
    case 128:
      return has_feature(target, "pclmul") ? llvm::Intrinsic::x86_pclmulqdq
                                           : llvm::Intrinsic::not_intrinsic;
    case 256:
      return has_feature(target, "vpclmulqdq") && has_feature(target, "avx")
                 ? llvm::Intrinsic::x86_pclmulqdq_256
                 : llvm::Intrinsic::not_intrinsic;
    case 512:
      return has_feature(target, "vpclmulqdq") && has_feature(target, "avx512f")
                 ? llvm::Intrinsic::x86_pclmulqdq_512
                 : llvm::Intrinsic::not_intrinsic;
    default:
      return llvm::Intrinsic::not_intrinsic;
  }
}

class ClmulInsnLowering final : public MultiplyLowering {
 public:
  // strategy kClmulInsn: every constant other than 1 by the instruction; kClmulMixed: those
  // with at most clmul_mixed_short_bits set bits by shifts and XORs.
  ClmulInsnLowering(Strategy strategy, const codes::Field &field, llvm::Intrinsic::ID clmul,
                    unsigned vector_bits, unsigned vector_regs)
      : strategy_(strategy), field_(field), clmul_(clmul), qwords_(vector_bits / 64),
        accs_(field.bits() == 64 ? 2 : 4), vector_regs_(vector_regs),
        short_bits_(strategy == Strategy::kClmulMixed ? clmul_mixed_short_bits(field) : 0),
        fallback_(make_clmul_shift_lowering(field, vector_regs)),
        // Accumulators per output; the current input's halves, the constant and two
        // temporaries take about four registers.
        order_(vector_regs > accs_ + 4 ? (vector_regs - 4) / accs_ : 1) {}

  // clmul-mixed: per pass of outputs (clmul-shift's pass size), first the short constants'
  // unreduced sums of every output of the pass (input by input, shift by shift: the shifts of
  // an input are shared across the outputs), then each output's dense constants by the
  // instruction, added to its short sum before the one reduction. clmul-insn: the default
  // (ones as XORs, the rest output by output).
  std::vector<llvm::Value *> emit_outputs(
      llvm::IRBuilderBase &b, llvm::Type *ty,
      const std::vector<std::vector<Product>> &products) override {
    if (short_bits_ == 0) return MultiplyLowering::emit_outputs(b, ty, products);
    if (!is_direct(ty)) return fallback_->emit_outputs(b, ty, products);
    std::vector<llvm::Value *> values;
    values.reserve(products.size());
    const size_t pass = clmul_shift_pass_outputs(vector_regs_);
    for (size_t first = 0; first < products.size(); first += pass) {
      const size_t count = std::min(pass, products.size() - first);
      std::vector<std::vector<Product>> few(count), many(count);
      for (size_t r = 0; r < count; ++r)
        for (const Product &p : products[first + r])
          (is_short(p.constant) ? few : many)[r].push_back(p);
      const std::vector<CarrylessSum> sums = emit_shift_sums(b, field_, ty, few.data(), count);
      for (size_t r = 0; r < count; ++r) {
        begin_output(b, ty);
        for (const Product &p : many[r]) accumulate(p.input, p.constant);
        values.push_back(finish(sums[r]));
      }
    }
    return values;
  }

  codes::CostModel cost_model() const override { return strategy_cost_model(strategy_, field_); }

  void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) override {
    b_ = &b;
    ty_ = ty;
    acc_.fill(nullptr);
    direct_ = is_direct(ty);
    if (!direct_) return fallback_->begin_output(b, ty);
    q_ty_ = llvm::FixedVectorType::get(b.getInt64Ty(), qwords_);
    order_.begin_output(b);
  }

  void accumulate(llvm::Value *x, uint64_t c) override {
    assert(b_ && x->getType() == ty_ && c > 1 && (c & ~field_.mask()) == 0);
    if (!direct_) return fallback_->accumulate(x, c);
    accumulate_constant(x, [&] { return b_->getInt64(c); });
  }

  unsigned runtime_vector_bits() const override { return 64 * qwords_; }

  // codes::CoeffLayout::kClmulConstant at `coeff`: the constant as a qword.
  void accumulate_data(llvm::Value *x, llvm::Value *coeff) override {
    assert(b_ && direct_);
    accumulate_constant(x, [&]() -> llvm::Value * {
      return b_->CreateAlignedLoad(b_->getInt64Ty(), coeff, llvm::Align(1));
    });
  }

  llvm::Value *finish_output() override {
    assert(b_);
    if (!direct_) return fallback_->finish_output();
    return finish(CarrylessSum{});
  }

 private:
  bool is_direct(llvm::Type *ty) const {
    return ty->isVectorTy() && ty->getPrimitiveSizeInBits() == 64 * qwords_;
  }
  bool is_short(uint64_t c) const { return unsigned(__builtin_popcountll(c)) <= short_bits_; }

  // The output begun by begin_output, with `extra` (an unreduced sum in clmul-shift's
  // symbol-order layout, see emit_shift_sums) added before the reduction.
  llvm::Value *finish(const CarrylessSum &extra) {
    auto add = [&](llvm::Value *v, llvm::Value *e) {  // v ^ e as ty_, nullptr standing for 0
      if (v) v = b_->CreateBitCast(v, ty_);
      if (!e) return v;
      e = b_->CreateBitCast(e, ty_);
      return v ? b_->CreateXor(v, e) : e;
    };
    if (!acc_[0]) {
      llvm::Value *lo = add(nullptr, extra.lo);
      if (!lo) lo = llvm::Constant::getNullValue(ty_);
      return extra.hi ? barrett_reduce(*b_, field_, lo, add(nullptr, extra.hi)) : lo;
    }
    const unsigned n = qwords_;  // lanes of q_ty_
    // Interleave two qword vectors lane pair by lane pair: result qword 2g + t is qword
    // 2g + sel of a (t = 0) or of b (t = 1).
    auto pairs = [&](llvm::Value *a, llvm::Value *b, unsigned sel) {
      std::vector<int> mask;
      for (unsigned g = 0; g < n / 2; ++g) {
        mask.push_back(int(2 * g + sel));
        mask.push_back(int(n + 2 * g + sel));
      }
      return b_->CreateShuffleVector(a, b, mask);
    };
    if (field_.bits() == 64) {
      // acc_[h], lane g: the 128-bit sum of symbol 2g + h, (low qword, high qword).
      llvm::Value *lo = add(pairs(acc_[0], acc_[1], 0), extra.lo);
      llvm::Value *hi = add(pairs(acc_[0], acc_[1], 1), extra.hi);
      return barrett_reduce(*b_, field_, lo, hi);
    }
    // GF(2^32): acc_[2s + h], lane g, low qword: the 63-bit sum of symbol 4g + 2h + s.
    // e / o: qwords holding the sums of the even / odd symbols in symbol order.
    llvm::Value *e = pairs(acc_[0], acc_[1], 0);
    llvm::Value *o = pairs(acc_[2], acc_[3], 0);
    auto *d_ty = llvm::FixedVectorType::get(b_->getInt32Ty(), 2 * n);
    llvm::Value *ed = b_->CreateBitCast(e, d_ty), *od = b_->CreateBitCast(o, d_ty);
    std::vector<int> lo_mask, hi_mask;
    for (unsigned i = 0; i < n; ++i) {  // dword 2i / 2i + 1 of e and o: low / high halves
      lo_mask.push_back(int(2 * i));
      lo_mask.push_back(int(2 * n + 2 * i));
      hi_mask.push_back(int(2 * i + 1));
      hi_mask.push_back(int(2 * n + 2 * i + 1));
    }
    llvm::Value *lo = add(b_->CreateShuffleVector(ed, od, lo_mask), extra.lo);
    llvm::Value *hi = add(b_->CreateShuffleVector(ed, od, hi_mask), extra.hi);
    return barrett_reduce(*b_, field_, lo, hi);
  }

  // acc += c * x for the i64 value constant() (a constant, or loaded where the product is
  // placed).
  void accumulate_constant(llvm::Value *x, llvm::function_ref<llvm::Value *()> constant) {
    llvm::IRBuilderBase::InsertPointGuard guard(*b_);
    order_.place(*b_, x, {acc_[0], acc_[1], acc_[2], acc_[3]});
    llvm::Value *c = constant();
    const std::vector<llvm::Value *> &src = order_.derived(x, [&] { return sources(x); });
    // acc_[2s + h]: products of source s with the low (h = 0) / high (h = 1) qword of each
    // 128-bit lane.
    for (unsigned s = 0; s < src.size(); ++s)
      for (unsigned h = 0; h < 2; ++h) {
        llvm::Value *p = multiply(src[s], c, h);
        llvm::Value *&a = acc_[2 * s + h];
        a = a ? b_->CreateXor(a, p) : p;
      }
    order_.end_group(*b_, x);
  }

  // The 128-bit products of qword h of every 128-bit lane of `src` with c (i64), as qwords.
  llvm::Value *multiply(llvm::Value *src, llvm::Value *c, unsigned h) {
    if (clmul_ != llvm::Intrinsic::aarch64_neon_pmull64)
      return b_->CreateIntrinsic(clmul_, {}, {src, b_->CreateVectorSplat(qwords_, c), b_->getInt8(h)});
    // AArch64: one 128-bit lane; PMULL (h = 0) / PMULL2 (h = 1) of the lane's qword h.
    llvm::Value *p = b_->CreateIntrinsic(clmul_, {}, {b_->CreateExtractElement(src, uint64_t(h)), c});
    return b_->CreateBitCast(p, q_ty_);
  }

  // The multiplier inputs of x as qwords: GF(2^64) x itself; GF(2^32) its even symbols and
  // its odd symbols, each zero-extended to 64 bits.
  std::vector<llvm::Value *> sources(llvm::Value *x) {
    llvm::Value *q = b_->CreateBitCast(x, q_ty_);
    if (field_.bits() == 64) return {q};
    return {b_->CreateAnd(q, llvm::ConstantInt::get(q_ty_, 0xFFFFFFFFull)),
            b_->CreateLShr(q, llvm::ConstantInt::get(q_ty_, 32))};
  }

  Strategy strategy_;
  codes::Field field_;
  llvm::Intrinsic::ID clmul_;
  unsigned qwords_;  // 64-bit lanes per vector
  unsigned accs_;    // accumulators per output
  unsigned vector_regs_;
  unsigned short_bits_;  // 0 for clmul-insn, see the constructor
  std::unique_ptr<MultiplyLowering> fallback_;
  InputOrder order_;
  llvm::IRBuilderBase *b_ = nullptr;
  llvm::Type *ty_ = nullptr;
  llvm::Type *q_ty_ = nullptr;
  bool direct_ = false;
  std::array<llvm::Value *, 4> acc_ = {};  // nullptr stands for 0
};

}  // namespace

bool clmul_insn_supported(const codes::Field &field, const TargetInfo &target) {
  return (field.bits() == 32 || field.bits() == 64) &&
         clmul_intrinsic(target) != llvm::Intrinsic::not_intrinsic;
}

namespace {

// clmul-insn or clmul-mixed for `field` on `target`, or why not.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_clmul_lowering(Strategy strategy,
                                                                      const codes::Field &field,
                                                                      const TargetInfo &target) {
  const char *name = strategy_name(strategy);
  if (field.bits() != 32 && field.bits() != 64)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "strategy '%s' serves GF(2^32) and GF(2^64), not "
                                   "GF(2^%u); use gfni, split-table or clmul-shift",
                                   name, field.bits());
  const llvm::Intrinsic::ID clmul = clmul_intrinsic(target);
  if (clmul == llvm::Intrinsic::not_intrinsic)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "strategy '%s' needs x86 PCLMULQDQ at 128 bits or VPCLMULQDQ at 256 / 512 "
        "bits, or AArch64 PMULL (+aes); target '%s' (cpu '%s', %u-bit vectors) has none; use "
        "clmul-shift",
        name, target.triple.c_str(), target.cpu.c_str(), target.vector_bits);
  return std::unique_ptr<MultiplyLowering>(std::make_unique<ClmulInsnLowering>(
      strategy, field, clmul, target.vector_bits, target.vector_regs));
}

}  // namespace

unsigned clmul_mixed_short_bits(const codes::Field &field) {
  return field.bits() == 64 ? 8 : 10;
}

llvm::Expected<std::unique_ptr<MultiplyLowering>> make_clmul_insn_lowering(
    const codes::Field &field, const TargetInfo &target) {
  return make_clmul_lowering(Strategy::kClmulInsn, field, target);
}

llvm::Expected<std::unique_ptr<MultiplyLowering>> make_clmul_mixed_lowering(
    const codes::Field &field, const TargetInfo &target) {
  return make_clmul_lowering(Strategy::kClmulMixed, field, target);
}

}  // namespace ecjit::ir
