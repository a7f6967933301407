// clmul-shift lowering: carry-less multiply by shifts into lo/hi, Barrett reduction per output.
#include "ir_builders/clmul_shift.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

namespace ecjit::ir {
namespace {

class ClmulShiftLowering final : public MultiplyLowering {
 public:
  ClmulShiftLowering(const codes::Field &field, unsigned vector_regs)
      : field_(field), pass_(clmul_shift_pass_outputs(vector_regs)) {}

  // Term by term: input by input, shift by shift, every output of a pass that uses the
  // shift XORs it in next to the others, so each shift dies at once and only the
  // accumulators stay live. Emitted output by output instead, the shifts the outputs share
  // (CSE'd into one value) stay live from the first output to the last and spill: GF(2^16)
  // RS(10,4) on AVX2 had 95 spills at O3.
  std::vector<llvm::Value *> emit_outputs(
      llvm::IRBuilderBase &b, llvm::Type *ty,
      const std::vector<std::vector<Product>> &products) override {
    std::vector<llvm::Value *> values;
    values.reserve(products.size());
    // Integer types (the scalar tail, packed symbols in general-purpose registers) have no
    // registers to spare next to the kernel's pointers: one output per pass (host-sse2
    // GF(2^16): 0.69 GB/s with six, 1.15 with one).
    const size_t pass = ty->isVectorTy() ? pass_ : 1;
    for (size_t first = 0; first < products.size(); first += pass) {
      const size_t count = std::min<size_t>(pass, products.size() - first);
      emit_pass(b, ty, &products[first], count, values);
    }
    return values;
  }

  // The output-by-output interface (other lowerings' fallback): one output per pass.
  void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) override {
    b_ = &b;
    ty_ = ty;
    terms_.clear();
  }
  void accumulate(llvm::Value *d, uint64_t a) override {
    assert(b_ && d->getType() == ty_ && a > 1 && (a & ~field_.mask()) == 0);
    terms_.push_back(Product{d, a});
  }
  llvm::Value *finish_output() override {
    assert(b_);
    std::vector<llvm::Value *> v;
    emit_pass(*b_, ty_, &terms_, 1, v);
    return v[0];
  }

  codes::CostModel cost_model() const override { return strategy_cost_model(Strategy::kClmulShift, field_); }

 private:
  void emit_pass(llvm::IRBuilderBase &b, llvm::Type *ty, const std::vector<Product> *outputs,
                 size_t count, std::vector<llvm::Value *> &values) {
    for (const CarrylessSum &sum : emit_shift_sums(b, field_, ty, outputs, count)) {
      llvm::Value *v = sum.lo ? sum.lo : llvm::Constant::getNullValue(ty);
      // No hi: only bit 0 was ever set, nothing above X^(l-1).
      values.push_back(sum.hi ? barrett_reduce(b, field_, v, sum.hi) : v);
    }
  }

  codes::Field field_;
  unsigned pass_;
  llvm::IRBuilderBase *b_ = nullptr;
  llvm::Type *ty_ = nullptr;
  std::vector<Product> terms_;  // the output begun by begin_output
};

}  // namespace

// At most 64: a pass's output patterns (emit_shift_sums) are 64-bit masks.
unsigned clmul_shift_pass_outputs(unsigned vector_regs) {
  return vector_regs > 4 + 2 ? std::min(64u, (vector_regs - 4) / 2) : 1;
}

std::vector<CarrylessSum> emit_shift_sums(llvm::IRBuilderBase &b, const codes::Field &field,
                                          llvm::Type *ty, const std::vector<Product> *outputs,
                                          size_t count) {
  assert(count <= 64);
  const unsigned l = field.bits();
  // The pass's inputs in order of first use; coeff[j][r]: output r's constant for input j.
  std::vector<llvm::Value *> inputs;
  std::vector<std::vector<uint64_t>> coeff;
  std::unordered_map<llvm::Value *, size_t> index;
  for (size_t r = 0; r < count; ++r)
    for (const Product &p : outputs[r]) {
      assert(p.input->getType() == ty && p.constant != 0 && (p.constant & ~field.mask()) == 0);
      auto [it, added] = index.try_emplace(p.input, inputs.size());
      if (added) {
        inputs.push_back(p.input);
        coeff.emplace_back(count, 0);
      }
      coeff[it->second][r] ^= p.constant;
    }
  // nullptr stands for 0: the first term is used as is, no "xor 0".
  std::vector<CarrylessSum> sums(count);
  auto xor_into = [&](llvm::Value *&acc, llvm::Value *v) { acc = acc ? b.CreateXor(acc, v) : v; };
  for (size_t j = 0; j < inputs.size(); ++j) {
    llvm::Value *d = inputs[j];
    // The bits i of d's constants, grouped by which outputs have them set (the pattern):
    // the shifts of one group are summed once and the sum goes into each output of the
    // pattern, sum(n_p - 1 + |p|) XORs instead of sum(n_p |p|) (dense decode constants
    // over four outputs: about 30% fewer). Groups in order of their lowest bit.
    std::vector<std::pair<uint64_t, std::vector<unsigned>>> groups;
    for (unsigned i = 0; i < l; ++i) {
      uint64_t pattern = 0;
      for (size_t r = 0; r < count; ++r) pattern |= ((coeff[j][r] >> i) & 1) << r;
      if (!pattern) continue;
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const auto &e) { return e.first == pattern; });
      if (g == groups.end()) groups.push_back({pattern, {i}});
      else g->second.push_back(i);
    }
    // Every output builds the group's sum itself, fresh shifts and all: the redundant form of
    // Nešković 2018 (Fig. 5-4), left to LLVM's CSE, which merges the copies standing next
    // to each other. lo takes d << i, hi d >> (l - i) for i > 0.
    for (bool high : {false, true})
      for (const auto &[pattern, bits] : groups)
        for (size_t r = 0; r < count; ++r) {
          if (!((pattern >> r) & 1)) continue;
          llvm::Value *sum = nullptr;
          for (unsigned i : bits) {
            if (high && i == 0) continue;
            xor_into(sum, !high ? (i == 0 ? d : lane_shl(b, d, i, l)) : lane_lshr(b, d, l - i, l));
          }
          if (sum) xor_into(high ? sums[r].hi : sums[r].lo, sum);
        }
  }
  return sums;
}

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

std::unique_ptr<MultiplyLowering> make_clmul_shift_lowering(const codes::Field &field,
                                                            unsigned vector_regs) {
  return std::make_unique<ClmulShiftLowering>(field, vector_regs);
}

}  // namespace ecjit::ir
