/* isal_calls.h: ISA-L's API loaded by path and one degraded read as its users write it (C, shared by bench_degraded and bench_first_calls). */
#ifndef ECJIT_BENCH_ISAL_CALLS_H
#define ECJIT_BENCH_ISAL_CALLS_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct isal_api {
  void *handle;
  void (*gen_cauchy)(unsigned char *, int, int);
  int (*invert)(unsigned char *, unsigned char *, const int);
  void (*init_tables)(int, int, unsigned char *, unsigned char *);
  void (*encode)(int, int, int, unsigned char *, unsigned char **, unsigned char **);
  unsigned char (*mul)(unsigned char, unsigned char);
};

/* dlopen()s `path` (RTLD_DEEPBIND: several ISA-L ABIs may live in one process) and finds the
 * five functions a degraded read uses. 0 on success; otherwise -1 and `why` says what failed. */
static inline int isal_api_load(struct isal_api *api, const char *path, char *why, size_t why_len) {
  memset(api, 0, sizeof *api);
  api->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!api->handle) {
    snprintf(why, why_len, "%s", dlerror());
    return -1;
  }
  api->gen_cauchy = (void (*)(unsigned char *, int, int))dlsym(api->handle, "gf_gen_cauchy1_matrix");
  api->invert = (int (*)(unsigned char *, unsigned char *, const int))dlsym(api->handle, "gf_invert_matrix");
  api->init_tables = (void (*)(int, int, unsigned char *, unsigned char *))dlsym(api->handle, "ec_init_tables");
  api->encode = (void (*)(int, int, int, unsigned char *, unsigned char **, unsigned char **))dlsym(
      api->handle, "ec_encode_data");
  api->mul = (unsigned char (*)(unsigned char, unsigned char))dlsym(api->handle, "gf_mul");
  if (!api->gen_cauchy || !api->invert || !api->init_tables || !api->encode || !api->mul) {
    snprintf(why, why_len, "%s lacks an ISA-L symbol", path);
    return -1;
  }
  return 0;
}

/* One degraded read of RS(k, n - k) with ISA-L's Cauchy matrix `enc` (n x k), as ISA-L's users
 * write it: invert the k x k rows of the first k present shards (gf_invert_matrix), form the
 * rows of the `nlost` lost shards (ascending in `lost`), ec_init_tables, ec_encode_data from
 * the present shards into the lost ones. k + n <= 256. */
static inline void isal_decode(const struct isal_api *api, const unsigned char *enc, unsigned k, unsigned n,
                               const unsigned *lost, unsigned nlost, unsigned char **work, size_t len) {
  static unsigned char b[256 * 256], d[256 * 256], rows[256 * 256], tables[32 * 256 * 256];
  unsigned char *src[256], *dst[256];
  unsigned char gone[256] = {0};
  unsigned got = 0;
  for (unsigned r = 0; r < nlost; ++r) gone[lost[r]] = 1;
  for (unsigned s = 0; s < n && got < k; ++s)
    if (!gone[s]) {
      memcpy(&b[got * k], &enc[(size_t)s * k], k);
      src[got++] = work[s];
    }
  api->invert(b, d, (int)k);
  for (unsigned r = 0; r < nlost; ++r) {
    const unsigned e = lost[r];
    if (e < k) {
      memcpy(&rows[r * k], &d[e * k], k);
    } else {
      for (unsigned i = 0; i < k; ++i) {
        unsigned char s = 0;
        for (unsigned j = 0; j < k; ++j) s ^= api->mul(d[j * k + i], enc[(size_t)e * k + j]);
        rows[r * k + i] = s;
      }
    }
    dst[r] = work[e];
  }
  api->init_tables((int)k, (int)nlost, rows, tables);
  api->encode((int)len, (int)k, (int)nlost, tables, src, dst);
}

/* The workload file bench_degraded writes for bench_first_calls: a header of five uint64
 * (magic, k, m, shard bytes, calls), per call m + 1 uint32 (the count of lost shards, then
 * that many shard indices, ascending, zero-padded), then the k + m original shards. */
#define ISAL_CALLS_MAGIC 0x65636a6974646567ull /* "ecjitdeg" */

#endif
