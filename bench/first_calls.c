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
  struct isal_workload w;
  const char *bad = isal_workload_read(argv[2], &w);
  if (bad) return fail(bad, argv[2]);
  const unsigned k = w.k, n = w.k + w.m;
  double *us = malloc(sizeof(double) * w.calls);
  if (!us) return fail("out of memory", NULL);

  struct isal_api api;
  char why[512];
  const double t0 = now_us();
  if (isal_api_load(&api, argv[1], why, sizeof why) != 0) return fail("cannot load the library", why);
  const double load_us = now_us() - t0;
  unsigned char *enc = malloc((size_t)n * k);
  if (!enc) return fail("out of memory", NULL);
  api.gen_cauchy(enc, (int)n, (int)k);

  int ok = 1;
  unsigned set[256];
  for (size_t c = 0; c < w.calls; ++c) {
    const uint32_t *l = &w.lost[c * (w.m + 1)];
    const unsigned count = l[0];
    for (unsigned r = 0; r < count; ++r) {
      set[r] = l[1 + r];
      memset(w.work[set[r]], 0, w.len);
    }
    const double s = now_us();
    isal_decode(&api, enc, k, n, set, count, w.work, w.len);
    us[c] = now_us() - s;
    if (c % 16 == 0)
      for (unsigned r = 0; r < count; ++r)
        if (memcmp(w.work[set[r]], w.orig[set[r]], w.len) != 0) ok = 0;
  }
  isal_workload_report(load_us, us, w.calls, ok);
  return 0;
}
