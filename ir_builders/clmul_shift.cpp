// clmul-shift lowering: carry-less multiply by shifts into lo/hi, Barrett reduction per output.
#include "ir_builders/clmul_shift.h"

#include <cassert>

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

namespace ecjit::ir {
namespace {

class ClmulShiftLowering final : public MultiplyLowering {
 public:
  explicit ClmulShiftLowering(const codes::Field &field) : field_(field) {}

  void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) override {
    b_ = &b;
    ty_ = ty;
    lo_ = nullptr;  // nullptr stands for 0: the first term is used as is, no "xor 0"
    hi_ = nullptr;
  }

  void accumulate(llvm::Value *d, uint64_t a) override {
    assert(b_ && d->getType() == ty_ && a > 1 && (a & ~field_.mask()) == 0);
    const unsigned l = field_.bits();
    for (uint64_t bits = a; bits != 0; bits &= bits - 1) {
      const unsigned i = unsigned(__builtin_ctzll(bits));
      lo_ = xor_into(lo_, i == 0 ? d : lane_shl(*b_, d, i, l));
      if (i > 0) hi_ = xor_into(hi_, lane_lshr(*b_, d, l - i, l));
    }
  }

  codes::CostModel cost_model() const override { return codes::CostModel::kSetBits; }

  llvm::Value *finish_output() override {
    assert(b_);
    llvm::Value *lo = lo_ ? lo_ : llvm::Constant::getNullValue(ty_);
    if (!hi_) return lo;  // only bit 0 was ever set: nothing above X^(l-1)
    return barrett_reduce(*b_, field_, lo, hi_);
  }

 private:
  llvm::Value *xor_into(llvm::Value *acc, llvm::Value *v) {
    return acc ? b_->CreateXor(acc, v) : v;
  }

  codes::Field field_;
  llvm::IRBuilderBase *b_ = nullptr;
  llvm::Type *ty_ = nullptr;
  llvm::Value *lo_ = nullptr;
  llvm::Value *hi_ = nullptr;
};

}  // namespace

llvm::Value *barrett_reduce(llvm::IRBuilderBase &b, const codes::Field &field, llvm::Value *lo,
                            llvm::Value *hi) {
  const unsigned l = field.bits();
  // t = M^l(c_dag x q+): the X^l term of q+ gives c_dag itself, bit j >= 1 of q+_low gives
  // the upper half of c_dag << j, i.e. c_dag >> (l - j); bit 0 has no upper half.
  llvm::Value *t = hi;
  for (uint64_t bits = field.qplus_low() & ~uint64_t(1); bits != 0; bits &= bits - 1) {
    const unsigned j = unsigned(__builtin_ctzll(bits));
    t = b.CreateXor(t, lane_lshr(b, hi, l - j, l));
  }
  // u = L^l(p* x t): the lane width truncates each t << j to l bits.
  llvm::Value *u = nullptr;
  for (uint64_t bits = field.poly(); bits != 0; bits &= bits - 1) {
    const unsigned j = unsigned(__builtin_ctzll(bits));
    llvm::Value *term = j == 0 ? t : lane_shl(b, t, j, l);
    u = u ? b.CreateXor(u, term) : term;
  }
  return u ? b.CreateXor(lo, u) : lo;
}

std::unique_ptr<MultiplyLowering> make_clmul_shift_lowering(const codes::Field &field) {
  return std::make_unique<ClmulShiftLowering>(field);
}

}  // namespace ecjit::ir
