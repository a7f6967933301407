// fft_column: loads, stores, XORs and constant multiplies (nibble lookups or GFNI affine blocks) of rs-fft columns.
#include "ir_builders/fft_column.h"

#include "fft/mul_tables.h"
#include "ir_builders/target_features.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAArch64.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {

FftShuffle fft_shuffle_for(const TargetInfo &target) {
  const llvm::Triple triple(target.triple);
  if (triple.isX86()) {
    if (target.vector_bits >= 256 && has_feature(target, "avx2") && has_feature(target, "gfni"))
      return FftShuffle::kGfni;
    if (target.vector_bits >= 256 && has_feature(target, "avx2")) return FftShuffle::kAvx2;
    if (target.vector_bits >= 128 && has_feature(target, "ssse3")) return FftShuffle::kSsse3;
    return FftShuffle::kNone;
  }
  if (triple.isAArch64() && triple.isLittleEndian() && target.vector_bits >= 128 &&
      has_feature(target, "neon"))
    return FftShuffle::kNeon;
  return FftShuffle::kNone;
}

std::string fft_unsupported_message(const TargetInfo &target) {
  return "target " + target.triple + " (" + target.cpu + ") has neither GFNI with AVX2 nor a 16-entry byte "
         "shuffle (x86 SSSE3 / AVX2, AArch64 NEON)";
}

bool fft_whole_column_vectors(const TargetInfo &target) {
  return fft_shuffle_for(target) == FftShuffle::kGfni && target.vector_bits >= 512 &&
         has_feature(target, "avx512bw");
}

ColumnEmitter::ColumnEmitter(llvm::IRBuilderBase &b, FftShuffle shuffle, bool whole_columns, codes::fft::Gf gf)
    : b_(b), shuffle_(shuffle), whole_(whole_columns && shuffle == FftShuffle::kGfni), gf8_(gf == codes::fft::Gf::k8) {
  column_ty_ = llvm::FixedVectorType::get(b.getInt8Ty(), kFftColumn);
  plane_ty_ = llvm::FixedVectorType::get(b.getInt8Ty(), kFftPlane);
  half_ty_ = llvm::FixedVectorType::get(b.getInt8Ty(), 16);
}

Planes ColumnEmitter::zero() const {
  if (whole_) return {llvm::Constant::getNullValue(column_ty_), nullptr};
  llvm::Value *z = llvm::Constant::getNullValue(plane_ty_);
  return {z, z};
}

Planes ColumnEmitter::xor_(Planes a, Planes c) {
  if (whole_) return {b_.CreateXor(a.lo, c.lo), nullptr};
  return {b_.CreateXor(a.lo, c.lo), b_.CreateXor(a.hi, c.hi)};
}

Planes ColumnEmitter::merge(Planes a, llvm::BasicBlock *from_a, Planes c, llvm::BasicBlock *from_c) {
  auto one = [&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
    if (!x) return nullptr;
    llvm::PHINode *phi = b_.CreatePHI(x->getType(), 2);
    phi->addIncoming(x, from_a);
    phi->addIncoming(y, from_c);
    return phi;
  };
  return {one(a.lo, c.lo), one(a.hi, c.hi)};
}

Planes ColumnEmitter::load(llvm::Value *column) {
  const llvm::Align one(1);
  if (whole_) return {b_.CreateAlignedLoad(column_ty_, column, one), nullptr};
  return {b_.CreateAlignedLoad(plane_ty_, column, one),
          b_.CreateAlignedLoad(plane_ty_, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), column, kFftPlane), one)};
}

void ColumnEmitter::store(Planes v, llvm::Value *column) {
  const llvm::Align one(1);
  b_.CreateAlignedStore(v.lo, column, one);
  if (!whole_) b_.CreateAlignedStore(v.hi, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), column, kFftPlane), one);
}

std::array<llvm::Value *, 8> ColumnEmitter::whole_column_tables(const std::array<llvm::Value *, 4> &blocks) {
  auto *quads = llvm::FixedVectorType::get(b_.getInt64Ty(), kFftColumn / 8);
  auto pair = [&](llvm::Value *low, llvm::Value *high) {  // low in the first 256 bits, high in the rest
    llvm::Value *v = llvm::PoisonValue::get(quads);
    for (unsigned i = 0; i < kFftColumn / 8; ++i) v = b_.CreateInsertElement(v, i < 4 ? low : high, b_.getInt64(i));
    return b_.CreateBitCast(v, column_ty_);
  };
  std::array<llvm::Value *, 8> t{};
  t[0] = pair(blocks[0], blocks[3]);
  t[1] = pair(blocks[1], blocks[2]);
  t[2] = pair(blocks[2], blocks[1]);  // dead code (no IR left) where only mul() reads t
  return t;
}

llvm::Value *ColumnEmitter::affine_column(llvm::Value *column, llvm::Value *matrix) {
  return b_.CreateIntrinsic(llvm::Intrinsic::x86_vgf2p8affineqb_512, {}, {column, matrix, b_.getInt8(0)});
}

llvm::Value *ColumnEmitter::swap_halves(llvm::Value *column) {
  llvm::SmallVector<int, 64> swap;
  for (unsigned i = 0; i < kFftColumn; ++i) swap.push_back(int((i + kFftPlane) % kFftColumn));
  return b_.CreateShuffleVector(column, swap);
}

Planes ColumnEmitter::mul(Planes x, const std::array<llvm::Value *, 8> &t) {
  if (gf8_) {  // every byte on its own: one matrix (or two nibble tables) for all of them
    if (whole_) return {affine_column(x.lo, t[0]), nullptr};
    auto one = [&](llvm::Value *v) -> llvm::Value * {
      if (shuffle_ == FftShuffle::kGfni)
        return b_.CreateIntrinsic(llvm::Intrinsic::x86_vgf2p8affineqb_256, {}, {v, t[0], b_.getInt8(0)});
      llvm::Value *f = llvm::ConstantInt::get(plane_ty_, 0x0F);
      llvm::Value *four = llvm::ConstantInt::get(plane_ty_, 4);
      return b_.CreateXor(lookup(t[0], b_.CreateAnd(v, f)), lookup(t[1], b_.CreateLShr(v, four)));
    };
    return {one(x.lo), one(x.hi)};
  }
  if (whole_) return {b_.CreateXor(affine_column(x.lo, t[0]), affine_column(swap_halves(x.lo), t[1])), nullptr};
  if (shuffle_ == FftShuffle::kGfni) {
    auto affine = [&](llvm::Value *v, llvm::Value *a) {
      return b_.CreateIntrinsic(llvm::Intrinsic::x86_vgf2p8affineqb_256, {}, {v, a, b_.getInt8(0)});
    };
    return {b_.CreateXor(affine(x.lo, t[0]), affine(x.hi, t[1])), b_.CreateXor(affine(x.lo, t[2]), affine(x.hi, t[3]))};
  }
  llvm::Value *f = llvm::ConstantInt::get(plane_ty_, 0x0F);
  llvm::Value *four = llvm::ConstantInt::get(plane_ty_, 4);
  const std::array<llvm::Value *, 4> nib = {b_.CreateAnd(x.lo, f), b_.CreateLShr(x.lo, four),
                                            b_.CreateAnd(x.hi, f), b_.CreateLShr(x.hi, four)};
  Planes out;
  for (unsigned h = 0; h < 2; ++h) {
    llvm::Value *acc = nullptr;
    for (unsigned q = 0; q < 4; ++q) {
      llvm::Value *v = lookup(t[4 * h + q], nib[q]);
      acc = acc ? b_.CreateXor(acc, v) : v;
    }
    (h ? out.hi : out.lo) = acc;
  }
  return out;
}

Planes ColumnEmitter::mul_sum(const Planes *x, const std::array<llvm::Value *, 8> *t, unsigned n) {
  if (!whole_ || gf8_) {
    Planes sum = mul(x[0], t[0]);
    for (unsigned j = 1; j < n; ++j) sum = xor_(sum, mul(x[j], t[j]));
    return sum;
  }
  // [A_00 lo | A_11 hi] summed; [A_10 lo | A_01 hi] summed, whose halves swapped are the
  // cross terms [A_01 hi | A_10 lo].
  llvm::Value *direct = affine_column(x[0].lo, t[0][0]), *cross = affine_column(x[0].lo, t[0][2]);
  for (unsigned j = 1; j < n; ++j) {
    direct = b_.CreateXor(direct, affine_column(x[j].lo, t[j][0]));
    cross = b_.CreateXor(cross, affine_column(x[j].lo, t[j][2]));
  }
  return {b_.CreateXor(direct, swap_halves(cross)), nullptr};
}

std::array<llvm::Value *, 8> ColumnEmitter::constant_tables(uint16_t log) {
  std::array<uint8_t, sched::kFftMulTableBytes> bytes;
  sched::fft_mul_tables(log, bytes.data(), gf8_ ? codes::fft::Gf::k8 : codes::fft::Gf::k16);
  std::array<llvm::Value *, 8> t{};
  if (gf8_ && shuffle_ == FftShuffle::kGfni) {  // A_00 over every qword of a plane or column
    uint64_t a = 0;
    for (unsigned i = 0; i < 8; ++i) a |= uint64_t(bytes[sched::kFftGfniOffset + i]) << (8 * i);
    const std::array<uint64_t, kFftColumn / 8> splat = {a, a, a, a, a, a, a, a};
    t[0] = b_.CreateBitCast(
        llvm::ConstantDataVector::get(b_.getContext(), llvm::ArrayRef<uint64_t>(splat.data(), whole_ ? 8 : 4)),
        whole_ ? column_ty_ : plane_ty_);
    return t;
  }
  if (whole_) {
    std::array<llvm::Value *, 4> blocks;
    for (unsigned q = 0; q < 4; ++q) {
      uint64_t a = 0;
      for (unsigned i = 0; i < 8; ++i) a |= uint64_t(bytes[sched::kFftGfniOffset + 8 * q + i]) << (8 * i);
      blocks[q] = b_.getInt64(a);
    }
    return whole_column_tables(blocks);
  }
  if (shuffle_ == FftShuffle::kGfni) {
    for (unsigned q = 0; q < 4; ++q) {
      uint64_t a = 0;
      for (unsigned i = 0; i < 8; ++i) a |= uint64_t(bytes[sched::kFftGfniOffset + 8 * q + i]) << (8 * i);
      const std::array<uint64_t, kFftPlane / 8> splat = {a, a, a, a};
      t[q] = b_.CreateBitCast(llvm::ConstantDataVector::get(b_.getContext(), llvm::ArrayRef<uint64_t>(splat)),
                              plane_ty_);
    }
    return t;
  }
  for (unsigned i = 0; i < 8; ++i)
    t[i] = llvm::ConstantDataVector::get(b_.getContext(), llvm::ArrayRef<uint8_t>(bytes.data() + 16 * i, 16));
  return t;
}

std::array<llvm::Value *, 8> ColumnEmitter::load_tables(llvm::Value *address) {
  std::array<llvm::Value *, 8> t{};
  if (gf8_ && shuffle_ == FftShuffle::kGfni) {
    llvm::Value *a = b_.CreateAlignedLoad(
        b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), address, sched::kFftGfniOffset), llvm::Align(1));
    t[0] = b_.CreateBitCast(b_.CreateVectorSplat((whole_ ? kFftColumn : kFftPlane) / 8, a), whole_ ? column_ty_ : plane_ty_);
    return t;
  }
  if (shuffle_ == FftShuffle::kGfni) {
    auto *quads = llvm::FixedVectorType::get(b_.getInt64Ty(), kFftPlane / 8);
    std::array<llvm::Value *, 4> blocks;
    for (unsigned q = 0; q < 4; ++q)
      blocks[q] = b_.CreateAlignedLoad(
          b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), address, sched::kFftGfniOffset + 8 * q),
          llvm::Align(1));
    if (whole_) return whole_column_tables(blocks);
    for (unsigned q = 0; q < 4; ++q) {
      llvm::Value *a = blocks[q];
      t[q] = b_.CreateBitCast(b_.CreateVectorSplat(quads->getNumElements(), a), plane_ty_);
    }
    return t;
  }
  for (unsigned i = 0; i < 8; ++i)
    t[i] = b_.CreateAlignedLoad(half_ty_, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), address, 16 * i),
                                llvm::Align(1));
  return t;
}

// table[idx] for each of the 32 indices (all < 16).
llvm::Value *ColumnEmitter::lookup(llvm::Value *table16, llvm::Value *idx) {
  llvm::SmallVector<int, 32> whole;
  for (unsigned i = 0; i < kFftPlane; ++i) whole.push_back(int(i));
  switch (shuffle_) {
    case FftShuffle::kAvx2: {
      llvm::SmallVector<int, 32> twice;
      for (unsigned i = 0; i < kFftPlane; ++i) twice.push_back(int(i % 16));
      llvm::Value *t = b_.CreateShuffleVector(table16, twice);
      return b_.CreateIntrinsic(llvm::Intrinsic::x86_avx2_pshuf_b, {}, {t, idx});
    }
    case FftShuffle::kSsse3:
    case FftShuffle::kNeon: {
      llvm::Value *r[2];
      for (unsigned i = 0; i < 2; ++i) {
        llvm::SmallVector<int, 16> mask;
        for (unsigned j = 0; j < 16; ++j) mask.push_back(int(16 * i + j));
        llvm::Value *part = b_.CreateShuffleVector(idx, mask);
        r[i] = shuffle_ == FftShuffle::kSsse3
                   ? b_.CreateIntrinsic(llvm::Intrinsic::x86_ssse3_pshuf_b_128, {}, {table16, part})
                   : b_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_tbl1, {half_ty_}, {table16, part});
      }
      return b_.CreateShuffleVector(r[0], r[1], whole);
    }
    case FftShuffle::kGfni:  // mul() never looks up
    case FftShuffle::kNone:
      break;
  }
  return nullptr;
}

}  // namespace ecjit::ir
