// KernelDesc: the linear map a kernel computes and its modes, and BuildOptions, the code shape
// the tuner picks - what every kernel emitter (build_kernel, build_tiled_kernel) takes.
#pragma once

#include <cstdint>
#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"

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


// `desc` without its first stage: coeffs = codes::compose_stages(field, pre, coeffs), the
// same linear map in one stage (desc itself when it has none). Precondition: pre fits coeffs
// (coeffs.cols == pre.cols + pre.rows), as build_kernel checks.
inline KernelDesc one_stage(const KernelDesc &desc) {
  KernelDesc out = desc;
  if (!desc.has_pre()) return out;
  out.coeffs = codes::compose_stages(desc.field, desc.pre, desc.coeffs);
  out.pre = codes::Matrix();
  return out;
}

}  // namespace ecjit::ir
