// Reed-Solomon by the LCH additive FFT: scalar reference, byte-compatible with reed-solomon-simd 3.x (GF(2^16)) and Leopard-RS / klauspost's leopard8 (GF(2^8)).
//
// The code (family rs-fft:k=,m=) is the one reed-solomon-simd's ReedSolomonEncoder /
// ReedSolomonDecoder (DefaultRate) produce: recovery shards are equal byte for byte, and
// either side decodes the other's shards. Lin, Chung, Han (FOCS 2014); Lin, Al-Naffouri,
// Han, Chung (IEEE Trans. IT 2016); the Leopard-RS construction. Field: rs_fft_field.h.
//
// Evaluation points are the field elements in their 16-bit representation, point index
// x <-> element x. With chunk C (a power of two) the two rates are:
//  - high rate, C = next_pow2(m): original i sits at point C + i, recovery j at point j
//    (points m .. C-1 unused). Codewords are the evaluations of the polynomials of degree
//    < 65536 - C that vanish on every point past C + k.
//  - low rate, C = next_pow2(k): original i at point i (points k .. C-1 hold zero),
//    recovery j at point C + j. Codewords: evaluations of the polynomials of degree < C.
// geometry() picks the rate exactly as the crate's DefaultRate does; with more than one
// chunk the two rates give different codes, so a decoder must use the encoder's rate.
// GF(2^8) (Gf::k8, family rs-fft:k=,m=,gf=8) is Leopard-RS's ff8 code as klauspost/reedsolomon's
// New(k, m, WithLeopardGF(true)) writes it for k + m <= 256: the high rate always, every
// element one byte (a shard's bytes in order), recovery shards equal byte for byte. Every
// function below takes the field last (default GF(2^16)); a Geometry carries it.
// Everything here is thread-safe: no state beyond the field tables, built once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codes/rs_fft_field.h"
#include "ecjit/status.h"

namespace ecjit::codes::fft {

// `count` shards of `len` GF(2^16) elements each, contiguous, shard-major, zero-filled on
// construction. Elements are in natural order (already unpacked from the byte layout).
class Shards {
 public:
  Shards() = default;
  Shards(size_t count, size_t len) : count_(count), len_(len), data_(count * len, 0) {}
  size_t count() const { return count_; }
  size_t len() const { return len_; }
  uint16_t *operator[](size_t i) { return data_.data() + i * len_; }
  const uint16_t *operator[](size_t i) const { return data_.data() + i * len_; }
  // Shards [first, last) = 0.
  void zero(size_t first, size_t last);

 private:
  size_t count_ = 0;
  size_t len_ = 0;
  std::vector<uint16_t> data_;
};

// ---- Transforms. Both work in place on shards [pos, pos + size) of `data`; size is a
// power of two; the transform evaluates / interpolates at points skew_offset + i. ----
//
// fft: decimation in time, layers of half-width dist = size/2, size/4, .., 1. In the layer
// of half-width dist, the block starting at r (r a multiple of 2*dist, r < truncated) uses
// s = skew_logs()[skew_offset + r + dist - 1] and, for r <= i < r + dist,
//   a = data[pos+i], b = data[pos+i+dist]:  a ^= mul_log(b, s) (skipped if s == kModulus);
//                                            b ^= a.
// Maps the coefficients (LCH novel basis X_0 .. X_{size-1}) of a polynomial to its values at
// points skew_offset + i. Only outputs [0, truncated) are computed (blocks at or past
// truncated are skipped, so later outputs hold garbage unless the input there was 0).
// skew_offset must be a multiple of size with skew_offset + size <= the field's order (so
// every twiddle index is below its modulus); pos + size <= data.count(); truncated <= size.
void fft(Shards &data, size_t pos, size_t size, size_t truncated, size_t skew_offset, Gf gf = Gf::k16);

// ifft: the inverse, layers dist = 1, 2, .., size/2, butterfly b ^= a; a ^= mul_log(b, s)
// (skipped if s == kModulus), same block / twiddle indexing. Inputs [truncated, size) must
// be zero (those blocks are skipped); then all `size` outputs are valid.
void ifft(Shards &data, size_t pos, size_t size, size_t truncated, size_t skew_offset, Gf gf = Gf::k16);

// The formal derivative in the novel basis as the crate computes it, over shards
// [0, count), count a power of two: for i = 1 .. count-1 in order, with w = 1 << ctz(i),
// data[i - w + t] ^= data[i + t] for t < w.
void formal_derivative(Shards &data, size_t count);

// Erasure-locator logs on the n = erased.size() points 0 .. n-1 (n a power of two, at most
// the field's order):
//   out[i] = sum over erased e != i of log_of(i ^ e)  (mod the field's modulus, below it),
// i.e. log prod_{e erased} (x - e) at a kept point x = i, and log of its derivative at an
// erased point. Computed as a XOR convolution by three Walsh-Hadamard transforms mod 65535
// (the crate's LogWalsh method on the 2^R points in use; the crate's extra erased points
// outside them change both values by the same constant factor, which cancels).
std::vector<uint16_t> erasure_logs(const std::vector<bool> &erased, Gf gf = Gf::k16);

// ---- Parameters ----
enum class Rate : uint8_t { kHigh, kLow };

// Where everything sits for (k, m). All counts are shards.
struct Geometry {
  unsigned k = 0, m = 0;
  Gf gf = Gf::k16;
  Rate rate = Rate::kHigh;
  size_t chunk = 0;        // C: next_pow2(m) (high) or next_pow2(k) (low)
  size_t decode_work = 0;  // n: next_pow2(C + k) (high) or next_pow2(C + m) (low)
  size_t original_pos = 0; // point of original 0: C (high) or 0 (low)
  size_t recovery_pos = 0; // point of recovery 0: 0 (high) or C (low)
  size_t decode_end = 0;   // C + k (high) or C + m (low): points past it are 0 (high) or
                           // always erased (low)
};

// The crate's DefaultRate rule. Supported: 1 <= k, m and
//   min(next_pow2(k), next_pow2(m)) + max(k, m) <= 65536
// (so k, m <= 65535; e.g. 32768:32768, 65535:1, 1:65535, 61440:4096 are fine, 32769:32768
// is not). GF(2^8): the high rate always (Leopard-RS has no other), supported where
// next_pow2(m) + k <= 256 (so k + m <= 256 never suffices alone: 6:250 needs 262 points).
// GF(2^16) rate: low if next_pow2(k) < next_pow2(m), high if greater; on a tie, high if
// k <= m and low otherwise (the crate picks the "wrong" rate on purpose there). On a tie
// both rates have one chunk and give the same code (each one's points are the other's plus
// C, and translation preserves these codes), so only the strict cases change the output.
// Errors: kInvalidSpec naming the rule.
Result<Geometry> geometry(unsigned k, unsigned m, Gf gf = Gf::k16);
// The smallest power of two >= x (1 for 0): the rule behind every size above.
uint64_t next_pow2(uint64_t x);

// Shard lengths the format takes: GF(2^16) nonzero and even (2 bytes per element); GF(2^8)
// nonzero (klauspost's codec itself takes multiples of 64 bytes; the code is the same
// element by element at any length). Errors: kShardSize.
Status check_shard_bytes(size_t shard_bytes, Gf gf = Gf::k16);

// ---- Byte layout of one shard of B bytes (B/2 elements) ----
// Whole 64-byte chunks hold 32 elements: bytes 0..31 the low bytes of elements 0..31,
// bytes 32..63 their high bytes. A final partial chunk of t = B % 64 bytes holds h = t/2
// elements: its first h bytes are their low bytes, the next h their high bytes.
// GF(2^8): element i is byte i.
void unpack_shard(const uint8_t *bytes, size_t shard_bytes, uint16_t *elements, Gf gf = Gf::k16);
void pack_shard(const uint16_t *elements, size_t shard_bytes, uint8_t *bytes, Gf gf = Gf::k16);
// Elements in a shard of shard_bytes: shard_bytes / 2 (GF(2^16)), shard_bytes (GF(2^8)).
inline size_t shard_elements(size_t shard_bytes, Gf gf = Gf::k16) {
  return gf == Gf::k8 ? shard_bytes : shard_bytes / 2;
}

// ---- Encode / decode on elements (len elements per shard, any len >= 1) ----
// Encode: recovery[j] (m pointers) = recovery shard j of originals orig[0..k). The originals
// stay as they are. Errors: kInvalidSpec, kNullPointer.
Status encode(unsigned k, unsigned m, size_t len, const uint16_t *const *orig,
              uint16_t *const *recovery, Gf gf = Gf::k16);

// Decode: shards has k + m pointers, originals then recovery, nullptr = missing; at least k
// must be present. Writes each missing original i to out_originals[i] (k pointers; entries
// of present originals are ignored and may be null). If out_recovery is not null (m
// pointers), also writes each missing recovery j whose out_recovery[j] is not null. Present
// shards are only read. Errors: kInvalidSpec, kNullPointer, kTooManyErasures.
Status decode(unsigned k, unsigned m, size_t len, const uint16_t *const *shards,
              uint16_t *const *out_originals, uint16_t *const *out_recovery = nullptr, Gf gf = Gf::k16);

// ---- The same on the crate's byte layout (shard_bytes per shard) ----
// Errors: those of encode / decode, and kShardSize when check_shard_bytes fails.
Status encode_bytes(unsigned k, unsigned m, size_t shard_bytes, const uint8_t *const *orig,
                    uint8_t *const *recovery, Gf gf = Gf::k16);
Status decode_bytes(unsigned k, unsigned m, size_t shard_bytes, const uint8_t *const *shards,
                    uint8_t *const *out_originals, uint8_t *const *out_recovery = nullptr, Gf gf = Gf::k16);

}  // namespace ecjit::codes::fft
