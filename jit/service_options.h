// ServiceOptions: what a KernelService is made with - the jit layer's own value type, so that
// jit/ never reads the public API's JitOptions (runtime/ converts, in runtime/jit_impl.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace ecjit::jit {

// The defaults are JitOptions' (runtime/include/ecjit/jit.h documents each field there).
struct ServiceOptions {
  // "host" or "host" with features masked ("host-avx2", "host-gfni,-avx512f"); only targets
  // this process can run.
  std::string target = "host";
  // "auto" or a forced lowering ("clmul-shift", "split-table", "gfni", "clmul-insn",
  // "clmul-mixed"), never replaced by another.
  std::string strategy = "auto";
  unsigned opt_level = 3;  // LLVM optimization level 0..3
  // The persistent kernel cache (ECJIT_DISK_CACHE=0 turns it off); cache_dir empty: the
  // default directory (DiskCache::default_dir).
  bool disk_cache = true;
  std::string cache_dir;
  // With strategy "auto": time the candidates per kernel and keep the fastest, on the
  // background thread when tune_in_background, once calls have passed tune_after_bytes.
  bool tune = true;
  bool tune_in_background = true;
  uint64_t tune_after_bytes = uint64_t(256) << 20;
};

}  // namespace ecjit::jit
