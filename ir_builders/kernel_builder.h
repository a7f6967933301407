// build_kernel: lowers a linear map over GF(2^l) into one LLVM function with the kernel ABI.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// What a kernel does with the linear map y[r] = sum_c coeffs(r, c) * x[c] (see build_kernel).
enum class OutputMode {
  kOverwrite,   // out[r] = y[r]; outputs are only written
  kAccumulate,  // out[r] ^= y[r]; outputs are read and written (delta update, encode_partial)
  kVerify,      // no outputs: compares y[r] with the input buffer in[inputs + r]; returns size_t
  kSignature,   // algebraic signature lanes of one shard (coeffs: a column of base elements)
};

// Where the x[c] come from.
enum class InputMode {
  kPlain,  // x[c] = in[c]
  kDelta,  // x[c] = in[2c] ^ in[2c + 1] (old and new contents of a small write)
};

// out[r] = sum_c coeffs(r, c) * in[c] over `field`, symbol by symbol, in the default modes.
struct KernelDesc {
  codes::Field field;
  codes::Matrix coeffs;  // rows = outputs, cols = inputs (with pre: inputs + intermediates)
  std::string symbol;    // name of the emitted function
  OutputMode output = OutputMode::kOverwrite;
  InputMode input = InputMode::kPlain;
  // kOverwrite on x86 only: outputs written with non-temporal (streaming) stores, for
  // shards larger than the caches (no read-for-ownership of output lines, no eviction of
  // the inputs), and an SFENCE before returning. Caller contract, on top of build_kernel's:
  // every output pointer aligned to kStreamingStoreAlign and len a multiple of it (so every
  // store is a whole aligned vector; kernel_contract); anything else is undefined behaviour.
  bool streaming_stores = false;
  // Optional first stage (empty, 0 x 0, = none; kOverwrite + kPlain only): t x k, the
  // intermediates t[j] = sum_c pre(j, c) * in[c], computed per vector and never stored.
  // coeffs is then outputs x (k + t) over [in; t]: out[r] = sum_c coeffs(r, c) * in[c] +
  // sum_j coeffs(r, k + j) * t[j]. A two-stage decode (codes/decode_schedule.h) has fewer
  // constant multiplies than its one-stage map, codes::compose_stages(field, pre, coeffs).
  codes::Matrix pre = codes::Matrix();
  // A shape kernel: the coefficients are not compiled in but read at run time from a
  // fourth argument, `const uint8_t *coeffs`, prepared once per matrix by
  // codes::prepare_matrix(runtime_layout(strategy), field, M) (row-major, rows x cols).
  // coeffs then gives only the shape (rows x cols; its entries are ignored: every product is
  // emitted, a zero coefficient's tables give zero). kPlain with kOverwrite or kAccumulate
  // only, no first stage, no streaming stores, and a strategy with shape_kernel_supported.
  bool runtime_coeffs = false;
  // kOverwrite only: the caller never passes 0 < len < kernel_min_len (one vector), so the
  // kernel has no path for shards shorter than a vector (a call with one traps). That path
  // staged every shard through stack buffers and was a third of the code generator's time
  // on RS(10,4)'s decoder; a promoted decoder leaves those calls to its shape kernel.
  bool whole_vectors = false;

  bool has_pre() const { return pre.rows != 0 || pre.cols != 0; }
  // Input shards x[c] of the map: pre.cols with a first stage, else coeffs.cols.
  unsigned sources() const { return has_pre() ? pre.cols : coeffs.cols; }
  // Input pointers the kernel reads from `in`: sources(), twice that with InputMode::kDelta,
  // plus coeffs.rows expected outputs with OutputMode::kVerify.
  unsigned inputs() const {
    return sources() * (input == InputMode::kDelta ? 2 : 1) +
           (output == OutputMode::kVerify ? coeffs.rows : 0);
  }
};

// Symbols per vector of the kernels build_kernel emits for `field` on `target` (the lanes N
// of the signature layout below).
unsigned kernel_vector_lanes(const codes::Field &field, const TargetInfo &target);

// The shortest nonzero len a kernel of `desc` on `target` may be called with: one vector's
// bytes with KernelDesc::whole_vectors, else 1 (every length).
size_t kernel_min_len(const KernelDesc &desc, const TargetInfo &target);

// `desc` without its first stage: coeffs = codes::compose_stages(field, pre, coeffs), the
// same linear map in one stage (desc itself when it has none). Precondition: pre fits coeffs
// (coeffs.cols == pre.cols + pre.rows), as build_kernel checks.
KernelDesc one_stage(const KernelDesc &desc);

// Code-shape parameters of one kernel (chosen by the tuner; the defaults are always valid).
struct BuildOptions {
  // Vectors per input processed by one iteration of the main loop (1..8). With unroll > 1
  // the one-vector loop follows the main loop for what is left.
  unsigned unroll = 1;
  // Shards shorter than one vector are staged through stack buffers of (k + m) vectors when
  // that is at most this many bytes; larger shapes use a scalar per-symbol tail instead
  // (a second, scalar copy of the body).
  unsigned max_stack_tail_bytes = 64 * 1024;
  // Plain encode/decode kernels with more products than this (coefficients other than 0
  // and 1 in coeffs and pre, times (l / 8)^2) are emitted by build_tiled_kernel instead
  // (a two-stage desc as its composed one-stage map): coefficients as a
  // table, loops instead of full unrolling, so that wide codes (k + m up to 256 on GF(2^8),
  // 1024 on GF(2^16)) compile in bounded time and code size. RS(64,64) GF(2^8) is 4096.
  uint64_t max_unrolled_products = 4096;
};

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
