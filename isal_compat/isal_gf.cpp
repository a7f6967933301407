// ISA-L's GF(2^8) basics: log/antilog arithmetic, nibble tables, rs/cauchy generators, Gauss-Jordan inversion.
#include "isal_compat/isal_gf.h"

#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ecjit::isal {
namespace {

struct Tables {
  uint8_t exp[256];       // exp[i] = 2^i, i = 0..254 (exp[255] unused)
  uint8_t log[256];       // log[exp[i]] = i; log[0] unused
  uint8_t nibble[256][32];
  Tables() {
    unsigned x = 1;
    for (int i = 0; i < 255; ++i) {
      exp[i] = uint8_t(x);
      log[x] = uint8_t(i);
      x <<= 1;
      if (x & 0x100) x ^= 0x11d;
    }
    exp[255] = exp[0];
    log[0] = 0;
    for (int c = 0; c < 256; ++c)
      for (int i = 0; i < 16; ++i) {
        nibble[c][i] = mul(uint8_t(c), uint8_t(i));
        nibble[c][16 + i] = mul(uint8_t(c), uint8_t(i << 4));
      }
  }
  uint8_t mul(uint8_t a, uint8_t b) const {
    if (a == 0 || b == 0) return 0;
    int i = log[a] + log[b];
    return exp[i > 254 ? i - 255 : i];
  }
};

const Tables &tables() {
  static const Tables *t = new Tables();  // leaked: usable from atexit handlers
  return *t;
}

}  // namespace

uint8_t gf_mul(uint8_t a, uint8_t b) { return tables().mul(a, b); }

uint8_t gf_inv(uint8_t a) {
  if (a == 0) return 0;
  const Tables &t = tables();
  return t.exp[255 - t.log[a]];
}

const uint8_t *nibble_table(uint8_t c) { return tables().nibble[c]; }

bool is_genuine_table(const uint8_t *t) { return std::memcmp(t, nibble_table(t[1]), 32) == 0; }

void expand_nibble_table(const uint8_t *t, uint8_t p[256]) {
  for (int b = 0; b < 256; ++b) p[b] = uint8_t(t[b & 15] ^ t[16 + (b >> 4)]);
}

void expand_coefficient(uint8_t c, uint8_t p[256]) {
  const Tables &t = tables();
  for (int b = 0; b < 256; ++b) p[b] = t.mul(uint8_t(b), c);
}

void gen_rs_matrix(uint8_t *a, int m, int k) {
  if (m <= 0 || k <= 0) return;
  std::memset(a, 0, size_t(k) * size_t(m));
  for (int i = 0; i < k; i++) a[k * i + i] = 1;
  uint8_t gen = 1;
  for (int i = k; i < m; i++) {
    uint8_t p = 1;
    for (int j = 0; j < k; j++) {
      a[k * i + j] = p;
      p = gf_mul(p, gen);
    }
    gen = gf_mul(gen, 2);
  }
}

void gen_cauchy1_matrix(uint8_t *a, int m, int k) {
  if (m <= 0 || k <= 0) return;
  std::memset(a, 0, size_t(k) * size_t(m));
  for (int i = 0; i < k; i++) a[k * i + i] = 1;
  uint8_t *p = &a[k * k];
  for (int i = k; i < m; i++)
    for (int j = 0; j < k; j++) *p++ = gf_inv(uint8_t(i ^ j));
}

namespace {

// row[0..n) = c * row[0..n), and dst[0..n) ^= c * src[0..n): two lookups in c's nibble
// table per byte, inline (the decode of a new erasure set inverts a k x k matrix per call;
// an out-of-line log/antilog gf_mul per byte was a third of a 4 KiB degraded read).
inline void scale_row(uint8_t *row, const uint8_t *t, int n) {
  for (int c = 0; c < n; c++) row[c] = uint8_t(t[row[c] & 15] ^ t[16 + (row[c] >> 4)]);
}
inline void add_scaled_row(uint8_t *dst, const uint8_t *src, const uint8_t *t, int n) {
  for (int c = 0; c < n; c++) dst[c] ^= uint8_t(t[src[c] & 15] ^ t[16 + (src[c] >> 4)]);
}

}  // namespace

#if defined(__x86_64__)
// The same Gauss-Jordan elimination with each row of n <= 16 bytes in one SSE register: a
// row times a constant is two PSHUFB lookups in its nibble tables. Same operations in the
// same order as the scalar one below (rows padded with zeros, which stay zero), so in and out
// end byte-identical, also when it stops at a singular column. A degraded read through
// ISA-L's API inverts a k x k matrix per call: at 4 KiB shards the scalar loops were twice
// the kernel's time.
// x times the constant of a 32-byte nibble table (16 bytes c * v, then c * (v << 4)).
__attribute__((target("ssse3"))) inline __m128i nibble_times(__m128i x, const uint8_t *tab) {
  const __m128i low = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i *>(tab));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i *>(tab + 16));
  return _mm_xor_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, low)),
                       _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), low)));
}

__attribute__((target("ssse3"))) int invert_matrix_ssse3(uint8_t *in, uint8_t *out, int n) {
  const Tables &t = tables();
  alignas(16) uint8_t a[16][16] = {}, b[16][16] = {};
  for (int r = 0; r < n; ++r) {
    std::memcpy(a[r], &in[r * n], size_t(n));
    b[r][r] = 1;
  }
  auto row = [](uint8_t (*m)[16], int r) { return reinterpret_cast<__m128i *>(m[r]); };
  int result = 0;
  for (int i = 0; i < n && result == 0; i++) {
    if (a[i][i] == 0) {
      int j = i + 1;
      while (j < n && a[j][i] == 0) j++;
      if (j == n) {
        result = -1;
        break;
      }
      std::swap(*row(a, i), *row(a, j));
      std::swap(*row(b, i), *row(b, j));
    }
    const uint8_t *inv = t.nibble[gf_inv(a[i][i])];
    *row(a, i) = nibble_times(*row(a, i), inv);
    *row(b, i) = nibble_times(*row(b, i), inv);
    for (int j = 0; j < n; j++) {
      const uint8_t f = a[j][i];
      if (j == i || f == 0) continue;
      const uint8_t *tf = t.nibble[f];
      *row(b, j) = _mm_xor_si128(*row(b, j), nibble_times(*row(b, i), tf));
      *row(a, j) = _mm_xor_si128(*row(a, j), nibble_times(*row(a, i), tf));
    }
  }
  for (int r = 0; r < n; ++r) {
    std::memcpy(&in[r * n], a[r], size_t(n));
    std::memcpy(&out[r * n], b[r], size_t(n));
  }
  return result;
}
#endif

int invert_matrix(uint8_t *in, uint8_t *out, int n) {
#if defined(__x86_64__)
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  if (ssse3 && n >= 1 && n <= 16) return invert_matrix_ssse3(in, out, n);
#endif
  const Tables &t = tables();
  for (int i = 0; i < n * n; i++) out[i] = 0;
  for (int i = 0; i < n; i++) out[i * n + i] = 1;
  for (int i = 0; i < n; i++) {
    if (in[i * n + i] == 0) {  // find a row below with a nonzero pivot and swap
      int j = i + 1;
      while (j < n && in[j * n + i] == 0) j++;
      if (j == n) return -1;
      for (int c = 0; c < n; c++) {
        uint8_t x = in[i * n + c];
        in[i * n + c] = in[j * n + c];
        in[j * n + c] = x;
        x = out[i * n + c];
        out[i * n + c] = out[j * n + c];
        out[j * n + c] = x;
      }
    }
    const uint8_t *inv = t.nibble[gf_inv(in[i * n + i])];
    scale_row(&in[i * n], inv, n);
    scale_row(&out[i * n], inv, n);
    for (int j = 0; j < n; j++) {
      const uint8_t f = in[j * n + i];
      if (j == i || f == 0) continue;  // adding 0 x row i changes nothing
      const uint8_t *tf = t.nibble[f];
      add_scaled_row(&out[j * n], &out[i * n], tf, n);
      add_scaled_row(&in[j * n], &in[i * n], tf, n);
    }
  }
  return 0;
}

}  // namespace ecjit::isal
