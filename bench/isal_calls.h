/* isal_calls.h: ISA-L's API loaded by path and one degraded read as its users write it (C, shared by bench_degraded and bench_first_calls). */
#ifndef ECJIT_BENCH_ISAL_CALLS_H
#define ECJIT_BENCH_ISAL_CALLS_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A workload read back: k, m, shard bytes, calls; lost[c * (m + 1)] the count of call c's lost
 * shards and the indices after it; orig[i] the shards; work[i] a copy of each at staggered
 * 64-byte-aligned starts (as heap buffers are) that the calls rebuild into. */
struct isal_workload {
  unsigned k, m;
  size_t len, calls;
  uint32_t *lost;
  unsigned char **orig, **work;
};

/* Reads `path` into w. NULL on success, else what is wrong with it. The memory stays for
 * the process (the readers are one-shot benchmark children). */
static inline const char *isal_workload_read(const char *path, struct isal_workload *w) {
  uint64_t h[5];
  FILE *f = fopen(path, "rb");
  if (!f) return "cannot open the workload";
  if (fread(h, sizeof h, 1, f) != 1 || h[0] != ISAL_CALLS_MAGIC) return "not a workload file";
  w->k = (unsigned)h[1];
  w->m = (unsigned)h[2];
  w->len = (size_t)h[3];
  w->calls = (size_t)h[4];
  if (w->k < 1 || w->m < 1 || w->k + w->m > 255 || w->len == 0 || w->calls == 0) return "bad workload header";
  const unsigned n = w->k + w->m;
  w->lost = (uint32_t *)malloc(sizeof(uint32_t) * (w->m + 1) * w->calls);
  w->orig = (unsigned char **)malloc(sizeof(unsigned char *) * n);
  w->work = (unsigned char **)malloc(sizeof(unsigned char *) * n);
  if (!w->lost || !w->orig || !w->work) return "out of memory";
  if (fread(w->lost, sizeof(uint32_t) * (w->m + 1), w->calls, f) != w->calls) return "short workload (lost sets)";
  for (size_t c = 0; c < w->calls; ++c) {
    const uint32_t *l = &w->lost[c * (w->m + 1)];
    if (l[0] < 1 || l[0] > w->m) return "bad lost count in the workload";
    for (unsigned r = 0; r < l[0]; ++r)
      if (l[1 + r] >= n) return "bad shard index in the workload";
  }
  for (unsigned i = 0; i < n; ++i) {
    w->orig[i] = (unsigned char *)malloc(w->len);
    unsigned char *b = (unsigned char *)aligned_alloc(4096, (w->len + 8192 + 4095) / 4096 * 4096);
    if (!w->orig[i] || !b) return "out of memory";
    w->work[i] = b + 64 * i % 4096;
    if (fread(w->orig[i], 1, w->len, f) != w->len) return "short workload (shards)";
    memcpy(w->work[i], w->orig[i], w->len);
  }
  fclose(f);
  return NULL;
}

/* The child's one output line: RESULT <load us> <first call us> <first 100 calls us> <calls>
 * <ok> <us of each call...>. */
static inline void isal_workload_report(double load_us, const double *us, size_t calls, int ok) {
  double first100 = 0;
  for (size_t c = 0; c < calls && c < 100; ++c) first100 += us[c];
  printf("RESULT %.1f %.1f %.1f %zu %d", load_us, us[0], first100, calls, ok);
  for (size_t c = 0; c < calls; ++c) printf(" %.2f", us[c]);
  printf("\n");
}

#endif
