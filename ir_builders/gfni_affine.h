// gfni: constant multiply as GF(2) affine transforms of bytes (x86 VGF2P8AFFINEQB).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "codes/gf.h"
#include "ir_builders/lowering.h"
#include "ir_builders/target_info.h"

namespace llvm {
class IRBuilderBase;
class Value;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Whether gfni can serve `field` on `target`: x86 with GFNI (128-bit vectors: SSE; 256: AVX;
// 512: AVX-512BW) and vectors of at least 8 symbols (a qword of each byte plane), i.e.
// GF(2^8) and GF(2^16) at every width, GF(2^32) from 256 bits, GF(2^64) at 512 bits.
// Pure function of its arguments; thread-safe.
bool gfni_supported(const codes::Field &field, const TargetInfo &target);

// The 8x8 bit-matrix of y = c * x restricted to input byte j and output byte i of the
// l-bit symbols (bytes little-endian), in VGF2P8AFFINEQB's layout: byte 7 - t of the result
// holds the row of output bit t, bit b of that row is bit 8i + t of c * 2^(8j + b).
// GF(2^8): i = j = 0. Pure; `c` must be in the field.
uint64_t gfni_block_matrix(const codes::Field &field, uint64_t c, unsigned i, unsigned j);

// Building blocks shared with the tiled kernel (tiled_kernel.h). `bytes`: a <B x i8> vector
// of natural symbols, B a multiple of 8L. Returns the L rotations of its transposed layout
// (described below; rotation 0 is the transposition itself, GF(2^8) the vector as is).
std::vector<llvm::Value *> gfni_rotations(llvm::IRBuilderBase &b, llvm::Value *bytes,
                                          unsigned planes);
// The inverse transposition of a <B x i8> accumulator back to natural symbols.
llvm::Value *gfni_untranspose(llvm::IRBuilderBase &b, llvm::Value *acc, unsigned planes);
// llvm::Intrinsic::ID of VGF2P8AFFINEQB at target.vector_bits, or 0 (not_intrinsic).
unsigned gfni_affine_intrinsic(const TargetInfo &target);

// GF(2^8): per product one affine transform, acc ^= affine(x, A(c)), the matrix a splat
// constant (one broadcast memory operand with AVX-512).
// GF(2^l), L = l / 8 bytes per symbol: c * x is an L x L block matrix of 8x8 bit-matrices
// A_ij (gfni_block_matrix). Once per input vector, the symbols' bytes are transposed within
// groups of 8 symbols so that qword g*L + j holds byte j of the group's 8 symbols, and the
// L rotations of the qwords within each group are formed (rotation r puts plane
// (j + r) mod L where plane j was). The affine transform applies its own matrix per qword,
// so the product is L affine transforms,
//   acc ^= XOR_r affine(rot_r(x), M_r),  M_r qword g*L + j = A_{j, (j + r) mod L}(c),
// accumulated in the transposed layout and transposed back once per output vector.
// Products are emitted input by input (InputOrder) so the L rotations of one input are live
// at a time. Values other than the full vector (the scalar tail) go to clmul-shift.
// Errors (llvm::Error): a field or target gfni_supported() rejects, naming both.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_gfni_lowering(const codes::Field &field,
                                                                     const TargetInfo &target);

}  // namespace ecjit::ir
