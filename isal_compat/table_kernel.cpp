// Portable product-table kernel and the XOR / P+Q checks (64-bit SWAR).
#include "isal_compat/table_kernel.h"

#include <algorithm>
#include <cstring>

namespace ecjit::isal {

void table_kernel(const uint8_t *products, int rows, int cols, bool accumulate,
                  const uint8_t *const *in, uint8_t *const *out, size_t len) {
  constexpr size_t kChunk = 4096;  // keeps one chunk of every input and output in L1/L2
  for (size_t off = 0; off < len; off += kChunk) {
    const size_t n = std::min(kChunk, len - off);
    for (int r = 0; r < rows; ++r) {
      uint8_t *o = out[r] + off;
      int c = 0;
      if (!accumulate) {
        if (cols == 0) {
          std::memset(o, 0, n);
          continue;
        }
        const uint8_t *p = products + size_t(r) * cols * 256;
        const uint8_t *s = in[0] + off;
        for (size_t i = 0; i < n; ++i) o[i] = p[s[i]];
        c = 1;
      }
      for (; c < cols; ++c) {
        const uint8_t *p = products + (size_t(r) * cols + c) * 256;
        const uint8_t *s = in[c] + off;
        for (size_t i = 0; i < n; ++i) o[i] ^= p[s[i]];
      }
    }
  }
}

namespace {

inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Multiplies each of 8 packed bytes by 2 in GF(2^8) mod 0x11d.
inline uint64_t mul2x8(uint64_t q) {
  const uint64_t hi = (q >> 7) & 0x0101010101010101ull;
  return ((q & 0x7f7f7f7f7f7f7f7full) << 1) ^ (hi * 0x1d);
}

}  // namespace

int xor_check_portable(int n, size_t len, void *const *array) {
  if (n < 1) return 1;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t x = 0;
    for (int j = 0; j < n; ++j) x ^= load64(static_cast<const uint8_t *>(array[j]) + i);
    if (x) return 1;
  }
  for (; i < len; ++i) {
    uint8_t x = 0;
    for (int j = 0; j < n; ++j) x ^= static_cast<const uint8_t *>(array[j])[i];
    if (x) return 1;
  }
  return 0;
}

int pq_check_portable(int n, size_t len, void *const *array) {
  if (n < 4) return 1;
  auto at = [array](int j) { return static_cast<const uint8_t *>(array[j]); };
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {  // fast scan; a mismatching word is redone byte by byte
    uint64_t p = load64(at(n - 3) + i), q = p;
    for (int j = n - 4; j >= 0; --j) {
      const uint64_t s = load64(at(j) + i);
      p ^= s;
      q = s ^ mul2x8(q);
    }
    if (p != load64(at(n - 2) + i) || q != load64(at(n - 1) + i)) break;
  }
  for (; i < len; ++i) {
    uint8_t p = at(n - 3)[i], q = p;
    for (int j = n - 4; j >= 0; --j) {
      const uint8_t s = at(j)[i];
      p ^= s;
      q = uint8_t(s ^ ((q << 1) ^ ((q & 0x80) ? 0x1d : 0)));
    }
    if (p != at(n - 2)[i]) return int(i | 1);
    if (q != at(n - 1)[i]) return int(i | 2);
  }
  return 0;
}

}  // namespace ecjit::isal
