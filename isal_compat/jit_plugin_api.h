// JitPluginApi: the C ABI between the drop-in libisal.so.2 (no LLVM) and libecjit_isal_jit.so (the JIT), loaded only when the JIT starts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ecjit::isal {

// Rows of one shape kernel; more rows run in blocks of this many.
constexpr int kShapeRows = 8;

// Kernel ABIs (jit::KernelFn / jit::ShapeFn).
using PluginKernelFn = void (*)(const uint8_t *const *in, uint8_t *const *out, size_t len);
using PluginShapeFn = void (*)(const uint8_t *const *in, uint8_t *const *out, size_t len,
                               const uint8_t *coeffs);

// Every function is thread-safe. `jit` is what open() returned. Strategies are ir::Strategy
// values as int. Owned kernels (matrix_kernel) live until release(keep).
struct JitPluginApi {
  uint32_t version;  // kJitPluginVersion
  // Starts the kernel service for GF(2^8) with the drop-in's options (ECJIT_ISAL_TARGET / _STRATEGY /
  // _DISK_CACHE read by the plugin), compiles one warm-up kernel and registers the exit
  // handler that stops its background thread. Null on failure, with `status` (static
  // storage, or valid while the plugin is loaded) saying why; else status "ok: target T".
  void *(*open)(const char **status);
  // The service's shape strategy for GF(2^8) (-1: none); whether split-table shape kernels run.
  int (*shape_strategy)(void *jit);
  int (*split_table_ok)(void *jit);
  // The ready shape kernel for (strategy, cols, rows <= 8, accumulate), or null: the first
  // request queues the compiles of every rows of that (strategy, cols, accumulate) on the
  // background thread; with wait != 0 the one kernel is compiled on the calling thread.
  PluginShapeFn (*shape_kernel)(void *jit, int strategy, int cols, int rows, int accumulate, int wait);
  // A matrix's own kernel (rows <= 8 x cols coefficients row-major, GF(2^8) mod 0x11d) or
  // null when it cannot be compiled; *keep is its owner. With whole_vectors != 0 (overwrite
  // kernels, for callers that have another kernel for short shards) it may have no path for
  // shards shorter than one vector: *min_len gets the shortest len it takes (1: any).
  PluginKernelFn (*matrix_kernel)(void *jit, const uint8_t *coef, int rows, int cols,
                                  int accumulate, int whole_vectors, size_t *min_len, void **keep);
  void (*release)(void *keep);
  // Queues run(ctx) on the kernel service's background thread: 1 when queued, 0 when not (optional: may
  // be refused when the backlog is long). Either way the plugin calls drop(ctx) exactly once:
  // after run, or instead of it (refused, or dropped from the queue when the service stops).
  int (*submit_background)(void *jit, void (*run)(void *ctx), void (*drop)(void *ctx), void *ctx,
                           int optional);
  // LLVM compiles so far and their total wall time.
  void (*stats)(void *jit, uint64_t *kernels_compiled, double *compile_seconds);
};

constexpr uint32_t kJitPluginVersion = 2;  // 2: matrix_kernel's whole_vectors / min_len

}  // namespace ecjit::isal

// The plugin's one export.
extern "C" const ecjit::isal::JitPluginApi *ecjit_isal_jit_plugin_v1(void);
