// The portable twin of every ISA-L compat kernel: full 256-entry product tables, one lookup per byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ecjit::isal {

// out[r][i] (^)= XOR over c of products[(r * cols + c) * 256 + in[c][i]], for i < len.
// `accumulate` false overwrites out. Used when the JIT is off or failed, and for tables
// that are not ec_init_tables output (where ISA-L's per-ISA kernels compute
// lo[b & 15] ^ hi[b >> 4], which is not a GF(2^8) product).
void table_kernel(const uint8_t *products, int rows, int cols, bool accumulate,
                  const uint8_t *const *in, uint8_t *const *out, size_t len);

// XOR parity check over `n` buffers (ISA-L xor_check): 0 when every byte XORs to zero.
int xor_check_portable(int n, size_t len, void *const *array);
// P+Q check (ISA-L pq_check_base): sources array[0..n-3], P = array[n-2], Q = array[n-1].
// 0 when consistent, else ISA-L's code for the first bad byte i: i | 1 (P), i | 2 (Q).
int pq_check_portable(int n, size_t len, void *const *array);

}  // namespace ecjit::isal
