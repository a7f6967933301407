/* stats_probe: preloaded into a process under test (common.sh builds it), writes at exit the
 * ecjit_isal_get_stats() of the process's libisal.so.2 to $ECJIT_STATS_FILE. The library is
 * found by its SONAME with RTLD_NOLOAD: preloaded (Ceph) or dlopen()ed RTLD_LOCAL by
 * liberasurecode (Swift), never loaded by the probe itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "ecjit_isal_compat.h"

__attribute__((destructor)) static void ecjit_stats_probe(void) {
  const char *path = getenv("ECJIT_STATS_FILE");
  if (!path) return;
  FILE *f = fopen(path, "w");
  if (!f) return;
  void *h = dlopen("libisal.so.2", RTLD_LAZY | RTLD_NOLOAD);
  int (*get)(struct ecjit_isal_stats *, size_t) =
      h ? (int (*)(struct ecjit_isal_stats *, size_t))dlsym(h, "ecjit_isal_get_stats") : NULL;
  const char *(*status)(void) = h ? (const char *(*)(void))dlsym(h, "ecjit_isal_jit_status") : NULL;
  struct ecjit_isal_stats s = {0};
  if (!h) {
    fprintf(f, "isal=none ecjit=absent\n");
  } else if (!get || get(&s, sizeof s) != 0) {
    fprintf(f, "isal=loaded ecjit=absent\n");
  } else {
    const unsigned long long calls = s.jit_runs + s.shape_runs + s.portable_runs;
    fprintf(f, "isal=loaded ecjit=present calls=%llu jit=%llu shape=%llu portable=%llu compiles=%llu "
               "(%.3f s) failures=%llu status=%s\n",
            calls, (unsigned long long)s.jit_runs, (unsigned long long)s.shape_runs,
            (unsigned long long)s.portable_runs, (unsigned long long)s.kernels_compiled,
            s.compile_seconds, (unsigned long long)s.jit_failures,
            /* ecjit_isal_jit_status() starts the JIT if nothing did (this runs at exit, after
               LLVM's statics may be gone): only ask when it is up */
            status && s.jit_enabled ? status() : "not-started");
  }
  if (h) dlclose(h);
  fclose(f);
}
