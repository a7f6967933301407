// Kernel calls over a shard range split into aligned pieces that run on the Jit's threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// Piece boundaries are multiples of this many bytes: of every symbol size, of 64-byte cache
// lines and vectors, and of a kernel's main-loop block, so that a piece sees the same vector
// blocks as the whole-range call does (and verify reports the same offset).
constexpr size_t kSplitAlign = 4096;
// Calls with more input or output shards than this run on the calling thread alone (each
// thread offsets the pointer arrays on its own stack).
constexpr size_t kMaxSplitShards = 512;

// Piece i of `pieces` covers [i * step, (i + 1) * step); the last one ends at len instead.
struct SplitPlan {
  size_t pieces = 1;
  size_t step = 0;
};

// The split of [0, len) for a call reading `inputs` shards on up to `threads` threads with
// at least `min_bytes` of input per thread: pieces = min(threads, inputs x len / min_bytes,
// len / kSplitAlign), step = len / pieces rounded down to kSplitAlign. So step >=
// kSplitAlign and the last piece (step plus the remainder) is never shorter than the others.
// With `align` the piece boundaries are multiples of it instead of kSplitAlign.
SplitPlan plan_split(size_t len, size_t inputs, unsigned threads, size_t min_bytes,
                     size_t align = kSplitAlign);

// fn(in, out, len) over the pieces of `jit`'s plan (JitOptions::threads, parallel_min_bytes),
// run on its pool and the calling thread; one plain call when the plan has one piece. The
// output is the whole-range call's: kernels are pure functions of the byte ranges.
// Returns the number of pieces. Does not allocate.
size_t run_kernel(const JitImpl &jit, KernelFn fn, const uint8_t *const *in, size_t n_in,
                  uint8_t *const *out, size_t n_out, size_t len);

// call(in, out, len) over pieces whose boundaries are multiples of `align` (bit-matrix codes:
// their block of w packets), as run_kernel.
size_t run_split(const JitImpl &jit, const uint8_t *const *in, size_t n_in, uint8_t *const *out,
                 size_t n_out, size_t len, size_t align,
                 const std::function<void(const uint8_t *const *, uint8_t *const *, size_t)> &call);

// Shape kernels over one split of [0, len): chunk c computes (or adds to) outputs
// [r0, r0 + rows) from its inputs as fn(in + i0, out + r0, len, coeffs); every piece runs
// every chunk, in order (one dispatch per call).
struct ShapeChunk {
  ShapeFn fn;
  const uint8_t *coeffs;
  unsigned r0;
  unsigned i0 = 0;
};
size_t run_shape_kernels(const JitImpl &jit, const ShapeChunk *chunks, size_t n_chunks,
                         const uint8_t *const *in, size_t n_in, uint8_t *const *out, size_t n_out,
                         size_t len);

// verify_fn(in, len) likewise: the offset the whole-range call returns (len when every
// vector matched, else the first differing one; pieces after a known mismatch are skipped).
size_t run_verify(const JitImpl &jit, VerifyFn fn, const uint8_t *const *in, size_t n_in,
                  size_t len);

}  // namespace ecjit::runtime
