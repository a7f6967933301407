// gfni lowering: one VGF2P8AFFINEQB per GF(2^8) product; wider fields as byte-plane blocks.
#include "ir_builders/gfni_affine.h"

#include "codes/coeff_layout.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "ir_builders/clmul_shift.h"
#include "ir_builders/input_order.h"
#include "ir_builders/target_features.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

// The affine intrinsic for a vector width in bits, or not_intrinsic when the target lacks it.
llvm::Intrinsic::ID affine_intrinsic(const TargetInfo &target) {
  if (!llvm::Triple(target.triple).isX86() || !has_feature(target, "gfni"))
    return llvm::Intrinsic::not_intrinsic;
  switch (target.vector_bits) {
    case 128:
      return llvm::Intrinsic::x86_vgf2p8affineqb_128;
    case 256:
      return has_feature(target, "avx") ? llvm::Intrinsic::x86_vgf2p8affineqb_256
                                        : llvm::Intrinsic::not_intrinsic;
    case 512:
      return has_feature(target, "avx512bw") ? llvm::Intrinsic::x86_vgf2p8affineqb_512
                                             : llvm::Intrinsic::not_intrinsic;
    default:
      return llvm::Intrinsic::not_intrinsic;
  }
}

class GfniLowering final : public MultiplyLowering {
 public:
  GfniLowering(const codes::Field &field, llvm::Intrinsic::ID affine, unsigned vector_bits,
               unsigned vector_regs)
      : field_(field), affine_(affine), planes_(field.bits() / 8), bytes_(vector_bits / 8),
        fallback_(make_clmul_shift_lowering(field)),
        vector_regs_(vector_regs), order_(pass_outputs(1)) {}

  void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) override {
    b_ = &b;
    ty_ = ty;
    acc_.clear();
    const uint64_t bits = ty->isVectorTy() ? uint64_t(ty->getPrimitiveSizeInBits()) : 0;
    direct_ = bits && bits % (8 * bytes_) == 0;
    if (!direct_) return fallback_->begin_output(b, ty);
    const unsigned parts = unsigned(bits / (8 * bytes_));
    assert((parts & (parts - 1)) == 0 && "finish_output joins the vectors pairwise");
    if (parts != parts_) {  // a new width: a new placement (its accumulators per output)
      parts_ = parts;
      order_ = InputOrder(pass_outputs(parts));
    }
    byte_ty_ = llvm::FixedVectorType::get(b.getInt8Ty(), bytes_);
    order_.begin_output(b);
  }

  void accumulate(llvm::Value *x, uint64_t c) override {
    assert(b_ && x->getType() == ty_ && c > 1 && (c & ~field_.mask()) == 0);
    if (!direct_) return fallback_->accumulate(x, c);
    accumulate_matrices(x, [&](unsigned r) { return matrix(c, r); });
  }

  unsigned runtime_vector_bits() const override { return 8 * bytes_; }
  bool runtime_vector_multiples() const override { return true; }

  // codes::CoeffLayout::kGfniMatrices at `coeff`: per rotation a pattern of P qwords,
  // broadcast to the vector (its own load, never an EVEX {1to8} operand: see tiled_kernel).
  void accumulate_data(llvm::Value *x, llvm::Value *coeff) override {
    assert(b_ && direct_);
    const unsigned pattern = std::max(planes_, 2u);
    auto *pattern_ty = llvm::FixedVectorType::get(b_->getInt64Ty(), pattern);
    std::vector<int> splat(bytes_ / 8);
    for (unsigned i = 0; i < splat.size(); ++i) splat[i] = int(i % pattern);
    accumulate_matrices(x, [&](unsigned r) {
      llvm::Value *at = b_->CreateConstInBoundsGEP1_64(b_->getInt8Ty(), coeff, 8ull * r * pattern);
      llvm::Value *pat = b_->CreateAlignedLoad(pattern_ty, at, llvm::Align(1));
      return b_->CreateBitCast(b_->CreateShuffleVector(pat, splat), byte_ty_);
    });
  }

  llvm::Value *finish_output() override {
    assert(b_);
    if (!direct_) return fallback_->finish_output();
    if (acc_.empty()) return llvm::Constant::getNullValue(ty_);
    std::vector<llvm::Value *> parts(acc_.size());
    for (unsigned p = 0; p < parts_; ++p) parts[p] = gfni_untranspose(*b_, acc_[p], planes_);
    // Concatenate the vectors (pairwise: a shuffle of two equal vectors doubles the width).
    while (parts.size() > 1) {
      std::vector<llvm::Value *> joined;
      const unsigned n = unsigned(llvm::cast<llvm::FixedVectorType>(parts[0]->getType())->getNumElements());
      std::vector<int> both(2 * n);
      for (unsigned i = 0; i < 2 * n; ++i) both[i] = int(i);
      for (size_t i = 0; i < parts.size(); i += 2)
        joined.push_back(b_->CreateShuffleVector(parts[i], parts[i + 1], both));
      parts.swap(joined);
    }
    return b_->CreateBitCast(parts[0], ty_);
  }

 private:
  // acc += c * x, matrix(r) the vector of A_{j, (j + r) mod L}(c) patterns (bytes): each
  // matrix made once and applied to every vector of x at once (parts_ of them: a multiple
  // of the vector width, as a shape kernel's unrolled step passes it).
  void accumulate_matrices(llvm::Value *x, llvm::function_ref<llvm::Value *(unsigned)> matrix) {
    llvm::IRBuilderBase::InsertPointGuard guard(*b_);
    order_.place(*b_, x, acc_);
    // Per vector p of x: its planes_ rotations at [p * planes_, (p + 1) * planes_).
    const std::vector<llvm::Value *> &rot = order_.derived(x, [&] { return rotations(x); });
    if (acc_.empty()) acc_.assign(parts_, nullptr);
    for (unsigned r = 0; r < planes_; ++r) {
      llvm::Value *a = matrix(r);
      for (unsigned p = 0; p < parts_; ++p) {
        llvm::Value *prod = b_->CreateIntrinsic(affine_, {}, {rot[p * planes_ + r], a, b_->getInt8(0)});
        acc_[p] = acc_[p] ? b_->CreateXor(acc_[p], prod) : prod;
      }
    }
    order_.end_group(*b_, x);
  }

  std::vector<llvm::Value *> rotations(llvm::Value *x) {
    if (parts_ == 1) return gfni_rotations(*b_, b_->CreateBitCast(x, byte_ty_), planes_);
    llvm::Value *all = b_->CreateBitCast(x, llvm::FixedVectorType::get(b_->getInt8Ty(), parts_ * bytes_));
    std::vector<llvm::Value *> out;
    std::vector<int> part(bytes_);
    for (unsigned p = 0; p < parts_; ++p) {
      for (unsigned i = 0; i < bytes_; ++i) part[i] = int(p * bytes_ + i);
      const std::vector<llvm::Value *> r = gfni_rotations(*b_, b_->CreateShuffleVector(all, part), planes_);
      out.insert(out.end(), r.begin(), r.end());
    }
    return out;
  }

  // Outputs placed together (InputOrder): one accumulator per vector of an output; the
  // current input's rotations, a matrix and a temporary take about planes_ + 2 registers.
  unsigned pass_outputs(unsigned parts) const {
    return vector_regs_ > planes_ + 3 ? std::max(1u, (vector_regs_ - planes_ - 2) / parts) : 1;
  }

  // M_r as bytes: qword g*L + j holds A_{j, (j + r) mod L}(c).
  llvm::Value *matrix(uint64_t c, unsigned r) {
    std::vector<uint64_t> q(bytes_ / 8);
    for (unsigned i = 0; i < q.size(); ++i) {
      const unsigned j = i % planes_;
      q[i] = ir::gfni_block_matrix(field_, c, j, (j + r) % planes_);
    }
    return b_->CreateBitCast(llvm::ConstantDataVector::get(b_->getContext(), q), byte_ty_);
  }

  codes::Field field_;
  llvm::Intrinsic::ID affine_;
  unsigned planes_;  // L: bytes per symbol
  unsigned bytes_;   // bytes per vector
  std::unique_ptr<MultiplyLowering> fallback_;
  unsigned vector_regs_;
  InputOrder order_;  // products input by input; rotations per input
  llvm::IRBuilderBase *b_ = nullptr;
  llvm::Type *ty_ = nullptr;
  llvm::Type *byte_ty_ = nullptr;  // one vector of bytes
  unsigned parts_ = 1;             // vectors in this output's type (direct_)
  bool direct_ = false;            // this output is whole vectors (else fallback_)
  std::vector<llvm::Value *> acc_;  // per vector, transposed layout, bytes; empty stands for 0
};

}  // namespace

namespace {

// Byte index maps of the transposition within groups of 8 symbols (8L bytes): transposed
// byte g*8L + 8j + s is byte j of symbol s, natural byte g*8L + sL + j.
std::vector<int> transpose_mask(unsigned bytes, unsigned planes, bool inverse) {
  const unsigned group = 8 * planes;
  std::vector<int> mask(bytes);
  for (unsigned g = 0; g < bytes; g += group)
    for (unsigned j = 0; j < planes; ++j)
      for (unsigned s = 0; s < 8; ++s) {
        const unsigned transposed = g + 8 * j + s, natural = g + s * planes + j;
        if (inverse) mask[natural] = int(transposed);
        else mask[transposed] = int(natural);
      }
  return mask;
}

unsigned vector_bytes(llvm::Value *v) {
  return unsigned(llvm::cast<llvm::FixedVectorType>(v->getType())->getPrimitiveSizeInBits()) / 8;
}

}  // namespace

std::vector<llvm::Value *> gfni_rotations(llvm::IRBuilderBase &b, llvm::Value *bytes,
                                          unsigned planes) {
  if (planes == 1) return {bytes};
  const unsigned n = vector_bytes(bytes);
  llvm::Value *t = b.CreateShuffleVector(bytes, transpose_mask(n, planes, false));
  llvm::Value *q = b.CreateBitCast(t, llvm::FixedVectorType::get(b.getInt64Ty(), n / 8));
  std::vector<llvm::Value *> out{t};
  for (unsigned r = 1; r < planes; ++r) {
    std::vector<int> mask(n / 8);
    for (unsigned i = 0; i < mask.size(); ++i)
      mask[i] = int(i - i % planes + (i % planes + r) % planes);
    out.push_back(b.CreateBitCast(b.CreateShuffleVector(q, mask), bytes->getType()));
  }
  return out;
}

llvm::Value *gfni_untranspose(llvm::IRBuilderBase &b, llvm::Value *acc, unsigned planes) {
  if (planes == 1) return acc;
  return b.CreateShuffleVector(acc, transpose_mask(vector_bytes(acc), planes, true));
}

unsigned gfni_affine_intrinsic(const TargetInfo &target) { return affine_intrinsic(target); }

uint64_t gfni_block_matrix(const codes::Field &field, uint64_t c, unsigned i, unsigned j) {
  return codes::gfni_block_matrix(field, c, i, j);
}

bool gfni_supported(const codes::Field &field, const TargetInfo &target) {
  return affine_intrinsic(target) != llvm::Intrinsic::not_intrinsic &&
         target.vector_bits >= 8 * field.bits();
}

llvm::Expected<std::unique_ptr<MultiplyLowering>> make_gfni_lowering(const codes::Field &field,
                                                                     const TargetInfo &target) {
  const llvm::Intrinsic::ID affine = affine_intrinsic(target);
  if (affine == llvm::Intrinsic::not_intrinsic)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "strategy 'gfni' needs x86 GFNI (with AVX at 256 bits, AVX-512BW at 512); target '%s' "
        "(cpu '%s', %u-bit vectors) has none; use split-table or clmul-shift",
        target.triple.c_str(), target.cpu.c_str(), target.vector_bits);
  if (!gfni_supported(field, target))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "strategy 'gfni' needs vectors of at least 8 symbols (a qword per byte plane); "
        "GF(2^%u) needs %u-bit vectors, target '%s' has %u; use clmul-shift",
        field.bits(), 8 * field.bits(), target.triple.c_str(), target.vector_bits);
  return std::unique_ptr<MultiplyLowering>(
      std::make_unique<GfniLowering>(field, affine, target.vector_bits, target.vector_regs));
}

}  // namespace ecjit::ir
