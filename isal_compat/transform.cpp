// Transform: plan cache keyed by the caller's table bytes; JIT kernels per row block; portable fallback.
#include "isal_compat/transform.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "runtime/aot_shapes/aot_product.h"
#include "isal_compat/isal_gf.h"
#include "isal_compat/jit_link.h"
#include "isal_compat/table_kernel.h"
#include "codes/coeff_layout.h"
#include "ir_builders/strategy.h"

namespace ecjit::isal {
namespace {

// Rows per JIT kernel: ISA-L itself makes one pass per 6 output rows; larger blocks read
// the inputs fewer times but compile time grows with rows * cols.
constexpr int kRowsPerBlock = 8;
// Widest matrix the JIT takes (larger ones run the portable kernel).
constexpr int kMaxJitCols = 255;
// Plans kept in the map; when exceeded the map is emptied. Plans own their JIT kernels
// (KernelMode::shared = false), so this bounds JIT memory (a kernel is a few KiB of code).
constexpr size_t kMaxPlans = 1024;
// Where ahead-of-time kernels serve, the JIT (~45 ms to start: plugin, LLVM, LLJIT, warm-up,
// then its compiles on the background thread) starts on the calling thread - LLVM's lazily
// made statics must exist before the exit handler that stops it is registered, so it cannot
// start on a thread of its own - once one matrix has done this much input on them. Ski rental
// on what pays: the JIT's gain is a matrix's own kernel (its shape kernels are the
// ahead-of-time ones' algorithm), ~13% over them at best, so a matrix must have run long
// enough for 13% of its time to cover the start: ~4 GiB at ~12 GB/s. Random erasure sets
// never get there and never map LLVM; a steady encoder does, within a second. (A JIT started
// after 512 MiB of any matrices made a fresh process doing random RS(10,4) decodes of 64 KiB
// run at 0.70x ISA-L 2.31 over 2,000 calls and 0.75x of itself without the JIT over 12,000,
// on a 2-core Zen 3 EPYC with AVX2.)
constexpr uint64_t kJitStartAfterAotWork = uint64_t(4) << 30;

struct Plan {
  bool nibble = false;  // key holds full 32-byte tables (else one byte per coefficient)
  bool accumulate = false;
  int rows = 0;
  int cols = 0;
  std::vector<uint8_t> key;
  bool linear = true;             // GF(2^8) products (false: tables ec_init_tables did not write)
  std::vector<uint8_t> coef;      // rows * cols coefficients (linear plans)
  // rows * cols * 256 product tables for the portable kernel, built when it first runs the
  // plan (plans on shape or own kernels never need them: ~10 us saved per new matrix).
  mutable std::once_flag products_once;
  mutable std::vector<uint8_t> products;
  const uint8_t *portable_products() const {
    std::call_once(products_once, [this] {
      const size_t n = size_t(rows) * cols;
      products.resize(n * 256);
      for (size_t i = 0; i < n; ++i) {
        if (linear) expand_coefficient(coef[i], &products[256 * i]);
        else expand_nibble_table(&key[32 * i], &products[256 * i]);
      }
    });
    return products.data();
  }
  struct Block {
    int r0 = 0;
    int r1 = 0;
    PluginKernelFn fn = nullptr;
    std::shared_ptr<void> keep;  // the plugin's kernel, released with the plan
    size_t min_len = 1;          // shorter calls run elsewhere (whole_vectors kernels)
  };
  using Blocks = std::vector<Block>;
  // Portable work (coefficient-bytes: len * rows * cols) after which the JIT kernels are
  // compiled: about the work the portable kernel does in the time a compile takes. A
  // matrix used once on small shards never pays for LLVM; a hot one pays once.
  uint64_t compile_after = 0;
  mutable std::atomic<uint64_t> portable_work{0};
  mutable std::atomic<bool> compile_tried{false};
  mutable std::mutex compile_mutex;
  mutable std::shared_ptr<const Blocks> blocks;  // std::atomic_load / atomic_store only
  // Shape kernels (shape_slots.h): the strategy and the coefficients in its layout
  // (codes::CoeffLayout; empty: `key` itself, the caller's nibble tables, which the
  // split-table shape kernel reads as they are - ISA-L's own algorithm, byte for byte).
  bool shape_ok = false;
  ir::Strategy shape = ir::Strategy::kSplitTable;
  std::vector<uint8_t> prepared;
  const uint8_t *shape_tables() const { return prepared.empty() ? key.data() : prepared.data(); }
  // Ahead-of-time shape kernels (runtime/aot_shapes), used until the JIT's serve: the
  // kernel calls of one transform. Empty: none for this plan.
  std::optional<aot::AotProduct> aot;
  mutable std::atomic<uint64_t> aot_work{0};  // input bytes run on them (kJitStartAfterAotWork)
};

// The ahead-of-time set for the drop-in's plans (aot::host_shape_set), or null when
// ECJIT_ISAL_AOT=0 or ECJIT_ISAL_TARGET or ECJIT_ISAL_STRATEGY is set (the JIT's kernels for
// that target or strategy serve: a forced choice holds from the first call).
const aot::AotShapeSet *dropin_aot_set(bool split_table_only) {
  static const bool on = [] {
    const char *a = std::getenv("ECJIT_ISAL_AOT");
    const char *target = std::getenv("ECJIT_ISAL_TARGET");
    const char *strategy = std::getenv("ECJIT_ISAL_STRATEGY");
    return !(a && std::strcmp(a, "0") == 0) && !(target && *target) &&
           !(strategy && *strategy && std::strcmp(strategy, "auto") != 0);
  }();
  return on ? aot::host_shape_set(8, split_table_only) : nullptr;
}

struct State {
  std::once_flag jit_once;
  std::atomic<const JitLink *> jit_ready{nullptr};  // set once the JIT is up
  std::string jit_status = "not started";
  codes::Field field = *codes::Field::make(8);

  std::shared_mutex map_mutex;
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<const Plan>>> plans;
  size_t plan_count = 0;

  std::atomic<uint64_t> plans_built{0}, plan_hits{0}, jit_runs{0}, portable_runs{0},
      nibble_plans{0}, jit_failures{0}, shape_runs{0}, aot_runs{0};
  // Work (len x cols bytes) done on ahead-of-time kernels while the JIT was not started.
  // ECJIT_ISAL_COMPILE (tests of the JIT paths), read once. eager: every matrix compiled on
  // first use; shape: a shape kernel compiled on the caller's thread when first needed and
  // matrices never compiled on their own. Either: the JIT's kernels from the first call,
  // the ahead-of-time kernels unused.
  enum class CompileMode { kDefault, kEager, kShape };
  const CompileMode compile_mode = [] {
    const char *e = std::getenv("ECJIT_ISAL_COMPILE");
    if (e && std::strcmp(e, "eager") == 0) return CompileMode::kEager;
    if (e && std::strcmp(e, "shape") == 0) return CompileMode::kShape;
    return CompileMode::kDefault;
  }();
  std::mutex time_mutex;
  double max_plan_seconds = 0;
};

State &state() {
  static State *s = new State();  // leaked on purpose: callable from atexit handlers
  return *s;
}

// The JIT (libecjit_isal_jit.so, loaded now: LLVM is mapped only from here on), started on
// the calling thread: its start compiles a warm-up kernel that makes LLVM's lazily built
// statics before the exit handler that stops its background thread is registered, so that
// handler runs before their destructors (a start on a thread of its own raced them at exit).
const JitLink *get_jit() {
  State &s = state();
  std::call_once(s.jit_once, [&s] {
    const char *env = std::getenv("ECJIT_ISAL_JIT");
    if (env && std::strcmp(env, "0") == 0) {
      s.jit_status = "disabled by ECJIT_ISAL_JIT=0";
      return;
    }
    const char *why = "";
    const JitLink *link = load_jit(&why);
    s.jit_status = why;
    s.jit_ready.store(link);
  });
  return s.jit_ready.load();
}

// 64-bit mixing hash over the key bytes in canonical order (rows of cols entries).
struct Hasher {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  void word(uint64_t w) {
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  void bytes(const uint8_t *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      word(w);
    }
    uint64_t w = 0;
    for (; i < n; ++i) w = (w << 8) | p[i];
    word(w ^ n);
  }
};

uint64_t hash_desc(const TransformDesc &d) {
  Hasher hs;
  hs.word((uint64_t(d.rows) << 32) ^ (uint64_t(d.cols) << 2) ^ (d.accumulate ? 1 : 0) ^
          (d.reading == Reading::kNibble ? 2 : 0));
  for (int r = 0; r < d.rows; ++r) {
    switch (d.reading) {
      case Reading::kCoefficientUnlessGenuine:  // resolved in run_transform
      case Reading::kNibble:
        hs.bytes(d.tables + 32 * size_t(r) * d.row_stride, 32 * size_t(d.cols));
        break;
      case Reading::kPlainCoefficient:
        hs.bytes(d.tables + size_t(r) * d.row_stride, size_t(d.cols));
        break;
      case Reading::kTableCoefficient: {
        uint8_t row[256];
        for (int c0 = 0; c0 < d.cols; c0 += 256) {
          const int n = std::min(256, d.cols - c0);
          for (int c = 0; c < n; ++c) row[c] = d.tables[32 * (size_t(r) * d.row_stride + c0 + c) + 1];
          hs.bytes(row, size_t(n));
        }
        break;
      }
    }
  }
  return hs.h;
}

bool matches(const Plan &p, const TransformDesc &d) {
  if (p.nibble != (d.reading == Reading::kNibble) || p.accumulate != d.accumulate ||
      p.rows != d.rows || p.cols != d.cols)
    return false;
  const uint8_t *k = p.key.data();
  for (int r = 0; r < d.rows; ++r) {
    switch (d.reading) {
      case Reading::kCoefficientUnlessGenuine:  // resolved in run_transform
      case Reading::kNibble:
        if (std::memcmp(k + 32 * size_t(r) * d.cols, d.tables + 32 * size_t(r) * d.row_stride,
                        32 * size_t(d.cols)) != 0)
          return false;
        break;
      case Reading::kPlainCoefficient:
        if (std::memcmp(k + size_t(r) * d.cols, d.tables + size_t(r) * d.row_stride, size_t(d.cols)) != 0)
          return false;
        break;
      case Reading::kTableCoefficient:
        for (int c = 0; c < d.cols; ++c)
          if (k[size_t(r) * d.cols + c] != d.tables[32 * (size_t(r) * d.row_stride + c) + 1]) return false;
        break;
    }
  }
  return true;
}

// Compiles the JIT kernels of a linear plan; null when it cannot (the portable kernel runs).
std::shared_ptr<const Plan::Blocks> compile_blocks(const Plan &p) {
  State &s = state();
  if (p.cols > kMaxJitCols || p.rows * p.cols > kMaxJitCoefficients) return nullptr;
  const JitLink *jit = get_jit();
  if (!jit) return nullptr;
  auto blocks = std::make_shared<Plan::Blocks>();
  for (int r0 = 0; r0 < p.rows; r0 += kRowsPerBlock) {
    const int r1 = std::min(p.rows, r0 + kRowsPerBlock);
    void *keep = nullptr;
    size_t min_len = 1;
    // Overwrite kernels without a path for shards under one vector (~40% less to compile):
    // those calls run on the shape, ahead-of-time or portable kernels (transform()).
    const PluginKernelFn fn = jit->api->matrix_kernel(jit->jit, &p.coef[size_t(r0) * p.cols], r1 - r0, p.cols,
                                                      p.accumulate ? 1 : 0, /*whole_vectors=*/1, &min_len, &keep);
    if (!fn) {
      s.jit_failures.fetch_add(1);
      return nullptr;
    }
    const JitPluginApi *api = jit->api;
    blocks->push_back(
        Plan::Block{r0, r1, fn, std::shared_ptr<void>(keep, [api](void *k) { api->release(k); }), min_len});
  }
  return blocks;
}

// Estimated compile time (Zen 3: ~5 ms + 0.2 ms per coefficient, split-table, O3) times the
// portable kernel's speed (~1 coefficient-byte per ns). ECJIT_ISAL_COMPILE=eager: 0.
uint64_t compile_threshold(size_t coefficients) {
  const State &s = state();
  if (s.compile_mode == State::CompileMode::kEager) return 0;
  if (s.compile_mode == State::CompileMode::kShape) return UINT64_MAX;
  return uint64_t(5e6 + 2e5 * double(coefficients));
}

std::shared_ptr<const Plan> build_plan(const TransformDesc &d) {
  auto p = std::make_shared<Plan>();
  p->nibble = d.reading == Reading::kNibble;
  p->accumulate = d.accumulate;
  p->rows = d.rows;
  p->cols = d.cols;
  const size_t n = size_t(d.rows) * d.cols;
  p->key.resize(p->nibble ? 32 * n : n);
  std::vector<uint8_t> coef(n);
  for (int r = 0; r < d.rows; ++r)
    for (int c = 0; c < d.cols; ++c) {
      const size_t i = size_t(r) * d.cols + c;
      switch (d.reading) {
        case Reading::kCoefficientUnlessGenuine:  // resolved in run_transform
        case Reading::kNibble:
          std::memcpy(&p->key[32 * i], d.tables + 32 * (size_t(r) * d.row_stride + c), 32);
          coef[i] = p->key[32 * i + 1];
          break;
        case Reading::kPlainCoefficient:
          p->key[i] = coef[i] = d.tables[size_t(r) * d.row_stride + c];
          break;
        case Reading::kTableCoefficient:
          p->key[i] = coef[i] = d.tables[32 * (size_t(r) * d.row_stride + c) + 1];
          break;
      }
    }
  bool linear = true;
  if (p->nibble)
    for (size_t i = 0; i < n && linear; ++i) linear = is_genuine_table(&p->key[32 * i]);
  p->linear = linear;
  if (!linear) state().nibble_plans.fetch_add(1);
  if (linear) {
    p->coef = std::move(coef);
    p->compile_after = compile_threshold(n);
  }
  // The shape kernels that serve this plan from its first call: those built ahead of time
  // into this library when this CPU runs them (the JIT starts later, kJitStartAfterAotWork,
  // and its shape kernels, for the same strategy, then take over), else the Jit's (started
  // here). The
  // strategy: the set's or the Jit's shape strategy for GF(2^8) on linear plans (gfni
  // matrices, nibble tables), split-table for caller-built tables; none without either or
  // without a byte shuffle. ECJIT_ISAL_COMPILE=eager / shape start the JIT here instead.
  State &s = state();
  const aot::AotShapeSet *aot = s.compile_mode != State::CompileMode::kDefault ? nullptr : dropin_aot_set(/*split_table_only=*/!linear);
  const JitLink *jit = aot ? s.jit_ready.load() : get_jit();
  const codes::Field &f = s.field;
  if (linear) {
    std::optional<ir::Strategy> st;
    if (aot) st = aot->strategy;
    else if (const int j = jit ? jit->api->shape_strategy(jit->jit) : -1; j >= 0) st = ir::Strategy(j);
    if (st) {
      p->shape_ok = true;
      p->shape = *st;
      if (!(p->nibble && p->shape == ir::Strategy::kSplitTable)) {
        codes::Matrix M(unsigned(p->rows), unsigned(p->cols));
        for (size_t i = 0; i < n; ++i) M.a[i] = p->coef[i];
        codes::prepare_matrix(ir::runtime_layout(p->shape), f, M, &p->prepared);
      }
    }
  } else if (aot || (jit && jit->api->split_table_ok(jit->jit))) {
    p->shape_ok = true;  // the caller's tables, read as they are
  }
  if (aot && p->shape_ok && p->rows <= 255)
    p->aot = aot::AotProduct::make(*aot, unsigned(p->rows), unsigned(p->cols), p->accumulate, p->shape_tables(),
                                   codes::coeff_bytes(ir::runtime_layout(p->shape), f));
  return p;
}

std::shared_ptr<const Plan> find_plan(const TransformDesc &d) {
  State &s = state();
  // Per thread, the last plan of each kind: a memcmp against it answers repeated calls
  // without hashing or locking.
  thread_local std::shared_ptr<const Plan> last[4];
  std::shared_ptr<const Plan> &slot = last[(d.reading == Reading::kNibble ? 2 : 0) + (d.accumulate ? 1 : 0)];
  if (slot && matches(*slot, d)) {
    s.plan_hits.fetch_add(1, std::memory_order_relaxed);
    return slot;
  }
  const uint64_t h = hash_desc(d);
  {
    std::shared_lock<std::shared_mutex> lock(s.map_mutex);
    auto it = s.plans.find(h);
    if (it != s.plans.end())
      for (const auto &p : it->second)
        if (matches(*p, d)) {
          s.plan_hits.fetch_add(1, std::memory_order_relaxed);
          slot = p;
          return p;
        }
  }
  std::shared_ptr<const Plan> p = build_plan(d);
  {
    std::unique_lock<std::shared_mutex> lock(s.map_mutex);
    auto &bucket = s.plans[h];
    for (const auto &q : bucket)
      if (matches(*q, d)) {  // another thread built it meanwhile
        slot = q;
        return q;
      }
    if (s.plan_count >= kMaxPlans) {
      s.plans.clear();
      s.plan_count = 0;
    }
    s.plans[h].push_back(p);
    ++s.plan_count;
  }
  s.plans_built.fetch_add(1);
  slot = p;
  return p;
}

}  // namespace

void run_transform(const TransformDesc &d, const uint8_t *const *in, uint8_t *const *out,
                   size_t len) {
  std::shared_ptr<const Plan> p;
  if (d.reading == Reading::kCoefficientUnlessGenuine) {
    TransformDesc n = d;
    n.reading = Reading::kNibble;
    p = find_plan(n);
    if (!p->linear) {
      n.reading = Reading::kTableCoefficient;
      p = find_plan(n);
    }
  } else {
    p = find_plan(d);
  }
  State &s = state();
  std::shared_ptr<const Plan::Blocks> blocks = std::atomic_load(&p->blocks);
  // The matrix's own kernels take no shards shorter than one vector: such a call runs as if
  // they were not there (shape, ahead-of-time or portable kernels; no compile is asked).
  auto too_short = [len](const std::shared_ptr<const Plan::Blocks> &b) {
    return b && std::any_of(b->begin(), b->end(), [len](const Plan::Block &x) { return len < x.min_len; });
  };
  if (too_short(blocks)) blocks = nullptr;
  // Shape kernels for every block of rows, when all are compiled (null: not yet).
  constexpr int kMaxBlocks = (255 + kShapeRows - 1) / kShapeRows;
  PluginShapeFn shape_fns[kMaxBlocks] = {};
  bool shapes = false;
  const JitLink *ready = s.jit_ready.load();
  if (!blocks && p->shape_ok && p->rows <= 255) {
    shapes = ready != nullptr;
    for (int b = 0; shapes && b * kShapeRows < p->rows; ++b)
      shapes = (shape_fns[b] = ready->api->shape_kernel(
                    ready->jit, int(p->shape), p->cols, std::min(kShapeRows, p->rows - b * kShapeRows),
                    p->accumulate ? 1 : 0, s.compile_mode == State::CompileMode::kShape ? 1 : 0)) != nullptr;
  }
  const bool aot = !blocks && !shapes && p->aot;
  if (!blocks && p->linear && !p->compile_tried.load(std::memory_order_acquire)) {
    // The work the running kernel does in the time a compile takes: the portable kernel's,
    // or, on shape kernels (about as fast as a matrix's own), 1/32 of it.
    uint64_t w = uint64_t(len) * uint64_t(p->rows) * uint64_t(p->cols);
    if (shapes || aot) w = std::max<uint64_t>(1, w / 32);
    if (p->portable_work.fetch_add(w, std::memory_order_relaxed) + w >= p->compile_after &&
        (shapes || aot)) {
      // Shape kernels serve meanwhile: the matrix's own kernel is compiled in the background
      // (until the JIT is up they keep serving and the work keeps counting).
      if (ready && !p->compile_tried.exchange(true)) {
        using PlanRef = std::shared_ptr<const Plan>;
        auto *keep = new PlanRef(p);  // released by the plugin's drop call, run or not
        const bool queued = ready->api->submit_background(ready->jit, [](void *ctx) {
          const PlanRef *plan = static_cast<const PlanRef *>(ctx);
          const auto t0 = std::chrono::steady_clock::now();
          std::atomic_store(&(*plan)->blocks, compile_blocks(**plan));
          const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::lock_guard<std::mutex> tl(state().time_mutex);
          state().max_plan_seconds = std::max(state().max_plan_seconds, secs);
        }, [](void *ctx) { delete static_cast<PlanRef *>(ctx); }, keep, /*optional=*/1);
        if (!queued) {  // backlog full: ask again after as much work again
          p->portable_work.store(0, std::memory_order_relaxed);
          p->compile_tried.store(false, std::memory_order_release);
        }
      }
    } else if (p->portable_work.load(std::memory_order_relaxed) >= p->compile_after) {
      // One thread compiles; callers meanwhile keep running the portable kernel.
      std::unique_lock<std::mutex> lock(p->compile_mutex, std::try_to_lock);
      if (lock.owns_lock() && !p->compile_tried.load(std::memory_order_acquire)) {
        const auto t0 = std::chrono::steady_clock::now();
        blocks = compile_blocks(*p);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::atomic_store(&p->blocks, blocks);
        if (too_short(blocks)) blocks = nullptr;  // this call: the portable kernel
        p->compile_tried.store(true, std::memory_order_release);
        std::lock_guard<std::mutex> tl(s.time_mutex);
        s.max_plan_seconds = std::max(s.max_plan_seconds, secs);
      }
    }
  }
  if (!blocks && shapes) {
    s.shape_runs.fetch_add(1, std::memory_order_relaxed);
    const size_t cb = codes::coeff_bytes(ir::runtime_layout(p->shape), s.field);
    const uint8_t *tables = p->shape_tables();
    for (int b = 0; b * kShapeRows < p->rows; ++b) {
      const int r0 = b * kShapeRows;
      shape_fns[b](in, out + r0, len, tables + size_t(r0) * p->cols * cb);
    }
    return;
  }
  if (aot) {
    s.shape_runs.fetch_add(1, std::memory_order_relaxed);
    s.aot_runs.fetch_add(1, std::memory_order_relaxed);
    p->aot->run(in, out, len);
    if (!ready) {
      // The one caller whose work crosses the line starts it; the others keep running these.
      const uint64_t w = uint64_t(len) * uint64_t(p->cols);
      const uint64_t before = p->aot_work.fetch_add(w, std::memory_order_relaxed);
      if (before < kJitStartAfterAotWork && before + w >= kJitStartAfterAotWork) (void)get_jit();
    }
    return;
  }
  if (!blocks) {
    s.portable_runs.fetch_add(1, std::memory_order_relaxed);
    table_kernel(p->portable_products(), p->rows, p->cols, p->accumulate, in, out, len);
    return;
  }
  s.jit_runs.fetch_add(1, std::memory_order_relaxed);
  for (const Plan::Block &b : *blocks) b.fn(in, out + b.r0, len);
}

TransformStats transform_stats() {
  State &s = state();
  TransformStats t;
  t.plans_built = s.plans_built.load();
  t.plan_hits = s.plan_hits.load();
  t.jit_runs = s.jit_runs.load();
  t.portable_runs = s.portable_runs.load();
  t.nibble_plans = s.nibble_plans.load();
  t.jit_failures = s.jit_failures.load();
  t.shape_runs = s.shape_runs.load();
  t.aot_runs = s.aot_runs.load();
  if (const JitLink *jit = s.jit_ready.load()) {
    jit->api->stats(jit->jit, &t.kernels_compiled, &t.compile_seconds);
    t.jit_enabled = 1;
  }
  std::lock_guard<std::mutex> lock(s.time_mutex);
  t.max_plan_seconds = s.max_plan_seconds;
  return t;
}

const char *jit_status() {
  get_jit();
  return state().jit_status.c_str();
}

}  // namespace ecjit::isal
