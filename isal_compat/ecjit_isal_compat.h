/* ecjit_isal_compat.h: the ecjit-specific additions of the ISA-L-compatible libisal.so.2 (C). */
#ifndef ECJIT_ISAL_COMPAT_H
#define ECJIT_ISAL_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters of the kernel cache behind ec_encode_data and friends. */
struct ecjit_isal_stats {
  uint64_t plans_built;      /* distinct tables/matrices seen (each verified once) */
  uint64_t plan_hits;        /* calls answered by an existing plan (no verification, no compile) */
  uint64_t jit_runs;         /* calls run by JIT-compiled kernels */
  uint64_t portable_runs;    /* calls run by the portable product-table kernel */
  uint64_t nibble_plans;     /* plans for tables ec_init_tables did not write */
  uint64_t jit_failures;     /* compiles that failed (those calls ran the portable kernel) */
  uint64_t kernels_compiled; /* LLVM compiles */
  double compile_seconds;    /* total LLVM compile wall time */
  double max_plan_seconds;   /* slowest compile of one matrix (all its row blocks) */
  int jit_enabled;           /* 1 when the JIT is in use */
  uint64_t shape_runs;       /* calls run by shape kernels (coefficients as data, no compile per matrix) */
  uint64_t aot_runs;         /* of those, calls on the shape kernels built into the library ahead
                                of time (first calls, before the JIT has started or compiled) */
};

/* "ecjit-isal-compat <version> (ISA-L 2.30 erasure-code ABI)"; static storage. Its presence
 * (dlsym) tells a program that this libisal.so.2 is ecjit's. Thread-safe. */
const char *ecjit_isal_compat_version(void);

/* "ok: target <target>" or why kernels run without the JIT (ECJIT_ISAL_JIT=0, or the
 * Jit::create error). Starts the JIT if it has not started (the ahead-of-time kernels let a
 * process run without it: check jit_enabled in ecjit_isal_get_stats first where starting it
 * is unwanted, e.g. in exit handlers). Static storage. Thread-safe. */
const char *ecjit_isal_jit_status(void);

/* Copies min(size, sizeof(struct ecjit_isal_stats)) bytes of the current counters to *out.
 * Returns 0, or -1 when out is NULL. Thread-safe. */
int ecjit_isal_get_stats(struct ecjit_isal_stats *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ECJIT_ISAL_COMPAT_H */
