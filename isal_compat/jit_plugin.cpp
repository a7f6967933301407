// libecjit_isal_jit.so: the drop-in's JIT behind JitPluginApi (a jit::KernelService, shape slots, matrix kernels); loaded by jit_link.cpp.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ecjit/code_spec.h"
#include "ir_builders/lowering.h"
#include "isal_compat/jit_plugin_api.h"
#include "isal_compat/shape_slots.h"
#include "jit/kernel_service.h"

namespace ecjit::isal {
namespace {

struct PluginState {
  std::once_flag once;
  std::unique_ptr<jit::KernelService> jit;
  std::string status = "not started";
  codes::Field field = *codes::Field::make(8);
};

PluginState &plugin() {
  static PluginState *p = new PluginState();  // leaked on purpose: used from exit handlers
  return *p;
}

jit::KernelService *as_jit(void *jit) { return static_cast<jit::KernelService *>(jit); }

void *open(const char **status) {
  PluginState &p = plugin();
  std::call_once(p.once, [&p] {
    jit::ServiceOptions opts;
    // A drop-in ISA-L writes no files unless asked: the on-disk kernel cache is opt-in here.
    const char *disk = std::getenv("ECJIT_ISAL_DISK_CACHE");
    opts.disk_cache = disk && std::strcmp(disk, "1") == 0;
    if (const char *t = std::getenv("ECJIT_ISAL_TARGET"); t && *t) opts.target = t;
    if (const char *t = std::getenv("ECJIT_ISAL_STRATEGY"); t && *t) opts.strategy = t;
    // No tuning: timing candidates on first use costs tens of ms per matrix, and ISA-L
    // callers see a new matrix per erasure pattern; the static choice (split-table for
    // GF(2^8) wherever a byte shuffle exists) is what the tuner picks for it anyway.
    opts.tune = false;
    auto jit = jit::KernelService::make(opts);
    if (!jit.ok()) {
      p.status = "the kernel service failed to start: " + jit.status().to_string();
      return;
    }
    // The service is never destroyed (callable from exit handlers); its background thread is
    // stopped at exit, before LLVM's statics go, by the handler every service registers
    // (KernelService::guard_exit, which warmed the code generator up in make()).
    // A forced strategy is honoured or refused, never quietly replaced: one this target
    // cannot run leaves the JIT unstarted (the portable kernels serve, ISA-L's bytes) and the
    // status says why.
    if (Status st = (*jit)->check_strategy(p.field); !st.ok()) {
      p.status = "ECJIT_ISAL_STRATEGY=" + opts.strategy + " refused, the JIT is not started: " + st.message();
      return;
    }
    p.jit = std::move(*jit);
    p.status = "ok: target " + p.jit->target_name() +
               (opts.strategy == "auto" ? std::string() : ", strategy " + opts.strategy);
  });
  *status = p.status.c_str();
  return p.jit.get();
}

int shape_strategy(void *jit) {
  const auto st = as_jit(jit)->shape_strategy(8);
  return st ? int(*st) : -1;
}

int split_table_ok(void *jit) {
  return ir::shape_kernel_supported(ir::Strategy::kSplitTable, plugin().field, as_jit(jit)->target_info());
}

PluginShapeFn shape(void *jit, int strategy, int cols, int rows, int accumulate, int wait) {
  return shape_kernel(*as_jit(jit), ir::Strategy(strategy), cols, rows, accumulate != 0, wait != 0);
}

PluginKernelFn matrix_kernel(void *jit, const uint8_t *coef, int rows, int cols, int accumulate,
                             int whole_vectors, size_t *min_len, void **keep) {
  *keep = nullptr;
  *min_len = 1;
  codes::Matrix m{unsigned(rows), unsigned(cols)};
  for (size_t i = 0; i < size_t(rows) * cols; ++i) m.a[i] = coef[i];
  CodeSpec spec;
  spec.family = CodeFamily::kMatrix;
  spec.k = unsigned(cols);
  spec.m = unsigned(rows);
  spec.gf = 8;
  spec.matrix = m.a;
  jit::KernelMode mode;
  mode.output = accumulate ? ir::OutputMode::kAccumulate : ir::OutputMode::kOverwrite;
  mode.shared = false;  // owned by the caller's plan, freed with it
  mode.whole_vectors = whole_vectors != 0 && !accumulate;
  auto k = as_jit(jit)->kernel(spec.to_string(), accumulate ? "isal_mad" : "isal", plugin().field, m, mode);
  if (!k.ok() || !k->fn) return nullptr;
  auto owned = std::make_unique<jit::Kernel>(std::move(*k));
  const PluginKernelFn fn = owned->fn;
  *min_len = owned->min_len;
  *keep = owned.release();
  return fn;
}

void release(void *keep) { delete static_cast<jit::Kernel *>(keep); }

int submit_background(void *jit, void (*run)(void *), void (*drop)(void *), void *ctx, int optional) {
  // The task owns ctx: released with the task whether it ran, was refused or was dropped.
  std::shared_ptr<void> owner(ctx, drop);
  return as_jit(jit)->submit_background([run, owner] { run(owner.get()); }, nullptr, optional != 0) ? 1 : 0;
}

void stats(void *jit, uint64_t *kernels_compiled, double *compile_seconds) {
  const JitStats js = as_jit(jit)->stats();
  *kernels_compiled = js.kernels_compiled;
  *compile_seconds = js.compile_seconds;
}

const JitPluginApi kApi = {kJitPluginVersion, open, shape_strategy, split_table_ok, shape,
                           matrix_kernel, release, submit_background, stats};

}  // namespace
}  // namespace ecjit::isal

extern "C" __attribute__((visibility("default"))) const ecjit::isal::JitPluginApi *ecjit_isal_jit_plugin_v1(void) {
  return &ecjit::isal::kApi;
}
