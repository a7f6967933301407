/* bench_first_calls: one scenario of bench_degraded's ISA-L-API backends in a fresh process.
 *
 * Usage: bench_first_calls LIBRARY WORKLOAD
 * Loads LIBRARY (an ISA-L: the system's, 2.31, or ecjit's libisal.so.2) into a process that
 * has mapped nothing else - no LLVM, no libstdc++ - so its load, its first call and its first
 * hundred calls cost what they cost a storage program that starts, reads and exits. WORKLOAD
 * is the file bench_degraded --fresh writes (bench/isal_calls.h): the shards and the lost set
 * of every call. Prints one line:
 *   RESULT <dlopen us> <first call us> <first 100 calls us> <calls> <ok> <us of each call...>
 * ok is 1 when every 16th call (the first included) rebuilt its shards byte for byte.
 * Exit status 0, or 1 with a message on stderr. Written in C on purpose: see above. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isal_calls.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "bench_first_calls: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) return fail("usage: bench_first_calls LIBRARY WORKLOAD", NULL);
  FILE *f = fopen(argv[2], "rb");
  if (!f) return fail("cannot open the workload", argv[2]);
  uint64_t h[5];
  if (fread(h, sizeof h, 1, f) != 1 || h[0] != ISAL_CALLS_MAGIC) return fail("not a workload file", argv[2]);
  const unsigned k = (unsigned)h[1], m = (unsigned)h[2];
  const size_t len = (size_t)h[3], calls = (size_t)h[4];
  if (k < 1 || m < 1 || k + m > 255 || len == 0 || calls == 0) return fail("bad workload header", argv[2]);
  const unsigned n = k + m;
  uint32_t *lost = malloc(sizeof(uint32_t) * (m + 1) * calls);
  unsigned char **orig = malloc(sizeof(unsigned char *) * n), **work = malloc(sizeof(unsigned char *) * n);
  double *us = malloc(sizeof(double) * calls);
  if (!lost || !orig || !work || !us) return fail("out of memory", NULL);
  if (fread(lost, sizeof(uint32_t) * (m + 1), calls, f) != calls) return fail("short workload (lost sets)", argv[2]);
  for (unsigned i = 0; i < n; ++i) {
    orig[i] = malloc(len);
    /* staggered 64-byte-aligned starts, as heap buffers are (bench_degraded's Shards) */
    unsigned char *w = aligned_alloc(4096, len + 8192);
    if (!orig[i] || !w) return fail("out of memory", NULL);
    work[i] = w + 64 * i % 4096;
    if (fread(orig[i], 1, len, f) != len) return fail("short workload (shards)", argv[2]);
    memcpy(work[i], orig[i], len);
  }
  fclose(f);

  struct isal_api api;
  char why[512];
  const double t0 = now_us();
  if (isal_api_load(&api, argv[1], why, sizeof why) != 0) return fail("cannot load the library", why);
  const double dlopen_us = now_us() - t0;
  unsigned char *enc = malloc((size_t)n * k);
  if (!enc) return fail("out of memory", NULL);
  api.gen_cauchy(enc, (int)n, (int)k);

  int ok = 1;
  unsigned set[256];
  for (size_t c = 0; c < calls; ++c) {
    const uint32_t *l = &lost[c * (m + 1)];
    const unsigned count = l[0];
    if (count < 1 || count > m) return fail("bad lost count in the workload", NULL);
    for (unsigned r = 0; r < count; ++r) {
      set[r] = l[1 + r];
      if (set[r] >= n) return fail("bad shard index in the workload", NULL);
      memset(work[set[r]], 0, len);
    }
    const double s = now_us();
    isal_decode(&api, enc, k, n, set, count, work, len);
    us[c] = now_us() - s;
    if (c % 16 == 0)
      for (unsigned r = 0; r < count; ++r)
        if (memcmp(work[set[r]], orig[set[r]], len) != 0) ok = 0;
  }
  double first100 = 0;
  for (size_t c = 0; c < calls && c < 100; ++c) first100 += us[c];
  printf("RESULT %.1f %.1f %.1f %zu %d", dlopen_us, us[0], first100, calls, ok);
  for (size_t c = 0; c < calls; ++c) printf(" %.2f", us[c]);
  printf("\n");
  return 0;
}
