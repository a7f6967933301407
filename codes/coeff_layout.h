// Prepared coefficients: the per-constant data a shape kernel reads at run time (nibble tables, GFNI matrices, clmul constants).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codes/gf.h"
#include "codes/matrix.h"

namespace ecjit::codes {

// How one coefficient c of GF(2^l) is laid out for a kernel whose coefficients arrive as
// data (ir::KernelDesc::runtime_coeffs, a "shape kernel"). A matrix is prepared row-major:
// coefficient (r, col) at byte (r * cols + col) * coeff_bytes(layout, field). Every layout is
// a pure function of (field, c); preparing costs a few XORs per byte (no field multiply past
// the l products c * X^i).
enum class CoeffLayout : uint8_t {
  // Split nibble tables, 16 bytes each (PSHUFB / VPSHUFB / TBL). GF(2^8): 32 bytes, table 0
  // = c * v, table 1 = c * (v << 4) for v < 16: ISA-L's gf_vect_mul_init layout, so ISA-L's
  // g_tbls (ec_init_tables) is a prepared matrix of this layout. GF(2^16): 8 tables, table
  // 2n + h = byte h of c * (v << 4n), stored in pairs: slot nibble_table_slot(i) holds table
  // i, so the two tables one 256-bit shuffle reads (nibble n in its low lane, nibble n + 2 in
  // its high lane) are 32 contiguous bytes, one load.
  kNibbleTables,
  // GFNI 8x8 bit-matrices (VGF2P8AFFINEQB operands), L = l / 8 byte planes, P = max(L, 2):
  // for each rotation t < L, a pattern of P qwords, qword j = gfni_block_matrix(c, j mod L,
  // (j + t) mod L). GF(2^8): its one matrix twice (16 bytes).
  kGfniMatrices,
  // The constant itself as a little-endian qword (carry-less multiply instructions).
  kClmulConstant,
};

// Bytes one coefficient occupies in `layout` over `field`.
size_t coeff_bytes(CoeffLayout layout, const Field &field);

// Writes coeff_bytes(layout, field) bytes for the field element c (c < 2^l) at `out`.
void prepare_coeff(CoeffLayout layout, const Field &field, uint64_t c, uint8_t *out);

// The m x k matrix M prepared row-major into `out` (resized to rows x cols x coeff_bytes).
void prepare_matrix(CoeffLayout layout, const Field &field, const Matrix &M,
                    std::vector<uint8_t> *out);

// The 8x8 bit-matrix A_{i,j}(c) for VGF2P8AFFINEQB: byte i of c * x restricted to byte j of
// x, i.e. out byte i = A * (in byte j) over GF(2). Row t of the affine instruction's matrix
// is byte 7 - t of the qword (bit b of that byte: input bit b).
uint64_t gfni_block_matrix(const Field &field, uint64_t c, unsigned i, unsigned j);
// The same block for any GF(2)-linear map of symbols given by the images of its input bits:
// images[b] = map(1 << b), read for b in [8j, 8j + 8). gfni_block_matrix(c) is this map for
// x -> c * x; rs-fft's multipliers (a field in Cantor coordinates) use it directly.
uint64_t gfni_block_of_map(const uint64_t *images, unsigned i, unsigned j);

// The 16-entry nibble tables of c, table i at out + 16 i (2 for GF(2^8), 8 for GF(2^16):
// table 2n + h = byte h of c * (v << 4n)). l must be 8 or 16.
void nibble_tables(const Field &field, uint64_t c, uint8_t *out);
// Where kNibbleTables keeps nibble table i of a coefficient: at 16 * slot bytes. GF(2^8): i;
// GF(2^16): tables i and i + 4 side by side (slot 2 (i mod 4) + i / 4).
inline unsigned nibble_table_slot(const Field &field, unsigned i) {
  return field.bits() == 8 ? i : 2 * (i % 4) + i / 4;
}

}  // namespace ecjit::codes
