// region_xor: dst (^)= the XOR of n source regions, for rows of a strided layout - the one
// uncompiled region XOR of the runtime (schedule runner, ranged array-code reads).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ecjit::runtime {

// For each of `rows` rows r: dst + r dst_stride (^)= XOR of src[s] + r src_stride[s],
// s < n, over `bytes` (any count; no alignment needed). Overwrites when !accumulate (n = 0
// then zeroes). src_stride may be null when rows == 1. The sum stays in registers; on x86
// an AVX-512 or AVX2 clone is picked at load time (the library is built for the baseline ISA).
void xor_regions(uint8_t *dst, size_t dst_stride, const uint8_t *const *src, const size_t *src_stride, unsigned n,
                 size_t rows, size_t bytes, bool accumulate);

// One row: dst = XOR of src[0..n) over `bytes` (zeros when n = 0).
inline void xor_regions(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t bytes) {
  xor_regions(dst, 0, src, nullptr, n, 1, bytes, false);
}

}  // namespace ecjit::runtime
