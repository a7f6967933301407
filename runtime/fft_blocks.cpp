// rs-fft's scalar path in column blocks: unpack a block of every shard, run codes::fft's transforms, pack.
#include "runtime/fft_blocks.h"

#include <algorithm>
#include <cstring>

namespace ecjit::runtime {
namespace {

using codes::fft::Geometry;
using codes::fft::Rate;
using codes::fft::Shards;

// The calling thread's work shards for one block shape, zero-filled when first made. A thread
// keeps its last few shapes (a call sees at most three: whole blocks, the last whole-chunk
// block, the partial chunk), each at most ~kFftScratchBytes.
Shards &scratch(size_t count, size_t len) {
  struct Cache {
    Shards shapes[3];
    unsigned next = 0;
  };
  thread_local Cache cache;
  for (Shards &s : cache.shapes)
    if (s.count() == count && s.len() == len) return s;
  Shards &s = cache.shapes[cache.next++ % 3];
  s = Shards(count, len);
  return s;
}

// d[t] = d[t] * exp(log) (the field's mul_log on every element).
void mul_in_place(const codes::fft::LchField &f, uint16_t *d, size_t len, uint16_t log) {
  for (size_t t = 0; t < len; ++t) d[t] = f.mul_log(d[t], log);
}

void xor_into(uint16_t *x, const uint16_t *y, size_t len) {
  for (size_t t = 0; t < len; ++t) x[t] ^= y[t];
}

// Calls fn(off, bytes) over [0, len) in blocks of `block` bytes (a multiple of 64): every
// block but the last is whole chunks; the last one ends the range.
template <typename Fn>
void for_blocks(size_t len, size_t block, Fn &&fn) {
  for (size_t off = 0; off < len; off += block) fn(off, std::min(block, len - off));
}

// codes::fft::encode's algorithm on one block of b bytes at `off`.
void encode_block(const Geometry &g, const uint8_t *const *in, uint8_t *const *out, size_t off, size_t b) {
  const size_t L = codes::fft::shard_elements(b, g.gf), C = g.chunk, k = g.k, m = g.m;
  if (g.rate == Rate::kHigh) {
    // recovery = FFT_0( XOR over chunks c of IFFT_{(c+1)C}(originals cC .. cC+C-1) ): chunk 0
    // accumulates in slots [0, C), later chunks pass through slots [C, 2C).
    Shards &w = scratch(k > C ? 2 * C : C, L);
    for (size_t c0 = 0; c0 < k; c0 += C) {
      const size_t count = std::min(C, k - c0), base = c0 ? C : 0;
      for (size_t i = 0; i < count; ++i) codes::fft::unpack_shard(in[c0 + i] + off, b, w[base + i], g.gf);
      w.zero(base + count, base + C);
      codes::fft::ifft(w, base, C, count, c0 + C, g.gf);
      if (base)
        for (size_t i = 0; i < C; ++i) xor_into(w[i], w[C + i], L);
    }
    codes::fft::fft(w, 0, C, m, 0, g.gf);
    for (size_t j = 0; j < m; ++j) codes::fft::pack_shard(w[j], b, out[j] + off, g.gf);
    return;
  }
  // Low rate: the originals' coefficients (IFFT at points 0 .. C-1) evaluated at each
  // recovery chunk's points; all but the last chunk work on a copy in slots [C, 2C).
  Shards &w = scratch(m > C ? 2 * C : C, L);
  for (size_t i = 0; i < k; ++i) codes::fft::unpack_shard(in[i] + off, b, w[i], g.gf);
  w.zero(k, C);
  codes::fft::ifft(w, 0, C, k, 0, g.gf);
  for (size_t c0 = 0; c0 < m; c0 += C) {
    const size_t count = std::min(C, m - c0);
    const bool last = c0 + C >= m;
    const size_t pos = last ? 0 : C;
    if (!last) std::memcpy(w[C], w[0], C * L * sizeof(uint16_t));  // slots are contiguous
    codes::fft::fft(w, pos, C, count, c0 + C, g.gf);
    for (size_t j = 0; j < count; ++j) codes::fft::pack_shard(w[pos + j], b, out[c0 + j] + off, g.gf);
  }
}

// codes::fft::decode's algorithm on one block, with the plan's locator.
void decode_block(const Geometry &g, const FftDecodePlan &plan, const uint8_t *const *src,
                  const unsigned *targets, uint8_t *const *dst, size_t n_targets, size_t off, size_t b) {
  const codes::fft::LchField &f = codes::fft::lch_field(g.gf);
  const size_t n = g.decode_work, L = codes::fft::shard_elements(b, g.gf);
  Shards &w = scratch(n, L);
  // work[x] = locator(x) * value(x) at the sources' points, 0 elsewhere; then the values of
  // (locator * f)' by IFFT, formal derivative, FFT; f(x) = (locator * f)'(x) / locator'(x).
  for (size_t x = 0; x < n; ++x)
    if (!plan.holds[x]) w.zero(x, x + 1);
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    const size_t x = plan.points[i];
    codes::fft::unpack_shard(src[i] + off, b, w[x], g.gf);
    mul_in_place(f, w[x], L, plan.logs[x]);
  }
  codes::fft::ifft(w, 0, n, g.decode_end, 0, g.gf);
  codes::fft::formal_derivative(w, n);
  codes::fft::fft(w, 0, n, g.decode_end, 0, g.gf);
  for (size_t t = 0; t < n_targets; ++t) {
    const size_t x = fft_point(g, targets[t]);
    mul_in_place(f, w[x], L, uint16_t(f.modulus - plan.logs[x]));
    codes::fft::pack_shard(w[x], b, dst[t] + off, g.gf);
  }
}

}  // namespace

size_t fft_block_bytes(size_t work_slots) {
  size_t elements = kFftScratchBytes / (2 * std::max<size_t>(work_slots, 1)) / 32 * 32;
  elements = std::clamp<size_t>(elements, 32, kFftMaxBlockBytes / 2);
  return 2 * elements;
}

FftDecodePlan plan_fft_decode(const Geometry &g, std::vector<unsigned> sources) {
  const size_t n = g.decode_work;
  FftDecodePlan plan;
  plan.sources = std::move(sources);
  plan.holds.assign(n, 0);
  for (unsigned s : plan.sources) {
    const size_t x = fft_point(g, s);
    plan.holds[x] = 1;
    plan.points.push_back(uint32_t(x));
  }
  std::vector<bool> erased(n, false);
  for (unsigned s = 0; s < g.k + g.m; ++s) erased[fft_point(g, s)] = !plan.holds[fft_point(g, s)];
  if (g.rate == Rate::kHigh)
    std::fill(erased.begin() + g.m, erased.begin() + g.chunk, true);
  else
    std::fill(erased.begin() + g.decode_end, erased.end(), true);
  plan.logs = codes::fft::erasure_logs(erased, g.gf);
  return plan;
}

void fft_scalar_encode(const Geometry &g, const uint8_t *const *in, uint8_t *const *out, size_t len) {
  const bool two = g.rate == Rate::kHigh ? g.k > g.chunk : g.m > g.chunk;
  for_blocks(len, fft_block_bytes(two ? 2 * g.chunk : g.chunk),
             [&](size_t off, size_t b) { encode_block(g, in, out, off, b); });
}

void fft_scalar_decode(const Geometry &g, const FftDecodePlan &plan, const uint8_t *const *src,
                       const unsigned *targets, uint8_t *const *dst, size_t n_targets, size_t len) {
  if (n_targets == 0) return;
  for_blocks(len, fft_block_bytes(g.decode_work), [&](size_t off, size_t b) {
    decode_block(g, plan, src, targets, dst, n_targets, off, b);
  });
}

}  // namespace ecjit::runtime
