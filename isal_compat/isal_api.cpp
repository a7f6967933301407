// The exported C ABI of libisal.so.2: ISA-L 2.30's erasure-code and RAID functions over ecjit kernels.
//
// Semantics follow ISA-L exactly, including what differs between its entry points:
//   *_base            read only byte 1 (the coefficient) of each 32-byte table;
//   *_sse/_avx/...    read the whole nibble table; below the tier's minimum length the
//                     ec_encode_data* ones fall back to _base and the gf_*vect_* ones
//                     write nothing (as ISA-L's assembly does);
//   dispatched names  pick the tier ISA-L 2.30's dispatcher would pick on this CPU.
#include <cstring>
#include <vector>

#include "isal_compat/ecjit_isal_compat.h"
#include "isal_compat/isa_tier.h"
#include "isal_compat/isal_gf.h"
#include "isal_compat/table_kernel.h"
#include "isal_compat/transform.h"

#define ECJIT_ISAL_API extern "C" __attribute__((visibility("default")))

namespace ecjit::isal {
namespace {

using u8 = unsigned char;
using T = IsaTier;

Reading table_reading(IsaTier t, int len) {
  if (t == T::kBase) return Reading::kTableCoefficient;
  return len < min_len(t) ? Reading::kCoefficientUnlessGenuine : Reading::kNibble;
}

void zero_rows(int rows, u8 **out, int len) {
  for (int r = 0; r < rows; ++r) std::memset(out[r], 0, size_t(len));
}

void encode(T t, int len, int k, int rows, const u8 *g, u8 **data, u8 **coding) {
  if (len <= 0 || rows <= 0) return;
  if (k <= 0) return zero_rows(rows, coding, len);
  run_transform({g, rows, k, k, table_reading(t, len), false}, data, coding, size_t(len));
}

void update(T t, int len, int k, int rows, int vec_i, const u8 *g, u8 *data, u8 **coding) {
  if (len <= 0 || rows <= 0 || k <= 0) return;
  const u8 *in[1] = {data};
  run_transform({g + 32 * size_t(vec_i), rows, 1, k, table_reading(t, len), true}, in, coding,
                size_t(len));
}

// gf_vect_dot_prod / gf_Nvect_dot_prod: N outputs; the per-ISA kernels need len >= min
// (gf_vect_dot_prod_avx512, the one-output AVX-512 kernel, accepts 32 bytes already).
void dot_prod(T t, int n, int len, int vlen, const u8 *g, u8 **src, u8 **dest) {
  const int min = n == 1 && t == T::kAvx512 ? 32 : min_len(t);
  if (t != T::kBase && len < min) return;
  if (len <= 0) return;
  if (vlen <= 0) return zero_rows(n, dest, len);
  const Reading r = t == T::kBase ? Reading::kTableCoefficient : Reading::kNibble;
  run_transform({g, n, vlen, vlen, r, false}, src, dest, size_t(len));
}

// gf_vect_mad / gf_Nvect_mad: dest[r] ^= T(r * vec + vec_i) (src).
void mad(T t, int n, int len, int vec, int vec_i, const u8 *g, u8 *src, u8 **dest) {
  if (t != T::kBase && len < min_len(t)) return;
  if (len <= 0) return;
  const Reading r = t == T::kBase ? Reading::kTableCoefficient : Reading::kNibble;
  const u8 *in[1] = {src};
  run_transform({g + 32 * size_t(vec_i), n, 1, vec, r, true}, in, dest, size_t(len));
}

// ISA-L 2.30's gf_vect_mul_sse/_avx return nonzero for len <= 0 or len % 32 != 0 but
// still write whole 32-byte blocks past len; here they return -1 and write nothing. The
// base version (void in ISA-L 2.30's header) multiplies exactly len bytes.
int vect_mul(T t, int len, const u8 *tbl, void *src, void *dest) {
  if (t != T::kBase && (len <= 0 || len % 32 != 0)) return -1;
  if (len <= 0) return 0;
  const u8 *in[1] = {static_cast<const u8 *>(src)};
  u8 *out[1] = {static_cast<u8 *>(dest)};
  const Reading r = t == T::kBase ? Reading::kTableCoefficient : Reading::kNibble;
  run_transform({tbl, 1, 1, 1, r, false}, in, out, size_t(len));
  return 0;
}

const u8 *ones() {
  static const std::vector<u8> v(4096, 1);
  return v.data();
}

// Length alignment ISA-L's pq_gen/pq_check kernels demand (they return 1 otherwise);
// pq_gen_avx512 works on 32-byte blocks like pq_gen_avx2 (measured against ISA-L 2.30).
int pq_align(T t) {
  switch (t) {
    case T::kBase: return 1;
    case T::kSse:
    case T::kAvx: return 16;
    case T::kAvx2:
    case T::kAvx512: return 32;
  }
  return 1;
}

// XOR of array[0..vects-2] into array[vects-1]. ISA-L's vector versions need vects >= 3.
int xor_gen_impl(T t, int vects, int len, void **array) {
  if (vects < (t == T::kBase ? 1 : 3)) return 1;
  if (len <= 0 || vects == 1) return 0;  // base with one vector: array[0] = array[0]
  const int n = vects - 1;
  u8 *out[1] = {static_cast<u8 *>(array[vects - 1])};
  if (n > 4096) {  // beyond any sane RAID width: plain loop
    for (int i = 0; i < len; ++i) {
      u8 p = 0;
      for (int j = 0; j < n; ++j) p ^= static_cast<const u8 *>(array[j])[i];
      out[0][i] = p;
    }
    return 0;
  }
  run_transform({ones(), 1, n, n, Reading::kPlainCoefficient, false},
                reinterpret_cast<const u8 *const *>(array), out, size_t(len));
  return 0;
}

// P = XOR of the sources, Q = sum 2^j * source j, into array[vects-2], array[vects-1].
int pq_gen_impl(T t, int vects, int len, void **array) {
  if (vects < 4) return 1;  // (ISA-L's base version reads array[-1] here)
  if (len % pq_align(t) != 0) return 1;
  if (len <= 0) return 0;
  const int n = vects - 2;
  std::vector<u8> heap;
  u8 stack[2 * 256];
  u8 *m = stack;
  if (n > 256) {
    heap.resize(2 * size_t(n));
    m = heap.data();
  }
  u8 x = 1;
  for (int j = 0; j < n; ++j) {
    m[j] = 1;
    m[n + j] = x;
    x = gf_mul(x, 2);
  }
  u8 *out[2] = {static_cast<u8 *>(array[vects - 2]), static_cast<u8 *>(array[vects - 1])};
  run_transform({m, 2, n, n, Reading::kPlainCoefficient, false},
                reinterpret_cast<const u8 *const *>(array), out, size_t(len));
  return 0;
}

// 0 when the vectors XOR to zero. ISA-L's base version returns len on a mismatch, its
// SSE version 1 (and 1 for fewer than two vectors).
int xor_check_impl(T t, int vects, int len, void **array) {
  if (vects < (t == T::kBase ? 1 : 2)) return 1;
  if (len <= 0) return 0;
  if (xor_check_portable(vects, size_t(len), array) == 0) return 0;
  return t == T::kBase ? len : 1;
}

int pq_check_impl(T t, int vects, int len, void **array) {
  if (vects < 4) return 1;
  if (len % pq_align(t) != 0) return 1;
  if (len <= 0) return 0;
  const int r = pq_check_portable(vects, size_t(len), array);
  return t == T::kBase || r == 0 ? r : 1;
}

}  // namespace
}  // namespace ecjit::isal

using namespace ecjit::isal;
using u8 = unsigned char;

// ---- GF(2^8) basics and matrices ----
ECJIT_ISAL_API unsigned char gf_mul(unsigned char a, unsigned char b) { return ecjit::isal::gf_mul(a, b); }
ECJIT_ISAL_API unsigned char gf_inv(unsigned char a) { return ecjit::isal::gf_inv(a); }
ECJIT_ISAL_API void gf_gen_rs_matrix(unsigned char *a, int m, int k) { gen_rs_matrix(a, m, k); }
ECJIT_ISAL_API void gf_gen_cauchy1_matrix(unsigned char *a, int m, int k) { gen_cauchy1_matrix(a, m, k); }
ECJIT_ISAL_API int gf_invert_matrix(unsigned char *in_mat, unsigned char *out_mat, const int n) {
  return invert_matrix(in_mat, out_mat, n);
}
ECJIT_ISAL_API void gf_vect_mul_init(unsigned char c, unsigned char *gftbl) {
  std::memcpy(gftbl, nibble_table(c), 32);
}
ECJIT_ISAL_API void ec_init_tables(int k, int rows, unsigned char *a, unsigned char *gftbls) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j, gftbls += 32) std::memcpy(gftbls, nibble_table(*a++), 32);
}

// ---- ec_encode_data, ec_encode_data_update: dispatched and per-ISA names ----
#define ECJIT_EC_ENCODE(NAME, TIER)                                                          \
  ECJIT_ISAL_API void NAME(int len, int k, int rows, unsigned char *g, unsigned char **data, \
                           unsigned char **coding) {                                         \
    encode(TIER, len, k, rows, g, data, coding);                                             \
  }
ECJIT_EC_ENCODE(ec_encode_data, host_tier())
ECJIT_EC_ENCODE(ec_encode_data_base, T::kBase)
ECJIT_EC_ENCODE(ec_encode_data_sse, T::kSse)
ECJIT_EC_ENCODE(ec_encode_data_avx, T::kAvx)
ECJIT_EC_ENCODE(ec_encode_data_avx2, T::kAvx2)
ECJIT_EC_ENCODE(ec_encode_data_avx512, T::kAvx512)

#define ECJIT_EC_UPDATE(NAME, TIER)                                                              \
  ECJIT_ISAL_API void NAME(int len, int k, int rows, int vec_i, unsigned char *g,                \
                           unsigned char *data, unsigned char **coding) {                        \
    update(TIER, len, k, rows, vec_i, g, data, coding);                                          \
  }
ECJIT_EC_UPDATE(ec_encode_data_update, host_tier())
ECJIT_EC_UPDATE(ec_encode_data_update_base, T::kBase)
ECJIT_EC_UPDATE(ec_encode_data_update_sse, T::kSse)
ECJIT_EC_UPDATE(ec_encode_data_update_avx, T::kAvx)
ECJIT_EC_UPDATE(ec_encode_data_update_avx2, T::kAvx2)
ECJIT_EC_UPDATE(ec_encode_data_update_avx512, T::kAvx512)

// ---- gf_vect_dot_prod and gf_{2..6}vect_dot_prod ----
#define ECJIT_DOT1(NAME, TIER)                                                               \
  ECJIT_ISAL_API void NAME(int len, int vlen, unsigned char *g, unsigned char **src,         \
                           unsigned char *dest) {                                            \
    dot_prod(TIER, 1, len, vlen, g, src, &dest);                                             \
  }
ECJIT_DOT1(gf_vect_dot_prod, cap(host_tier(), T::kAvx2))
ECJIT_DOT1(gf_vect_dot_prod_base, T::kBase)
ECJIT_DOT1(gf_vect_dot_prod_sse, T::kSse)
ECJIT_DOT1(gf_vect_dot_prod_avx, T::kAvx)
ECJIT_DOT1(gf_vect_dot_prod_avx2, T::kAvx2)
ECJIT_DOT1(gf_vect_dot_prod_avx512, T::kAvx512)

#define ECJIT_DOTN(N, ISA, TIER)                                                               \
  ECJIT_ISAL_API void gf_##N##vect_dot_prod_##ISA(int len, int vlen, unsigned char *g,         \
                                                  unsigned char **src, unsigned char **dest) { \
    dot_prod(TIER, N, len, vlen, g, src, dest);                                                \
  }
#define ECJIT_DOTN_ALL(N) \
  ECJIT_DOTN(N, sse, T::kSse) ECJIT_DOTN(N, avx, T::kAvx) ECJIT_DOTN(N, avx2, T::kAvx2) ECJIT_DOTN(N, avx512, T::kAvx512)
ECJIT_DOTN_ALL(2)
ECJIT_DOTN_ALL(3)
ECJIT_DOTN_ALL(4)
ECJIT_DOTN_ALL(5)
ECJIT_DOTN_ALL(6)

// ---- gf_vect_mad and gf_{2..6}vect_mad ----
#define ECJIT_MAD1(NAME, TIER)                                                               \
  ECJIT_ISAL_API void NAME(int len, int vec, int vec_i, unsigned char *g, unsigned char *src, \
                           unsigned char *dest) {                                            \
    mad(TIER, 1, len, vec, vec_i, g, src, &dest);                                            \
  }
ECJIT_MAD1(gf_vect_mad, host_tier())
ECJIT_MAD1(gf_vect_mad_base, T::kBase)
ECJIT_MAD1(gf_vect_mad_sse, T::kSse)
ECJIT_MAD1(gf_vect_mad_avx, T::kAvx)
ECJIT_MAD1(gf_vect_mad_avx2, T::kAvx2)
ECJIT_MAD1(gf_vect_mad_avx512, T::kAvx512)

#define ECJIT_MADN(N, ISA, TIER)                                                               \
  ECJIT_ISAL_API void gf_##N##vect_mad_##ISA(int len, int vec, int vec_i, unsigned char *g,    \
                                             unsigned char *src, unsigned char **dest) {       \
    mad(TIER, N, len, vec, vec_i, g, src, dest);                                               \
  }
#define ECJIT_MADN_ALL(N) \
  ECJIT_MADN(N, sse, T::kSse) ECJIT_MADN(N, avx, T::kAvx) ECJIT_MADN(N, avx2, T::kAvx2) ECJIT_MADN(N, avx512, T::kAvx512)
ECJIT_MADN_ALL(2)
ECJIT_MADN_ALL(3)
ECJIT_MADN_ALL(4)
ECJIT_MADN_ALL(5)
ECJIT_MADN_ALL(6)

// ---- gf_vect_mul ----
#define ECJIT_MUL(NAME, TIER)                                                          \
  ECJIT_ISAL_API int NAME(int len, unsigned char *tbl, void *src, void *dest) {        \
    return vect_mul(TIER, len, tbl, src, dest);                                        \
  }
ECJIT_MUL(gf_vect_mul, cap(host_tier(), T::kAvx))
ECJIT_MUL(gf_vect_mul_base, T::kBase)
ECJIT_MUL(gf_vect_mul_sse, T::kSse)
ECJIT_MUL(gf_vect_mul_avx, T::kAvx)

// ---- raid.h ----
#define ECJIT_RAID(NAME, FN, TIER) \
  ECJIT_ISAL_API int NAME(int vects, int len, void **array) { return FN(TIER, vects, len, array); }
ECJIT_RAID(xor_gen, xor_gen_impl, host_tier() == T::kAvx2 ? T::kAvx : host_tier())
ECJIT_RAID(xor_gen_base, xor_gen_impl, T::kBase)
ECJIT_RAID(xor_gen_sse, xor_gen_impl, T::kSse)
ECJIT_RAID(xor_gen_avx, xor_gen_impl, T::kAvx)
ECJIT_RAID(xor_gen_avx512, xor_gen_impl, T::kAvx512)
ECJIT_RAID(pq_gen, pq_gen_impl, host_tier())
ECJIT_RAID(pq_gen_base, pq_gen_impl, T::kBase)
ECJIT_RAID(pq_gen_sse, pq_gen_impl, T::kSse)
ECJIT_RAID(pq_gen_avx, pq_gen_impl, T::kAvx)
ECJIT_RAID(pq_gen_avx2, pq_gen_impl, T::kAvx2)
ECJIT_RAID(pq_gen_avx512, pq_gen_impl, T::kAvx512)

ECJIT_RAID(xor_check, xor_check_impl, cap(host_tier(), T::kSse))
ECJIT_RAID(xor_check_base, xor_check_impl, T::kBase)
ECJIT_RAID(xor_check_sse, xor_check_impl, T::kSse)
ECJIT_RAID(pq_check, pq_check_impl, cap(host_tier(), T::kSse))
ECJIT_RAID(pq_check_base, pq_check_impl, T::kBase)
ECJIT_RAID(pq_check_sse, pq_check_impl, T::kSse)

// ---- ecjit additions ----
ECJIT_ISAL_API const char *ecjit_isal_compat_version(void) {
  return "ecjit-isal-compat 0.1.0 (ISA-L 2.30 erasure-code ABI)";
}
ECJIT_ISAL_API const char *ecjit_isal_jit_status(void) { return jit_status(); }
ECJIT_ISAL_API int ecjit_isal_get_stats(struct ecjit_isal_stats *out, size_t size) {
  if (!out) return -1;
  const TransformStats t = transform_stats();
  ecjit_isal_stats s{};
  s.plans_built = t.plans_built;
  s.plan_hits = t.plan_hits;
  s.jit_runs = t.jit_runs;
  s.portable_runs = t.portable_runs;
  s.shape_runs = t.shape_runs;
  s.aot_runs = t.aot_runs;
  s.nibble_plans = t.nibble_plans;
  s.jit_failures = t.jit_failures;
  s.kernels_compiled = t.kernels_compiled;
  s.compile_seconds = t.compile_seconds;
  s.max_plan_seconds = t.max_plan_seconds;
  s.jit_enabled = t.jit_enabled;
  std::memcpy(out, &s, size < sizeof s ? size : sizeof s);
  return 0;
}
