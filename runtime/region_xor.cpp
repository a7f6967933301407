// region_xor: 128-byte steps of two 64-byte accumulators (AVX-512, AVX2 or SSE2 clones), then 64, words, bytes.
#include "runtime/region_xor.h"

#include <cstring>

namespace ecjit::runtime {

// Not cloned under the sanitizers: the clones' ifunc resolver runs during relocation, before
// their runtime is up (TSan: a crash at start-up).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ECJIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ECJIT_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__)) && !defined(ECJIT_SANITIZED)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void xor_regions_cloned(uint8_t *dst, size_t dst_stride, const uint8_t *const *src, const size_t *src_stride,
                               unsigned n, size_t rows, size_t bytes, bool accumulate) {
  // 64-byte lanes: one zmm register with AVX-512, two ymm with AVX2.
  typedef uint64_t v8 __attribute__((vector_size(64), aligned(1)));
  constexpr unsigned kLocal = 32;  // sources whose row pointers are kept in a local array
  const uint8_t *row_src[kLocal];
  for (size_t r = 0; r < rows; ++r, dst += dst_stride) {
    auto at = [&](unsigned s, size_t i) { return src[s] + (src_stride ? r * src_stride[s] : 0) + i; };
    size_t i = 0;
    if (n <= kLocal) {
      // The row's pointers once (dst may alias src[], so the compiler cannot keep them),
      // then 128 bytes a step: two accumulators per source pointer.
      for (unsigned s = 0; s < n; ++s) row_src[s] = at(s, 0);
      for (; i + 128 <= bytes; i += 128) {
        v8 a0, a1, x;
        if (accumulate) {
          std::memcpy(&a0, dst + i, 64);
          std::memcpy(&a1, dst + i + 64, 64);
        } else {
          a0 = v8{};
          a1 = a0;
        }
        for (unsigned s = 0; s < n; ++s) {
          const uint8_t *p = row_src[s] + i;
          std::memcpy(&x, p, 64);
          a0 ^= x;
          std::memcpy(&x, p + 64, 64);
          a1 ^= x;
        }
        std::memcpy(dst + i, &a0, 64);
        std::memcpy(dst + i + 64, &a1, 64);
      }
    }
    for (; i + 64 <= bytes; i += 64) {
      v8 a, x;
      if (accumulate) std::memcpy(&a, dst + i, 64);
      else a = v8{};
      for (unsigned s = 0; s < n; ++s) {
        std::memcpy(&x, at(s, i), 64);
        a ^= x;
      }
      std::memcpy(dst + i, &a, 64);
    }
    for (; i + 8 <= bytes; i += 8) {
      uint64_t a = 0, x;
      if (accumulate) std::memcpy(&a, dst + i, 8);
      for (unsigned s = 0; s < n; ++s) {
        std::memcpy(&x, at(s, i), 8);
        a ^= x;
      }
      std::memcpy(dst + i, &a, 8);
    }
    for (; i < bytes; ++i) {
      uint8_t a = accumulate ? dst[i] : 0;
      for (unsigned s = 0; s < n; ++s) a ^= *at(s, i);
      dst[i] = a;
    }
  }
}

// The header's inline overload calls this one, so the clones live behind it.
void xor_regions(uint8_t *dst, size_t dst_stride, const uint8_t *const *src, const size_t *src_stride, unsigned n,
                 size_t rows, size_t bytes, bool accumulate) {
  xor_regions_cloned(dst, dst_stride, src, src_stride, n, rows, bytes, accumulate);
}

}  // namespace ecjit::runtime
