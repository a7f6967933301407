// Kernel calls split into aligned pieces: the plan, and the per-piece pointer offsets.
#include "runtime/parallel_kernel.h"

#include <algorithm>
#include <array>
#include <atomic>

namespace ecjit::runtime {

SplitPlan plan_split(size_t len, size_t inputs, unsigned threads, size_t min_bytes, size_t align) {
  size_t pieces = std::min<size_t>(threads, len / align);
  if (min_bytes) {
    // Bytes of each shard a piece needs, so that inputs x that >= min_bytes (no overflow).
    const size_t inputs_ = std::max<size_t>(inputs, 1);
    const size_t per_shard = min_bytes / inputs_ + (min_bytes % inputs_ != 0);
    pieces = std::min(pieces, len / per_shard);
  }
  SplitPlan plan;
  if (pieces <= 1) return plan;
  plan.pieces = pieces;
  plan.step = len / pieces / align * align;
  return plan;
}

namespace {

SplitPlan plan_for(const JitImpl &jit, size_t n_in, size_t n_out, size_t len, size_t align) {
  if (!jit.pool() || n_in > kMaxSplitShards || n_out > kMaxSplitShards) return SplitPlan();
  return plan_split(len, n_in, jit.threads(), jit.options().parallel_min_bytes, align);
}

}  // namespace

namespace {

// call(in, out, len) over the pieces of `jit`'s plan.
template <typename Call>
size_t run_pieces(const JitImpl &jit, const uint8_t *const *in, size_t n_in, uint8_t *const *out,
                  size_t n_out, size_t len, const Call &call, size_t align = kSplitAlign) {
  const SplitPlan plan = plan_for(jit, n_in, n_out, len, align);
  if (plan.pieces <= 1) {
    call(in, out, len);
    return 1;
  }
  jit.pool()->run(plan.pieces, [&](size_t p) {
    const size_t a = p * plan.step, b = p + 1 == plan.pieces ? len : a + plan.step;
    std::array<const uint8_t *, kMaxSplitShards> piece_in;
    std::array<uint8_t *, kMaxSplitShards> piece_out;
    for (size_t i = 0; i < n_in; ++i) piece_in[i] = in[i] + a;
    for (size_t i = 0; i < n_out; ++i) piece_out[i] = out[i] + a;
    call(piece_in.data(), piece_out.data(), b - a);
  });
  return plan.pieces;
}

}  // namespace

size_t run_split(const JitImpl &jit, const uint8_t *const *in, size_t n_in, uint8_t *const *out,
                 size_t n_out, size_t len, size_t align,
                 const std::function<void(const uint8_t *const *, uint8_t *const *, size_t)> &call) {
  return run_pieces(jit, in, n_in, out, n_out, len, call, align);
}

size_t run_kernel(const JitImpl &jit, KernelFn fn, const uint8_t *const *in, size_t n_in,
                  uint8_t *const *out, size_t n_out, size_t len) {
  return run_pieces(jit, in, n_in, out, n_out, len,
                    [fn](const uint8_t *const *i, uint8_t *const *o, size_t l) { fn(i, o, l); });
}

size_t run_shape_kernels(const JitImpl &jit, const ShapeChunk *chunks, size_t n_chunks,
                         const uint8_t *const *in, size_t n_in, uint8_t *const *out, size_t n_out,
                         size_t len) {
  return run_pieces(jit, in, n_in, out, n_out, len,
                    [chunks, n_chunks](const uint8_t *const *i, uint8_t *const *o, size_t l) {
                      for (size_t c = 0; c < n_chunks; ++c)
                        chunks[c].fn(i + chunks[c].i0, o + chunks[c].r0, l, chunks[c].coeffs);
                    });
}

size_t run_verify(const JitImpl &jit, VerifyFn fn, const uint8_t *const *in, size_t n_in,
                  size_t len) {
  const SplitPlan plan = plan_for(jit, n_in, 0, len, kSplitAlign);
  if (plan.pieces <= 1) return fn(in, len);
  // The pieces are in offset order and a piece reports an offset inside itself, so the
  // first mismatch is the smallest one reported.
  std::atomic<size_t> first{len};
  jit.pool()->run(plan.pieces, [&](size_t p) {
    const size_t a = p * plan.step, b = p + 1 == plan.pieces ? len : a + plan.step;
    if (first.load(std::memory_order_relaxed) < a) return;  // an earlier piece differs
    std::array<const uint8_t *, kMaxSplitShards> piece_in;
    for (size_t i = 0; i < n_in; ++i) piece_in[i] = in[i] + a;
    const size_t off = fn(piece_in.data(), b - a);
    if (off == b - a) return;
    size_t seen = first.load(std::memory_order_relaxed);
    while (a + off < seen && !first.compare_exchange_weak(seen, a + off, std::memory_order_relaxed)) {
    }
  });
  return first.load(std::memory_order_relaxed);
}

}  // namespace ecjit::runtime
