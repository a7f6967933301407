// Reed-Solomon over GF(2^16) or GF(2^8) by the LCH additive FFT: transforms, encode, decode, byte layout.
#include "codes/rs_fft.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace ecjit::codes::fft {

uint64_t next_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

namespace {

[[maybe_unused]] bool is_pow2(size_t x) { return x && !(x & (x - 1)); }

// x[t] ^= y[t] * exp(log_s) for t < len.
void mul_add(const LchField &f, uint16_t *x, const uint16_t *y, size_t len, uint16_t log_s) {
  for (size_t t = 0; t < len; ++t)
    if (y[t]) x[t] ^= f.exp[f.add_mod(f.log[y[t]], log_s)];
}

void xor_into(uint16_t *x, const uint16_t *y, size_t len) {
  for (size_t t = 0; t < len; ++t) x[t] ^= y[t];
}

// x[t] = y[t] * exp(log_s).
void mul_into(const LchField &f, uint16_t *x, const uint16_t *y, size_t len, uint16_t log_s) {
  for (size_t t = 0; t < len; ++t) x[t] = f.mul_log(y[t], log_s);
}

void check_transform(const Shards &data, size_t pos, size_t size, size_t truncated,
                     size_t skew_offset, const LchField &f) {
  (void)data, (void)pos, (void)size, (void)truncated, (void)skew_offset, (void)f;
  assert(is_pow2(size) && truncated <= size && pos + size <= data.count());
  assert(skew_offset % size == 0 && skew_offset + size <= f.order);
}

// Walsh-Hadamard transform mod q, in place, entries in [0, q) kept there: a sum or difference
// of two is below 2q, one conditional subtraction instead of a division (every new erasure
// set's first call runs three of these).
void walsh_mod(std::vector<uint32_t> &v, uint32_t q) {
  for (size_t dist = 1; dist < v.size(); dist *= 2)
    for (size_t r = 0; r < v.size(); r += 2 * dist)
      for (size_t i = r; i < r + dist; ++i) {
        const uint32_t a = v[i], b = v[i + dist], sum = a + b, diff = a + q - b;
        v[i] = sum >= q ? sum - q : sum;
        v[i + dist] = diff >= q ? diff - q : diff;
      }
}

Status null_pointer(const char *what, size_t i) {
  return Status(StatusCode::kNullPointer, std::string(what) + " " + std::to_string(i) + " is null");
}

}  // namespace

void Shards::zero(size_t first, size_t last) {
  assert(first <= last && last <= count_);
  std::fill(data_.begin() + first * len_, data_.begin() + last * len_, uint16_t(0));
}

void fft(Shards &data, size_t pos, size_t size, size_t truncated, size_t skew_offset, Gf gf) {
  const LchField &f = lch_field(gf);
  check_transform(data, pos, size, truncated, skew_offset, f);
  const uint16_t *skew = f.skew;
  const size_t len = data.len();
  for (size_t dist = size / 2; dist > 0; dist /= 2)
    for (size_t r = 0; r < truncated; r += 2 * dist) {
      const uint16_t s = skew[skew_offset + r + dist - 1];
      for (size_t i = pos + r; i < pos + r + dist; ++i) {
        uint16_t *a = data[i], *b = data[i + dist];
        if (s != f.modulus) mul_add(f, a, b, len, s);
        xor_into(b, a, len);
      }
    }
}

void ifft(Shards &data, size_t pos, size_t size, size_t truncated, size_t skew_offset, Gf gf) {
  const LchField &f = lch_field(gf);
  check_transform(data, pos, size, truncated, skew_offset, f);
  const uint16_t *skew = f.skew;
  const size_t len = data.len();
  for (size_t dist = 1; dist < size; dist *= 2)
    for (size_t r = 0; r < truncated; r += 2 * dist) {
      const uint16_t s = skew[skew_offset + r + dist - 1];
      for (size_t i = pos + r; i < pos + r + dist; ++i) {
        uint16_t *a = data[i], *b = data[i + dist];
        xor_into(b, a, len);
        if (s != f.modulus) mul_add(f, a, b, len, s);
      }
    }
}

void formal_derivative(Shards &data, size_t count) {
  assert(is_pow2(count) && count <= data.count());
  for (size_t i = 1; i < count; ++i) {
    const size_t w = size_t(1) << __builtin_ctzll(i);
    for (size_t t = 0; t < w; ++t) xor_into(data[i - w + t], data[i + t], data.len());
  }
}

std::vector<uint16_t> erasure_logs(const std::vector<bool> &erased, Gf gf) {
  const LchField &f = lch_field(gf);
  const size_t n = erased.size();
  const uint32_t q = f.modulus;
  assert(is_pow2(n) && n <= f.order);
  // out = erased (*) L, the XOR convolution with L[x] = log_of(x) (L[0] = 0): out[i] sums
  // log(i ^ e) over erased e, and the e == i term adds 0. Walsh(Walsh(v)) = n v and n is a
  // power of two, n = 2^R, whose inverse mod q = 2^b - 1 is 2^(b-R) since 2^b = 1 (mod q).
  std::vector<uint32_t> a(n), l(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = erased[i] ? 1 : 0;
    l[i] = i ? f.log[i] % q : 0;  // in [0, q), as walsh_mod keeps its entries
  }
  walsh_mod(a, q);
  walsh_mod(l, q);
  for (size_t i = 0; i < n; ++i) a[i] = uint32_t(uint64_t(a[i]) * l[i] % q);
  walsh_mod(a, q);
  const uint64_t n_inv = f.order / n;  // 2^(b-R)
  std::vector<uint16_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = uint16_t(a[i] * n_inv % q);
  return out;
}

Result<Geometry> geometry(unsigned k, unsigned m, Gf gf) {
  const size_t k2 = next_pow2(k), m2 = next_pow2(m);
  if (gf == Gf::k8 && (k == 0 || m == 0 || k > 255 || m > 255 || m2 + k > 256))
    return Status(StatusCode::kInvalidSpec,
                  "rs-fft gf=8: unsupported k=" + std::to_string(k) + ", m=" + std::to_string(m) +
                      " (Leopard-RS GF(2^8) needs k, m >= 1 and next_pow2(m) + k <= 256)");
  if (gf == Gf::k16 && (k == 0 || m == 0 || k > kModulus || m > kModulus || std::min(k2, m2) + std::max(k, m) > kOrder))
    return Status(StatusCode::kInvalidSpec,
                  "rs-fft: unsupported k=" + std::to_string(k) + ", m=" + std::to_string(m) +
                      " (need k, m >= 1 and min(next_pow2(k), next_pow2(m)) + max(k, m) <= 65536)");
  Geometry g;
  g.k = k;
  g.m = m;
  g.gf = gf;
  // Leopard-RS (GF(2^8)) has the high rate only; reed-solomon-simd's DefaultRate picks.
  g.rate = gf == Gf::k8 ? Rate::kHigh
           : k2 < m2    ? Rate::kLow
           : k2 > m2    ? Rate::kHigh
                        : (k <= m ? Rate::kHigh : Rate::kLow);
  if (g.rate == Rate::kHigh) {
    g.chunk = m2;
    g.original_pos = g.chunk;
    g.recovery_pos = 0;
    g.decode_end = g.chunk + k;
  } else {
    g.chunk = k2;
    g.original_pos = 0;
    g.recovery_pos = g.chunk;
    g.decode_end = g.chunk + m;
  }
  g.decode_work = next_pow2(g.decode_end);
  return g;
}

Status check_shard_bytes(size_t shard_bytes, Gf gf) {
  if (gf == Gf::k8 && shard_bytes == 0)
    return Status(StatusCode::kShardSize, "rs-fft gf=8: shard_bytes = 0 (must be nonzero)");
  if (gf == Gf::k8) return Status::Ok();
  if (shard_bytes == 0 || shard_bytes % 2 != 0)
    return Status(StatusCode::kShardSize, "rs-fft: shard_bytes = " + std::to_string(shard_bytes) +
                                              " (must be nonzero and even)");
  return Status::Ok();
}

void unpack_shard(const uint8_t *bytes, size_t shard_bytes, uint16_t *elements, Gf gf) {
  if (gf == Gf::k8) {
    for (size_t i = 0; i < shard_bytes; ++i) elements[i] = bytes[i];
    return;
  }
  const size_t whole = shard_bytes / 64, h = (shard_bytes % 64) / 2;
  for (size_t c = 0; c < whole; ++c)
    for (size_t l = 0; l < 32; ++l)
      elements[32 * c + l] = uint16_t(bytes[64 * c + l] | bytes[64 * c + 32 + l] << 8);
  const uint8_t *tail = bytes + 64 * whole;
  for (size_t l = 0; l < h; ++l) elements[32 * whole + l] = uint16_t(tail[l] | tail[h + l] << 8);
}

void pack_shard(const uint16_t *elements, size_t shard_bytes, uint8_t *bytes, Gf gf) {
  if (gf == Gf::k8) {
    for (size_t i = 0; i < shard_bytes; ++i) bytes[i] = uint8_t(elements[i]);
    return;
  }
  const size_t whole = shard_bytes / 64, h = (shard_bytes % 64) / 2;
  for (size_t c = 0; c < whole; ++c)
    for (size_t l = 0; l < 32; ++l) {
      bytes[64 * c + l] = uint8_t(elements[32 * c + l]);
      bytes[64 * c + 32 + l] = uint8_t(elements[32 * c + l] >> 8);
    }
  uint8_t *tail = bytes + 64 * whole;
  for (size_t l = 0; l < h; ++l) {
    tail[l] = uint8_t(elements[32 * whole + l]);
    tail[h + l] = uint8_t(elements[32 * whole + l] >> 8);
  }
}

Status encode(unsigned k, unsigned m, size_t len, const uint16_t *const *orig,
              uint16_t *const *recovery, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  if (!orig || !recovery) return Status(StatusCode::kNullPointer, "shard array is null");
  for (unsigned i = 0; i < k; ++i)
    if (!orig[i]) return null_pointer("original", i);
  for (unsigned j = 0; j < m; ++j)
    if (!recovery[j]) return null_pointer("recovery", j);
  const size_t C = g->chunk, bytes = len * sizeof(uint16_t);
  if (g->rate == Rate::kHigh) {
    // recovery = FFT_0( XOR over chunks c of IFFT_{(c+1)C}(originals cC .. cC+C-1) ).
    Shards acc(C, len), tmp(C, len);
    for (size_t c0 = 0; c0 < k; c0 += C) {
      const size_t count = std::min<size_t>(C, k - c0);
      Shards &dst = c0 == 0 ? acc : tmp;
      for (size_t i = 0; i < count; ++i) std::memcpy(dst[i], orig[c0 + i], bytes);
      dst.zero(count, C);
      ifft(dst, 0, C, count, c0 + C, gf);
      if (c0 != 0)
        for (size_t i = 0; i < C; ++i) xor_into(acc[i], tmp[i], len);
    }
    fft(acc, 0, C, m, 0, gf);
    for (size_t j = 0; j < m; ++j) std::memcpy(recovery[j], acc[j], bytes);
  } else {
    // recovery chunk c = FFT_{(c+1)C}( IFFT_0(originals, zero-padded to C) ).
    Shards coeff(C, len), tmp(C, len);
    for (size_t i = 0; i < k; ++i) std::memcpy(coeff[i], orig[i], bytes);
    ifft(coeff, 0, C, k, 0, gf);
    for (size_t c0 = 0; c0 < m; c0 += C) {
      const size_t count = std::min<size_t>(C, m - c0);
      tmp = coeff;
      fft(tmp, 0, C, count, c0 + C, gf);
      for (size_t j = 0; j < count; ++j) std::memcpy(recovery[c0 + j], tmp[j], bytes);
    }
  }
  return Status::Ok();
}

Status decode(unsigned k, unsigned m, size_t len, const uint16_t *const *shards,
              uint16_t *const *out_originals, uint16_t *const *out_recovery, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  const LchField &f = lch_field(gf);
  if (!g.ok()) return g.status();
  if (!shards || !out_originals) return Status(StatusCode::kNullPointer, "shard array is null");
  size_t present = 0, missing_orig = 0, wanted_rec = 0;
  for (unsigned s = 0; s < k + m; ++s) present += shards[s] != nullptr;
  for (unsigned i = 0; i < k; ++i)
    if (!shards[i]) {
      ++missing_orig;
      if (!out_originals[i]) return null_pointer("output for missing original", i);
    }
  for (unsigned j = 0; out_recovery && j < m; ++j) wanted_rec += !shards[k + j] && out_recovery[j];
  if (present < k)
    return Status(StatusCode::kTooManyErasures,
                  "rs-fft: " + std::to_string(present) + " shards present, need k = " +
                      std::to_string(k));
  if (missing_orig == 0 && wanted_rec == 0) return Status::Ok();

  // Points: shard s sits at point pos(s); erased = missing shards, the unused recovery
  // points (high rate) and every point past decode_end (low rate).
  const size_t n = g->decode_work;
  auto pos = [&](unsigned s) { return s < k ? g->original_pos + s : g->recovery_pos + (s - k); };
  std::vector<bool> erased(n, false);
  for (unsigned s = 0; s < k + m; ++s) erased[pos(s)] = !shards[s];
  if (g->rate == Rate::kHigh)
    std::fill(erased.begin() + m, erased.begin() + g->chunk, true);
  else
    std::fill(erased.begin() + g->decode_end, erased.end(), true);
  const std::vector<uint16_t> lg = erasure_logs(erased, gf);

  // work[x] = locator(x) * value(x) at kept points, 0 elsewhere; then the values of
  // (locator * f)' at every point by IFFT, formal derivative, FFT; at an erased point x,
  // f(x) = (locator * f)'(x) / locator'(x).
  Shards work(n, len);
  for (unsigned s = 0; s < k + m; ++s)
    if (shards[s]) mul_into(f, work[pos(s)], shards[s], len, lg[pos(s)]);
  ifft(work, 0, n, g->decode_end, 0, gf);
  formal_derivative(work, n);
  fft(work, 0, n, g->decode_end, 0, gf);
  for (unsigned s = 0; s < k + m; ++s) {
    if (shards[s]) continue;
    uint16_t *out = s < k ? out_originals[s] : out_recovery ? out_recovery[s - k] : nullptr;
    if (out) mul_into(f, out, work[pos(s)], len, uint16_t(f.modulus - lg[pos(s)]));
  }
  return Status::Ok();
}

Status encode_bytes(unsigned k, unsigned m, size_t shard_bytes, const uint8_t *const *orig,
                    uint8_t *const *recovery, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  ECJIT_RETURN_IF_ERROR(check_shard_bytes(shard_bytes, gf));
  if (!orig || !recovery) return Status(StatusCode::kNullPointer, "shard array is null");
  for (unsigned i = 0; i < k; ++i)
    if (!orig[i]) return null_pointer("original", i);
  for (unsigned j = 0; j < m; ++j)
    if (!recovery[j]) return null_pointer("recovery", j);
  const size_t len = shard_elements(shard_bytes, gf);
  Shards in(k, len), out(m, len);
  std::vector<const uint16_t *> in_ptrs(k);
  std::vector<uint16_t *> out_ptrs(m);
  for (unsigned i = 0; i < k; ++i) {
    unpack_shard(orig[i], shard_bytes, in[i], gf);
    in_ptrs[i] = in[i];
  }
  for (unsigned j = 0; j < m; ++j) out_ptrs[j] = out[j];
  ECJIT_RETURN_IF_ERROR(encode(k, m, len, in_ptrs.data(), out_ptrs.data(), gf));
  for (unsigned j = 0; j < m; ++j) pack_shard(out[j], shard_bytes, recovery[j], gf);
  return Status::Ok();
}

Status decode_bytes(unsigned k, unsigned m, size_t shard_bytes, const uint8_t *const *shards,
                    uint8_t *const *out_originals, uint8_t *const *out_recovery, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  ECJIT_RETURN_IF_ERROR(check_shard_bytes(shard_bytes, gf));
  if (!shards || !out_originals) return Status(StatusCode::kNullPointer, "shard array is null");
  const size_t len = shard_elements(shard_bytes, gf), n = size_t(k) + m;
  // Unpacked copies: present shards in `in`, outputs for missing ones in `out`.
  Shards in(n, len), out(n, len);
  std::vector<const uint16_t *> in_ptrs(n, nullptr);
  std::vector<uint16_t *> out_ptrs(n, nullptr);
  for (size_t s = 0; s < n; ++s) {
    if (shards[s]) {
      unpack_shard(shards[s], shard_bytes, in[s], gf);
      in_ptrs[s] = in[s];
    } else if (s < k ? out_originals[s] != nullptr : out_recovery && out_recovery[s - k]) {
      out_ptrs[s] = out[s];
    }
  }
  ECJIT_RETURN_IF_ERROR(decode(k, m, len, in_ptrs.data(), out_ptrs.data(),
                               out_recovery ? out_ptrs.data() + k : nullptr, gf));
  for (size_t s = 0; s < n; ++s)
    if (out_ptrs[s]) pack_shard(out[s], shard_bytes, s < k ? out_originals[s] : out_recovery[s - k], gf);
  return Status::Ok();
}

}  // namespace ecjit::codes::fft
