// The multiplier tables of rs-fft schedules: the bytes one run-time multiplier occupies in a
// schedule's table array, one layout that every step kernel reads (split-table nibble lookups
// and GFNI bit-matrices alike). No LLVM.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codes/rs_fft_field.h"

namespace ecjit::sched {

// Bytes of one run-time multiplier (a constant c of the crate's GF(2^16)), one layout for
// every lowering: bytes 0..127 eight 16-entry nibble tables, T_lo[0..3] then T_hi[0..3],
// T_h[q][v] = byte h of c * (v << 4q) (byte shuffles); bytes 128..159 four VGF2P8AFFINEQB
// 8x8 bit-matrices, qword 2i + j = codes::gfni_block_of_map of x -> c * x from input byte j
// to output byte i (GFNI: output plane i = affine(lo, A_i0) ^ affine(hi, A_i1)).
constexpr size_t kFftMulTableBytes = 160;
constexpr size_t kFftGfniOffset = 128;

// The tables of c = exp(log) (codes::fft), written to out[0 .. kFftMulTableBytes).
// log == the field's modulus is c = 1. GF(2^8): T_lo[0] (c * v), T_lo[1] (c * (v << 4)) and
// the one matrix A_00 in their places, every other byte 0. matrices_only: only the GFNI
// bit-matrices (bytes kFftGfniOffset on; the rest left as they are), all a GFNI kernel reads:
// an erasure set's first call makes one per point. Pure; thread-safe (fft_mul_tables.cpp: the
// XOR of c's nibbles' tables, every byte being GF(2)-linear in c).
void fft_mul_tables(uint16_t log, uint8_t *out, codes::fft::Gf gf = codes::fft::Gf::k16,
                    bool matrices_only = false);

}  // namespace ecjit::sched
