// build_tiled_kernel: wide codes with their coefficients as data, so code size and compile time stay bounded.
#pragma once

#include <memory>

#include "ir_builders/kernel_desc.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Whether build_kernel emits `desc` tiled rather than fully unrolled: a plain overwrite
// kernel (encode / decode) with more than options.max_unrolled_products products, counted
// as coefficients other than 0 and 1 (in coeffs and the first stage, pre) times (l / 8)^2
// (the byte blocks of one product).
bool kernel_is_tiled(const KernelDesc &desc, const BuildOptions &options);

// The same function and contract as build_kernel (kernel ABI, any len, nothing touched at or
// past len, outputs overwritten, inputs may overlap), with IR whose size does not grow with
// k x m: the coefficients live in a constant table in the module and loops run over them.
// - Strategy::kGfni (x86 GFNI, gfni_supported): outputs in tiles of up to 8 accumulators
//   (a run-time loop over full tiles, one body for the last partial tile) inside the loop
//   over the shard's vectors, so the inputs' vectors stay in cache across tiles; per tile a
//   run-time loop over the inputs loads each input vector, forms its L
//   rotations (gfni_rotations) and applies each output's L affine matrices, loaded from the
//   table as one L-qword pattern broadcast to the vector. The last partial vector overlaps
//   the previous one; a shard shorter than a vector is staged through zeroed stack vectors.
//   The same instruction count per product as the unrolled gfni kernel, plus the loads.
// - Strategy::kSplitTable on GF(2^8) with a byte shuffle (split_table_shuffle): the same
//   loops, each coefficient's two 16-byte nibble tables loaded and repeated per 128-bit lane,
//   per input its low and high nibbles, per product two shuffles (PSHUFB / TBL) and an XOR:
//   the wide codes of CPUs without GFNI at the unrolled split-table kernels' cost per product.
// - any other strategy: build_generic_kernel's run-time-coefficient clmul-shift kernel,
//   called with the coefficient table by a wrapper of the kernel ABI (portable, slower).
// KernelDesc::streaming_stores is ignored (ordinary stores meet its contract too). A desc
// with a first stage (KernelDesc::pre) is built as its composed one-stage map,
// codes::compose_stages(field, pre, coeffs): the same function with the direct products
// (the tiled loops walk one coefficient table; only decoders past the unroll limit lose the
// two-stage saving).
// Errors (llvm::Error): as build_kernel, and a desc that kernel_is_tiled rejects.
llvm::Expected<std::unique_ptr<llvm::Module>> build_tiled_kernel(llvm::LLVMContext &ctx,
                                                                 const KernelDesc &desc,
                                                                 const TargetInfo &target,
                                                                 Strategy strategy);

}  // namespace ecjit::ir
