// build_kernel: lowers a linear map over GF(2^l) into one LLVM function with the kernel ABI.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/kernel_desc.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Symbols per vector of the kernels build_kernel emits for `field` on `target` (the lanes N
// of the signature layout below).
unsigned kernel_vector_lanes(const codes::Field &field, const TargetInfo &target);

// The shortest nonzero len a kernel of `desc` on `target` may be called with: one vector's
// bytes with KernelDesc::whole_vectors, else 1 (every length).
size_t kernel_min_len(const KernelDesc &desc, const TargetInfo &target);

// What a caller of a kernel of `desc` must guarantee, and the loops its code has: the
// self-test of a kernel from the disk cache (jit/kernel_self_test.h) runs every loop within
// these bounds, and the runtime calls a streaming encoder only on shards that meet them.
struct KernelContract {
  size_t min_len = 1;       // shortest nonzero len (kernel_min_len)
  size_t len_multiple = 1;  // every len is a multiple of it (the symbol; kStreamingStoreAlign)
  size_t out_align = 1;     // every output pointer is aligned to it (kStreamingStoreAlign)
  size_t vector_bytes = 1;  // one step of the one-vector loop
  size_t step_bytes = 1;    // one step of the main loop (vector_bytes times its unroll)
};
// Output alignment and length granule of a streaming-store kernel (KernelDesc::
// streaming_stores): a whole cache line, so every non-temporal store is an aligned vector.
inline constexpr size_t kStreamingStoreAlign = 64;
// The contract of the kernel build_kernel(desc, target, strategy, options) emits.
KernelContract kernel_contract(const KernelDesc &desc, const TargetInfo &target,
                               const BuildOptions &options);

// Emits (fully unrolled; wide plain kernels tiled, see BuildOptions::max_unrolled_products
// and tiled_kernel.h)
//   void <symbol>(const uint8_t *const *in, uint8_t *const *out, size_t len)
// (size_t is i32 on 32-bit triples, i64 otherwise) where in has desc.inputs() pointers,
// out has desc.coeffs.rows pointers and len (bytes per shard) is any multiple of
// field.bytes(): a vector main loop over the shard offset (<N x iL> values, N =
// target.vector_bits / l, loaded and stored unaligned; vector_bits 64 means no vector unit
// and packs the N symbols into one i64, SWAR, as do symbols wider than
// target.max_lane_bits), inputs and outputs fully unrolled inside it. The body exists once
// (per unroll variant): a remainder shorter than a vector is done by one more vector that
// overlaps the previous one, and a shard shorter than a vector by copying it through zeroed
// stack buffers (plain byte loops, no libc calls; see BuildOptions::max_stack_tail_bytes).
// No byte at or past `len` is ever read or written (a len that is not a multiple of the
// symbol size leaves its last partial symbol untouched). Outputs are overwritten, never read; rows whose coefficients are all
// zero get zeros.
// Caller contract (the IR carries noalias / alias-scope metadata for it): output buffers do
// not overlap each other or any input buffer, and neither pointer array is written during
// the call; input buffers may overlap each other.
//
// Modes (KernelDesc::output, KernelDesc::input). The number of input pointers is
// KernelDesc::inputs(): coeffs.cols, twice that with InputMode::kDelta (x[c] = in[2c] ^
// in[2c + 1], fused into the loads: one pass over old, new and the outputs), plus coeffs.rows
// with kVerify.
// - KernelDesc::pre (kOverwrite + kPlain only): the body loads the pre.cols inputs, computes
//   the pre.rows intermediates from them (the same per-output lowering as any output, kept in
//   registers) and then every output from inputs and intermediates. Same loops, tails and
//   buffer contract as without. A desc past BuildOptions::max_unrolled_products (counting the
//   products of pre and coeffs) is tiled with the composed one-stage map instead (see
//   tiled_kernel.h).
// - kAccumulate: out[r] ^= y[r]. Outputs are read, so the last partial vector cannot overlap
//   the previous one: whole vectors run in the loop and the remainder (< one vector) is
//   staged through zeroed stack buffers (or the scalar tail, see max_stack_tail_bytes), a
//   second copy of the body. Bytes at or past `len` are neither read nor written.
// - kVerify: emits instead
//     size_t <symbol>(const uint8_t *const *in, size_t len)
//   with in = the coeffs.cols inputs followed by coeffs.rows expected outputs. It computes
//   y[r] vector by vector, compares it with the expected buffer and writes nothing (stack
//   staging only). Returns len when every symbol of [0, len rounded down to symbols)
//   matches; otherwise the offset of the first vector (in ascending order of the loop,
//   vectors of target width, U of them per step of the unrolled loop) that holds a
//   mismatch: every byte before the returned offset matched, and the first mismatching byte
//   lies within the next U x VB bytes. Deterministic for given inputs, target and options.
//   All input buffers may overlap each other.
// - kSignature: coeffs is b x 1, a column of signature base elements alpha_i (nonzero), one
//   input (the shard) and one output of b x N symbols (N = kernel_vector_lanes): lane t of
//   component i receives acc_i[t] = sum_j p[j N + t] * (alpha_i^N)^j over the symbols p of
//   the shard, zero-padded to whole vectors (Horner's rule from the last vector down, one
//   constant multiply per vector and component). The caller finishes the signature as
//   sig_i = sum_t alpha_i^t * acc_i[t] (Nešković 2018, eq. 2.34). Output is overwritten.
// - runtime_coeffs (a shape kernel): emits
//     void <symbol>(const uint8_t *const *in, uint8_t *const *out, size_t len,
//                   const uint8_t *coeffs)
//   with the products read from `coeffs` (KernelDesc::runtime_coeffs), never tiled. Shards
//   shorter than a vector always go through the stack buffers (no scalar tail), so every
//   product is a full-vector one. The coefficient data is only read and must not overlap
//   an output; it may be at any alignment.
// Module triple and the "target-cpu" / "target-features" function attributes come from
// `target`; the data layout is left to the TargetMachine (jit/). Strategy::kAuto resolves to
// clmul-shift. The module is always verified (verifyModule).
// Errors (llvm::Error, never a crash): coefficient not in the field, bad vector width or
// unroll, empty symbol, a strategy that cannot serve the field, a first stage (pre) with
// another mode than kOverwrite + kPlain or with shapes that do not fit (pre.rows or pre.cols
// 0, entries != rows x cols, coeffs.cols != pre.cols + pre.rows), a verifier failure (its
// message). Thread-safe for distinct contexts; ctx must not be used concurrently.
llvm::Expected<std::unique_ptr<llvm::Module>> build_kernel(llvm::LLVMContext &ctx,
                                                           const KernelDesc &desc,
                                                           const TargetInfo &target,
                                                           Strategy strategy,
                                                           const BuildOptions &options = {});

// Name of the basic block that holds the main (vector) loop body; ir_stats can restrict its
// counts to it. Loop passes may split or rename it after optimization.
inline constexpr const char kMainLoopBlock[] = "vloop";

// Deterministic C symbol: ecjit_<op>__<spec>__<target>, non [A-Za-z0-9] mapped to '_'.
// e.g. ("encode", "rs-vand:k=10,m=4,gf=8", "x86_64-v3") ->
//      "ecjit_encode__rs_vand_k_10_m_4_gf_8__x86_64_v3"
// Names longer than kMaxSymbolLength are cut to a prefix plus "_" and the 16 hex digits of
// the 64-bit FNV-1a hash of the full name, exactly kMaxSymbolLength characters in all.
inline constexpr size_t kMaxSymbolLength = 200;
std::string kernel_symbol(const std::string &op, const std::string &spec,
                          const std::string &target);

}  // namespace ecjit::ir
