// split-table: constant multiply as nibble table lookups with the target's byte shuffle (PSHUFB / TBL).
#pragma once

#include <memory>

#include "codes/gf.h"
#include "ir_builders/lowering.h"
#include "ir_builders/target_info.h"

namespace llvm {
template <typename T> class Expected;
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace ecjit::ir {

// The byte shuffle split-table lowers its lookups to, for the target's vector width.
enum class ByteShuffle {
  kNone,      // no usable 16-entry byte table lookup at this width
  kSsse3,     // x86 128-bit: llvm.x86.ssse3.pshuf.b.128
  kAvx2,      // x86 256-bit: llvm.x86.avx2.pshuf.b (per 128-bit lane)
  kAvx512bw,  // x86 512-bit: llvm.x86.avx512.pshuf.b.512 (per 128-bit lane)
  kNeonTbl,   // AArch64 128-bit: llvm.aarch64.neon.tbl1 / tbl2 (v16i8)
};

// The shuffle for target.vector_bits on target.triple (features via has_feature): SSSE3 at
// 128, AVX2 at 256, AVX-512BW at 512 bits on x86; NEON at 128 bits on AArch64; else kNone
// (no vector unit, other architectures). Thread-safe.
ByteShuffle split_table_shuffle(const TargetInfo &target);

// One lookup of 16-entry byte tables: `table` (the shuffle's width, one table repeated in
// every 128-bit lane) indexed by `idx` (values 0..15), with the shuffle's instruction.
// Precondition: shuffle != kNone, table and idx of the shuffle's vector width.
llvm::Value *split_table_lookup(llvm::IRBuilderBase &b, ByteShuffle shuffle, llvm::Value *table, llvm::Value *idx);

// Whether split-table can serve `field` on `target`: GF(2^8) or GF(2^16) and a shuffle.
bool split_table_supported(const codes::Field &field, const TargetInfo &target);

// Whether split-table is the better default than clmul-shift (what "auto" picks): GF(2^8)
// wherever it is supported; GF(2^16) only with AVX-512BW. Measured on RS(10,4), 64 KiB
// shards, Zen 3: GF(2^16) split-table 0.6x clmul-shift with AVX2 since clmul-shift orders its
// terms input by input (before that: 1.45x), 0.6x on SSSE3 (eight lookups per product); on
// NEON (TBL2) llvm-mca puts it behind clmul-shift for Neoverse N1/V1 and Apple M1. The
// AVX-512BW choice predates the clmul-shift change (and was 2x it then on the Xeon).
bool split_table_preferred(const codes::Field &field, const TargetInfo &target);

// GF(2^8), for each constant c: T_lo[v] = c * v, T_hi[v] = c * (v << 4), v in 0..15, as
// vector constants repeated in every 128-bit lane; per input vector x the indices
// x & 0x0F and x >> 4 (the same values for every output, left to CSE), per product
//   acc ^= shuffle(T_lo, x & 0x0F) ^ shuffle(T_hi, x >> 4).
// GF(2^16) (symbols little-endian): x is bitcast to bytes and split once into a plane of
// the symbols' low bytes (first half of the vector) and of their high bytes (second half);
// with nibbles n0..n3 of a symbol, c * x = XOR_k T_k[n_k], T_k[v] = c * (v << 4k), each
// T_k split into its low-byte and high-byte tables. Per product four lookups when one
// shuffle can use a different table per half (AVX2 / AVX-512: per-lane tables; NEON: tbl2
// with the second half's indices offset by 16), eight on SSSE3 (one table per register).
// Per output, the halves are folded and the low/high result bytes interleaved back.
// Values that are not the target's full vector (the scalar tail iL) go to clmul-shift.
// Errors (llvm::Error): a field other than GF(2^8) / GF(2^16), or a target without a
// byte shuffle (split_table_shuffle() == kNone), each naming the field or target.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_split_table_lowering(
    const codes::Field &field, const TargetInfo &target);

}  // namespace ecjit::ir
