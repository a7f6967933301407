// split-table lowering: nibble tables per constant, looked up with PSHUFB / VPSHUFB / TBL.
#include "ir_builders/split_table.h"

#include <array>
#include <cassert>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "codes/coeff_layout.h"
#include "ir_builders/clmul_shift.h"
#include "ir_builders/input_order.h"
#include "ir_builders/target_features.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAArch64.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

constexpr unsigned kLaneBytes = 16;  // one table: 16 entries, one 128-bit lane

unsigned shuffle_bytes(ByteShuffle s) {
  switch (s) {
    case ByteShuffle::kSsse3:
    case ByteShuffle::kNeonTbl:
      return 16;
    case ByteShuffle::kAvx2:
      return 32;
    case ByteShuffle::kAvx512bw:
      return 64;
    case ByteShuffle::kNone:
      break;
  }
  return 0;
}

// 16-entry tables of one constant (codes::nibble_tables): for GF(2^8) tables[0] = c * v,
// tables[1] = c * (v << 4); for GF(2^16) tables[2k + h] = byte h (0 low, 1 high) of c * (v << 4k).
std::vector<std::array<uint8_t, kLaneBytes>> nibble_tables(const codes::Field &f, uint64_t c) {
  const unsigned bytes = f.bits() / 8;
  std::vector<std::array<uint8_t, kLaneBytes>> t(2 * bytes * bytes);
  codes::nibble_tables(f, c, t[0].data());
  return t;
}

// Whether one lookup can use a different table in each half of the vector.
bool split_lookup(ByteShuffle s) {
  return s == ByteShuffle::kAvx2 || s == ByteShuffle::kAvx512bw || s == ByteShuffle::kNeonTbl;
}

// Outputs whose accumulators stay live at once (InputOrder). Accumulators per output:
// GF(2^8) one; GF(2^16) low and high bytes, each split in two when one shuffle cannot serve
// both halves. About six registers go to the current input's indices, a table and
// temporaries.
unsigned pass_outputs(const codes::Field &field, ByteShuffle shuffle, unsigned vector_regs) {
  const unsigned accs = field.bits() == 8 ? 1 : split_lookup(shuffle) ? 2 : 4;
  return vector_regs > 6 + accs ? (vector_regs - 6) / accs : 1;
}

class SplitTableLowering final : public MultiplyLowering {
 public:
  SplitTableLowering(const codes::Field &field, ByteShuffle shuffle, unsigned vector_regs)
      : field_(field), shuffle_(shuffle), bytes_(shuffle_bytes(shuffle)),
        fallback_(make_clmul_shift_lowering(field)),
        order_(pass_outputs(field, shuffle, vector_regs)) {}

  void begin_output(llvm::IRBuilderBase &b, llvm::Type *ty) override {
    b_ = &b;
    ty_ = ty;
    tables_ = full_vector(ty);
    if (!tables_) return fallback_->begin_output(b, ty);
    byte_ty_ = llvm::FixedVectorType::get(b.getInt8Ty(), bytes_);
    for (llvm::Value *&a : acc_) a = nullptr;
    order_.begin_output(b);
  }

  void accumulate(llvm::Value *x, uint64_t c) override {
    assert(b_ && x->getType() == ty_ && c > 1 && (c & ~field_.mask()) == 0);
    if (!tables_) return fallback_->accumulate(x, c);
    const auto t = nibble_tables(field_, c);
    llvm::LLVMContext &ctx = b_->getContext();
    accumulate_tables(x, [&](unsigned i) -> llvm::Value * {
      return llvm::ConstantDataVector::get(ctx, llvm::ArrayRef<uint8_t>(t[i]));
    });
  }

  unsigned runtime_vector_bits() const override { return 8 * bytes_; }

  // The tables of codes::CoeffLayout::kNibbleTables at `coeff`, loaded where first used. On
  // 256-bit shuffles a GF(2^16) table pair (i, i + 4: one per lane) is one 32-byte load.
  void accumulate_data(llvm::Value *x, llvm::Value *coeff) override {
    assert(b_ && x->getType() == ty_ && tables_);
    auto load = [&](unsigned bytes, unsigned slot) -> llvm::Value * {
      return b_->CreateAlignedLoad(
          llvm::FixedVectorType::get(b_->getInt8Ty(), bytes),
          b_->CreateConstInBoundsGEP1_64(b_->getInt8Ty(), coeff, kLaneBytes * slot), llvm::Align(1));
    };
    const bool pairs = field_.bits() == 16 && bytes_ == 2 * kLaneBytes && split_lookup();
    accumulate_tables(
        x, [&](unsigned i) { return load(kLaneBytes, codes::nibble_table_slot(field_, i)); },
        pairs ? [&](unsigned i) { return load(2 * kLaneBytes, codes::nibble_table_slot(field_, i)); }
              : std::function<llvm::Value *(unsigned)>());
  }

  llvm::Value *finish_output() override {
    assert(b_);
    if (!tables_) return fallback_->finish_output();
    if (field_.bits() == 8) return acc_[0] ? acc_[0] : llvm::Constant::getNullValue(ty_);
    if (!acc_[0]) return llvm::Constant::getNullValue(ty_);
    // acc_[0] / acc_[2]: low / high result bytes, valid in region 0 (and in region 1 when
    // split_lookup(), where the regions are partial sums to fold). acc_[1] / acc_[3]: the
    // region-1 halves when the shuffle cannot split.
    const unsigned half = bytes_ / 2;
    llvm::Value *lo1 = split_lookup() ? acc_[0] : acc_[1];
    llvm::Value *hi1 = split_lookup() ? acc_[2] : acc_[3];
    std::vector<int> first, second, interleave;
    for (unsigned i = 0; i < half; ++i) first.push_back(int(i));
    for (unsigned i = 0; i < half; ++i) first.push_back(int(bytes_ + i));
    for (unsigned i = 0; i < half; ++i) second.push_back(int(half + i));
    for (unsigned i = 0; i < half; ++i) second.push_back(int(bytes_ + half + i));
    // [low bytes | high bytes] = region 0 of (lo, hi) ^ region 1 of (lo1, hi1)
    llvm::Value *e = b_->CreateXor(b_->CreateShuffleVector(acc_[0], acc_[2], first),
                                   b_->CreateShuffleVector(lo1, hi1, second));
    for (unsigned j = 0; j < half; ++j) {
      interleave.push_back(int(j));
      interleave.push_back(int(half + j));
    }
    return b_->CreateBitCast(b_->CreateShuffleVector(e, interleave), ty_);
  }

 private:
  struct Nibbles {
    llvm::Value *lo, *hi;
  };

  bool split_lookup() const { return ecjit::ir::split_lookup(shuffle_); }

  bool full_vector(llvm::Type *ty) const {
    auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty);
    return vty && vty->getPrimitiveSizeInBits() == 8 * bytes_ &&
           vty->getScalarSizeInBits() == field_.bits();
  }

  // acc += c * x with table(i) the <16 x i8> nibble table i of c (nibble_tables order) and,
  // when given, pair(i) tables i and i + 4 as one vector of this shuffle's width (GF(2^16)
  // with split lookups: region 0 reads table i, region 1 table i + 4).
  void accumulate_tables(llvm::Value *x, llvm::function_ref<llvm::Value *(unsigned)> table,
                         const std::function<llvm::Value *(unsigned)> &pair = {}) {
    llvm::IRBuilderBase::InsertPointGuard guard(*b_);
    order_.place(*b_, x, {acc_[0], acc_[1], acc_[2], acc_[3]});
    const Nibbles n = nibbles(x);
    if (field_.bits() == 8) {
      llvm::Value *t0 = table(0), *t1 = table(1);
      xor_into(acc_[0], b_->CreateXor(lookup(t0, t0, n.lo), lookup(t1, t1, n.hi)));
      order_.end_group(*b_, x);
      return;
    }
    // GF(2^16): region 0 of the plane vector holds low bytes (nibbles n0, n1), region 1
    // high bytes (n2, n3). table(2k + h): byte h of the products of nibble k.
    if (pair) {  // one shuffle per table pair, as loaded
      for (unsigned h = 0; h < 2; ++h)
        xor_into(acc_[2 * h], b_->CreateXor(shuffle(pair(0 + h), n.lo), shuffle(pair(2 + h), n.hi)));
      order_.end_group(*b_, x);
      return;
    }
    llvm::Value *t[8];
    for (unsigned i = 0; i < 8; ++i) t[i] = table(i);
    for (unsigned h = 0; h < 2; ++h) {
      if (split_lookup()) {
        // One table per region in one shuffle: region 0 sums n0/n1 terms, region 1 n2/n3.
        llvm::Value *p = b_->CreateXor(lookup(t[0 + h], t[4 + h], n.lo),
                                       lookup(t[2 + h], t[6 + h], n.hi));
        xor_into(acc_[2 * h], p);
      } else {
        // One table per shuffle: region 0 of the first pair and region 1 of the second are
        // the valid halves; the others are discarded in finish_output.
        xor_into(acc_[2 * h], b_->CreateXor(lookup(t[0 + h], t[0 + h], n.lo),
                                            lookup(t[2 + h], t[2 + h], n.hi)));
        xor_into(acc_[2 * h + 1], b_->CreateXor(lookup(t[4 + h], t[4 + h], n.lo),
                                                lookup(t[6 + h], t[6 + h], n.hi)));
      }
    }
    order_.end_group(*b_, x);
  }

  // The table indices of input x (its byte planes for GF(2^16)), computed once per block.
  // The first product of x computes them; every later one is placed after it.
  Nibbles nibbles(llvm::Value *x) {
    const std::vector<llvm::Value *> &n = order_.derived(x, [&] {
      const Nibbles v = field_.bits() == 8 ? nibble_indices(x) : nibble_indices(planes(x));
      return std::vector<llvm::Value *>{v.lo, v.hi};
    });
    return Nibbles{n[0], n[1]};
  }

  // GF(2^16): the symbols' low bytes in the first half of the vector, high bytes after.
  llvm::Value *planes(llvm::Value *x) {
    llvm::Value *bytes = b_->CreateBitCast(x, byte_ty_);
    std::vector<int> mask;
    for (unsigned h = 0; h < 2; ++h)
      for (unsigned j = 0; j < bytes_ / 2; ++j) mask.push_back(int(2 * j + h));
    return b_->CreateShuffleVector(bytes, mask);
  }

  // Table indices: low and high nibble of every byte. TBL2 reads region 1 from its second
  // table register, so there the indices of region 1 are offset by 16.
  Nibbles nibble_indices(llvm::Value *v) {
    llvm::Type *ty = v->getType();
    Nibbles n{b_->CreateAnd(v, llvm::ConstantInt::get(ty, 0x0F)),
              b_->CreateLShr(v, llvm::ConstantInt::get(ty, 4))};
    if (field_.bits() == 16 && shuffle_ == ByteShuffle::kNeonTbl) {
      std::vector<uint8_t> offset(bytes_, 0);
      for (unsigned i = bytes_ / 2; i < bytes_; ++i) offset[i] = kLaneBytes;
      llvm::Constant *off = llvm::ConstantDataVector::get(b_->getContext(), offset);
      n.lo = b_->CreateOr(n.lo, off);
      n.hi = b_->CreateOr(n.hi, off);
    }
    return n;
  }

  // shuffle(table, idx): table `t0` (<16 x i8>) in region 0 (first half) and `t1` in
  // region 1, each repeated per 128-bit lane. Only AVX2 / AVX-512 / NEON may be given
  // t0 != t1. Constant tables fold into one constant vector; loaded ones become a broadcast.
  llvm::Value *lookup(llvm::Value *t0, llvm::Value *t1, llvm::Value *idx) {
    if (shuffle_ == ByteShuffle::kNeonTbl) {
      if (t0 == t1)
        return b_->CreateIntrinsic(llvm::Intrinsic::aarch64_neon_tbl1, {byte_ty_}, {t0, idx});
      return b_->CreateIntrinsic(llvm::Intrinsic::aarch64_neon_tbl2, {byte_ty_}, {t0, t1, idx});
    }
    std::vector<int> mask(bytes_);
    for (unsigned i = 0; i < bytes_; ++i)
      mask[i] = int(i % kLaneBytes + (i < bytes_ / 2 ? 0 : kLaneBytes));
    return shuffle(b_->CreateShuffleVector(t0, t1, mask), idx);
  }

  // x86: PSHUFB of a whole table vector (this shuffle's width) by idx, lane by lane.
  llvm::Value *shuffle(llvm::Value *table, llvm::Value *idx) { return split_table_lookup(*b_, shuffle_, table, idx); }

  void xor_into(llvm::Value *&acc, llvm::Value *v) { acc = acc ? b_->CreateXor(acc, v) : v; }

  codes::Field field_;
  ByteShuffle shuffle_;
  unsigned bytes_;  // vector bytes the shuffle works on
  std::unique_ptr<MultiplyLowering> fallback_;
  llvm::IRBuilderBase *b_ = nullptr;
  llvm::Type *ty_ = nullptr;
  llvm::Type *byte_ty_ = nullptr;
  bool tables_ = false;                     // this output uses tables (else fallback_)
  std::array<llvm::Value *, 4> acc_ = {};   // nullptr stands for 0
  InputOrder order_;                        // products input by input; indices per input
};

}  // namespace

llvm::Value *split_table_lookup(llvm::IRBuilderBase &b, ByteShuffle shuffle, llvm::Value *table, llvm::Value *idx) {
  if (shuffle == ByteShuffle::kNeonTbl)
    return b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_tbl1, {table->getType()}, {table, idx});
  llvm::Intrinsic::ID id = llvm::Intrinsic::x86_ssse3_pshuf_b_128;
  if (shuffle == ByteShuffle::kAvx2) id = llvm::Intrinsic::x86_avx2_pshuf_b;
  if (shuffle == ByteShuffle::kAvx512bw) id = llvm::Intrinsic::x86_avx512_pshuf_b_512;
  return b.CreateIntrinsic(id, {}, {table, idx});
}

ByteShuffle split_table_shuffle(const TargetInfo &target) {
  const llvm::Triple triple(target.triple);
  if (triple.isX86()) {
    switch (target.vector_bits) {
      case 128:
        return has_feature(target, "ssse3") ? ByteShuffle::kSsse3 : ByteShuffle::kNone;
      case 256:
        return has_feature(target, "avx2") ? ByteShuffle::kAvx2 : ByteShuffle::kNone;
      case 512:
        return has_feature(target, "avx512bw") ? ByteShuffle::kAvx512bw : ByteShuffle::kNone;
      default:
        return ByteShuffle::kNone;
    }
  }
  if (triple.isAArch64() && triple.isLittleEndian() && target.vector_bits == 128 &&
      has_feature(target, "neon"))
    return ByteShuffle::kNeonTbl;
  return ByteShuffle::kNone;
}

bool split_table_supported(const codes::Field &field, const TargetInfo &target) {
  return (field.bits() == 8 || field.bits() == 16) &&
         split_table_shuffle(target) != ByteShuffle::kNone;
}

bool split_table_preferred(const codes::Field &field, const TargetInfo &target) {
  const ByteShuffle s = split_table_shuffle(target);
  if (field.bits() == 8) return s != ByteShuffle::kNone;
  return field.bits() == 16 && s == ByteShuffle::kAvx512bw;
}

llvm::Expected<std::unique_ptr<MultiplyLowering>> make_split_table_lowering(
    const codes::Field &field, const TargetInfo &target) {
  if (field.bits() != 8 && field.bits() != 16)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "strategy 'split-table' serves GF(2^8) and GF(2^16), not "
                                   "GF(2^%u); use clmul-shift",
                                   field.bits());
  const ByteShuffle shuffle = split_table_shuffle(target);
  if (shuffle == ByteShuffle::kNone)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "strategy 'split-table' needs a byte shuffle (x86 SSSE3 at 128 bits, AVX2 at 256, "
        "AVX-512BW at 512, or AArch64 NEON); target '%s' (cpu '%s', %u-bit vectors) has "
        "none; use clmul-shift",
        target.triple.c_str(), target.cpu.c_str(), target.vector_bits);
  return std::unique_ptr<MultiplyLowering>(
      std::make_unique<SplitTableLowering>(field, shuffle, target.vector_regs));
}

}  // namespace ecjit::ir
