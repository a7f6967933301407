// JitStats: a Jit's compile, cache and tuning counters - a value type shared by the kernel
// service (jit/) that counts them and the public API (Jit::stats) that reports them.
#pragma once

#include <cstdint>

namespace ecjit {

// Counters of one Jit (Jit::stats()).
struct JitStats {
  uint64_t kernels_compiled = 0;  // LLVM compiles run
  uint64_t kernel_cache_hits = 0;
  uint64_t kernels_cached = 0;
  uint64_t kernels_from_disk = 0;  // of kernels_compiled: linked from the disk cache
  double compile_seconds = 0;     // total wall time spent compiling (tuning included when
                                  // synchronous, JitOptions::tune_in_background = false)
  uint64_t kernels_tuned = 0;     // background tunings finished (their winner swapped in)
  double tuning_seconds = 0;      // wall time of those on the tuner's thread (queueing excluded)
  uint64_t tunings_pending = 0;   // background jobs (tunings, promotions, codecs' own kernels
                                  // behind the ahead-of-time ones) queued or running now
};

}  // namespace ecjit
