// fft_column: one 64-byte column of the crate's rs-fft layout as IR values, and constant multiplies on it (internal to ir_builders/).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "codes/rs_fft_field.h"
#include "ir_builders/target_info.h"

namespace llvm {
class BasicBlock;
class IRBuilderBase;
class Type;
class Value;
}  // namespace llvm

namespace ecjit::ir {

// A column is 64 bytes of a shard: the low bytes of 32 GF(2^16) elements, then their high
// bytes (codes/rs_fft.h's layout); over GF(2^8), 64 elements of a byte each.
constexpr unsigned kFftColumn = 64;
constexpr unsigned kFftPlane = 32;

// How a target multiplies a plane by a constant: a 16-entry byte lookup per nibble, or (x86
// with AVX2 and GFNI) VGF2P8AFFINEQB on 8x8 bit-matrix blocks; none: no rs-fft kernels there.
enum class FftShuffle { kNone, kSsse3, kAvx2, kNeon, kGfni };
FftShuffle fft_shuffle_for(const TargetInfo &target);
// The error text for a target where it is kNone.
std::string fft_unsupported_message(const TargetInfo &target);

// Whether a kGfni target multiplies whole 64-byte columns in one 512-bit vector (AVX-512BW):
// two affine transforms and a swap of the halves per column instead of four on 256-bit
// planes (ColumnEmitter's whole-column mode).
bool fft_whole_column_vectors(const TargetInfo &target);

// One column of one shard or work slot: two <32 x i8> values (null: not yet defined); in
// whole-column mode lo is the <64 x i8> column and hi is null.
struct Planes {
  llvm::Value *lo = nullptr;
  llvm::Value *hi = nullptr;
};

// Emits column arithmetic at the builder's insertion point.
class ColumnEmitter {
 public:
  // whole_columns (kGfni only, fft_whole_column_vectors): Planes hold one 512-bit column.
  // gf: the field of the multipliers (GF(2^8): the planes are two halves of 32 elements).
  ColumnEmitter(llvm::IRBuilderBase &b, FftShuffle shuffle, bool whole_columns = false,
                codes::fft::Gf gf = codes::fft::Gf::k16);
  llvm::Type *plane_type() const { return plane_ty_; }
  llvm::Type *table_type() const { return half_ty_; }  // <16 x i8>: one nibble table
  Planes zero() const;
  Planes xor_(Planes a, Planes c);
  // At the insertion point (the start of a block with two predecessors): a from block `from_a`,
  // c from `from_c`, as PHIs.
  Planes merge(Planes a, llvm::BasicBlock *from_a, Planes c, llvm::BasicBlock *from_c);
  Planes load(llvm::Value *column);           // the column at this byte address
  void store(Planes v, llvm::Value *column);
  // x * c with the tables of c (fft/mul_tables.h's kFftMulTableBytes layout): the eight 16-entry
  // tables T_lo[0..3], T_hi[0..3], eight lookups of x's nibbles; kGfni: entries 0..3 are the
  // four bit-matrices A_00, A_01, A_10, A_11 splat over a plane, four affine transforms
  // (lo' = A_00 lo + A_01 hi, hi' = A_10 lo + A_11 hi); whole columns: entry 0 is
  // [A_00 | A_11] and entry 1 [A_01 | A_10], x times entry 0 plus x with its halves swapped
  // times entry 1. GF(2^8): two lookups per plane (T_lo[0] on the low nibbles, T_lo[1] on the
  // high), or one affine transform by A_00 splat over the plane (the whole column).
  Planes mul(Planes x, const std::array<llvm::Value *, 8> &tables);
  // x[0] * c_0 + ... + x[n-1] * c_{n-1} (n >= 1), the same value as XORing mul()s. Whole
  // columns over GF(2^16): the products by entry 0 summed, and x times entry 1 with its halves
  // swapped (whole_column_tables' entry 2) summed and then swapped - one swap of the halves per
  // sum instead of one per product, for VGF2P8AFFINEQB's port (Emerald Rapids: one a cycle, the
  // swaps and XORs beside it; a three-source matrix step 7.9 -> ~6 cycles a column).
  Planes mul_sum(const Planes *x, const std::array<llvm::Value *, 8> *tables, unsigned n);
  // The tables of a compile-time constant given by its log (codes::fft), as constants.
  std::array<llvm::Value *, 8> constant_tables(uint16_t log);
  // The tables at a byte address (kFftMulTableBytes bytes), loaded (kGfni: only its matrices).
  std::array<llvm::Value *, 8> load_tables(llvm::Value *address);

 private:
  llvm::Value *lookup(llvm::Value *table16, llvm::Value *idx);
  // Whole columns: VGF2P8AFFINEQB of a <64 x i8> column by a matrix column; the column with
  // its two 32-byte halves exchanged.
  llvm::Value *affine_column(llvm::Value *column, llvm::Value *matrix);
  llvm::Value *swap_halves(llvm::Value *column);

  // The whole-column matrices from the four 8x8 blocks (i64 values): [A_00 | A_11], [A_01 |
  // A_10] and (for mul_sum) [A_10 | A_01].
  std::array<llvm::Value *, 8> whole_column_tables(const std::array<llvm::Value *, 4> &blocks);

  llvm::IRBuilderBase &b_;
  FftShuffle shuffle_;
  bool whole_ = false;
  bool gf8_ = false;
  llvm::Type *column_ty_ = nullptr;  // <64 x i8>
  llvm::Type *plane_ty_ = nullptr;
  llvm::Type *half_ty_ = nullptr;
};

}  // namespace ecjit::ir
