// DecodeCache: plans and prepared coefficients per erasure set, shape kernels, background promotion with a bounded LRU.
#include "runtime/decode_cache.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "codes/coeff_layout.h"
#include "codes/decode.h"
#include "ir_builders/lowering.h"
#include "jit/decoder_planner.h"
#include "runtime/parallel_kernel.h"
#include "runtime/promotion.h"
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

// The codec-level state a promotion task needs; shared with the queued tasks, so a task
// never holds the codec (or the Jit) itself.
struct DecodeCache::Promotions {
  Promotions(codes::LinearCode c, size_t cap) : code(std::move(c)), capacity(cap) {}
  const codes::LinearCode code;
  const size_t capacity;
  std::atomic<bool> closed{false};  // the codec is gone: queued tasks do nothing
  std::mutex mutex;                 // guards what follows
  std::vector<std::weak_ptr<const DecodeSet>> live;  // promoted sets
  uint64_t promotions = 0, demotions = 0;

  // d has its decoder now: count it, and send the least recently used promoted sets
  // beyond capacity back to the shape kernel.
  void admit(const std::shared_ptr<const DecodeSet> &d) {
    std::lock_guard<std::mutex> lock(mutex);
    ++promotions;
    live.push_back(d);
    std::vector<std::shared_ptr<const DecodeSet>> alive;
    alive.reserve(live.size());
    for (const auto &w : live)
      if (auto s = w.lock(); s && std::atomic_load(&s->special)) alive.push_back(std::move(s));
    while (alive.size() > capacity) {
      auto oldest = std::min_element(alive.begin(), alive.end(), [](const auto &a, const auto &b) {
        return a->last_use.load(std::memory_order_relaxed) < b->last_use.load(std::memory_order_relaxed);
      });
      const DecodeSet &o = **oldest;
      std::atomic_store(&o.special, std::shared_ptr<const Kernel>());
      o.bytes.store(0, std::memory_order_relaxed);
      o.promotion_asked.store(false, std::memory_order_release);  // may be promoted again
      ++demotions;
      alive.erase(oldest);
    }
    live.assign(alive.begin(), alive.end());
  }
};

Result<OpKernel> compile_decoder(JitImpl &jit, const codes::LinearCode &code,
                                 const ShardSet &present, const std::vector<unsigned> &targets,
                                 jit::DecoderUse use) {
  std::vector<bool> mask(code.n());
  for (unsigned s = 0; s < code.n(); ++s) mask[s] = present.contains(s);
  auto plan = jit::plan_decoder(code, mask, targets, jit.target_info(), jit.options().target,
                                jit.resolved(code.field.bits()), use);
  if (!plan.ok()) return plan.status();
  KernelMode mode;
  mode.shared = false;  // KernelService compiles private kernels as the plan's request says
  mode.whole_vectors = plan->request.desc.whole_vectors;
  // The two-stage schedule when the planner found one with fewer products (same sources,
  // same targets, same ABI: the intermediates live in registers).
  auto kernel = jit.kernel(code.spec, plan->op, code.field, plan->request.desc.coeffs, mode,
                           plan->request.desc.pre);
  if (!kernel.ok()) return kernel.status();
  return OpKernel{std::move(plan->plan.sources), std::move(plan->plan.targets), std::move(*kernel)};
}

namespace {

// Plans of one codec kept at once: bounded by count and by their prepared coefficients
// (RS(10,4) GF(2^8) keeps every one of its 1,470 sets in ~2 MiB).
size_t plan_capacity(const codes::LinearCode &code, size_t coeff_bytes) {
  const size_t per_plan = size_t(code.m) * code.k * coeff_bytes + 512;
  return std::clamp<size_t>((size_t(64) << 20) / per_plan, 64, 8192);
}

}  // namespace

namespace {

bool served(const JitImpl &jit, const codes::LinearCode &code) {
  return jit.options().shape_kernels && jit::shape_kernels_serve(code, jit.shape_strategy(code.field.bits()));
}

unsigned rows_per_shape(const JitImpl &jit, const codes::Field &field) {
  return ir::shape_outputs_per_kernel(*jit.shape_strategy(field.bits()), field, jit.target_info());
}

}  // namespace

std::vector<ShapeRequest> DecodeCache::shape_requests(const JitImpl &jit, const codes::LinearCode &code) {
  std::vector<ShapeRequest> requests;
  if (!served(jit, code)) return requests;
  for (unsigned r = 1; r <= std::min(code.m, rows_per_shape(jit, code.field)); ++r)
    requests.push_back({code.k, r, false});
  return requests;
}

std::unique_ptr<DecodeCache> DecodeCache::make(const std::shared_ptr<JitImpl> &jit,
                                               const codes::LinearCode &code,
                                               std::shared_ptr<const CodecKernels> kernels, size_t first) {
  if (shape_requests(*jit, code).empty()) return nullptr;
  const ir::Strategy strategy = *jit->shape_strategy(code.field.bits());
  const size_t cb = codes::coeff_bytes(ir::runtime_layout(strategy), code.field);
  std::unique_ptr<DecodeCache> c(new DecodeCache(jit, code, plan_capacity(code, cb)));
  c->layout_ = ir::runtime_layout(strategy);
  c->coeff_bytes_ = cb;
  c->max_rows_ = rows_per_shape(*jit, code.field);
  c->kernels_ = std::move(kernels);
  c->first_shape_ = first;
  return c;
}

DecodeCache::DecodeCache(std::shared_ptr<JitImpl> jit, const codes::LinearCode &code,
                         size_t plan_capacity)
    : jit_(std::move(jit)), k_(code.k), promote_after_(jit_->options().promote_after_bytes),
      plans_(plan_capacity),
      promotions_(std::make_shared<Promotions>(code, std::max<size_t>(1, jit_->options().max_cached_kernels))) {}

DecodeCache::~DecodeCache() { promotions_->closed.store(true); }

Result<std::shared_ptr<const DecodeSet>> DecodeCache::find(const ShardSet &present,
                                                           const ShardSet &wanted) {
  return plans_.get(OpKey(OpKey::kDecode, present, wanted), [&]() -> Result<std::shared_ptr<const DecodeSet>> {
    const codes::LinearCode &code = promotions_->code;
    std::vector<bool> mask(code.n());
    for (unsigned s = 0; s < code.n(); ++s) mask[s] = present.contains(s);
    auto plan = codes::plan_decode(code, mask, wanted.to_vector(), codes::CostModel::kNoSearch,
                                   /*schedule=*/false);  // the direct map: no search
    if (!plan.ok()) return plan.status();
    auto d = std::make_shared<DecodeSet>();
    d->present = present;
    d->sources = std::move(plan->sources);
    d->targets = std::move(plan->targets);
    codes::prepare_matrix(layout_, code.field, plan->coeffs, &d->prepared);
    if (!kernels_->shapes()) {  // the ahead-of-time kernels serve (the same layout)
      d->aot = aot::AotProduct::make(*kernels_->aot_set(), unsigned(d->targets.size()), k_, /*accumulate=*/false,
                                     d->prepared.data(), coeff_bytes_);
      if (!d->aot) return Status(StatusCode::kJitFailure, "the ahead-of-time shape kernels are incomplete");
    }
    return std::shared_ptr<const DecodeSet>(std::move(d));
  });
}

void DecodeCache::run(const std::shared_ptr<const DecodeSet> &d, const uint8_t *const *in,
                      uint8_t *const *out, size_t len) const {
  d->last_use.store(tick_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const unsigned rows = unsigned(d->targets.size());
  // A promoted decoder has no path for shards shorter than a vector: those stay here.
  std::shared_ptr<const Kernel> special = std::atomic_load(&d->special);
  if (special && len >= special->min_len) {
    run_kernel(*jit_, special->entry(k_ * len), in, k_, out, rows, len);
    return;
  }
  const std::vector<Kernel> *shapes = kernels_->shapes();
  if (!shapes) {  // the codec's shape kernels are being compiled: d was planned for these
    kernels_->run_aot(*jit_, *d->aot, in, k_, out, rows, len);
  } else {
    run_shapes(*shapes, *d, in, out, len);
  }
  shape_calls_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t bytes = uint64_t(k_) * len;
  if (d->bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes >= promote_after_ &&
      !d->promotion_asked.load(std::memory_order_acquire))
    ask(d, /*optional=*/true);
}

void DecodeCache::run_shapes(const std::vector<Kernel> &shapes, const DecodeSet &d, const uint8_t *const *in,
                             uint8_t *const *out, size_t len) const {
  const unsigned rows = unsigned(d.targets.size());
  constexpr size_t kStackChunks = 64;  // 64 chunks of >= 1 output each: n <= 64 on the stack
  std::array<ShapeChunk, kStackChunks> stack;
  std::vector<ShapeChunk> heap;
  ShapeChunk *chunks = stack.data();
  const size_t n_chunks = (rows + max_rows_ - 1) / max_rows_;
  if (n_chunks > kStackChunks) {
    heap.resize(n_chunks);
    chunks = heap.data();
  }
  for (unsigned c = 0, r0 = 0; r0 < rows; ++c, r0 += max_rows_) {
    const unsigned r = std::min(max_rows_, rows - r0);
    chunks[c] = ShapeChunk{shapes[first_shape_ + r - 1].shape_fn,
                           d.prepared.data() + size_t(r0) * k_ * coeff_bytes_, r0};
  }
  run_shape_kernels(*jit_, chunks, n_chunks, in, k_, out, rows, len);
}

void DecodeCache::promote_now(const std::shared_ptr<const DecodeSet> &d) const {
  ask(d, /*optional=*/false);
}

void DecodeCache::ask(const std::shared_ptr<const DecodeSet> &d, bool optional) const {
  if (std::atomic_load(&d->special)) return;
  std::shared_ptr<Promotions> p = promotions_;
  JitImpl *jit = jit_.get();  // the task runs on this Jit's own thread, which it outlives
  promote_in_background<DecodeSet>(
      *jit_, d, d->promotion_asked, d->bytes,
      [p, jit](const std::shared_ptr<const DecodeSet> &set) {
        // The shape kernel keeps serving when this fails (promotion_asked stays set).
        auto op = compile_decoder(*jit, p->code, set->present, set->targets, jit::DecoderUse::kPromoted);
        if (!op.ok() || !op->kernel.fn || op->sources != set->sources) return;
        std::atomic_store(&set->special, std::shared_ptr<const Kernel>(
                                             std::make_shared<const Kernel>(std::move(op->kernel))));
        p->admit(set);
      },
      [p] { return !p->closed.load(); }, optional);
}

KernelInfo DecodeCache::info(const DecodeSet &d) const {
  if (std::shared_ptr<const Kernel> special = std::atomic_load(&d.special))
    return special->current_info();
  const std::vector<Kernel> *shapes = kernels_->shapes();
  if (!shapes) return kernels_->aot_info("shape kernels");
  const size_t rows = std::min<size_t>(d.targets.size(), max_rows_);
  KernelInfo info = (*shapes)[first_shape_ + rows - 1].info;
  if (d.promotion_asked.load()) {
    info.why += "; its specialised decoder is being compiled";
    info.decision.compiling = true;
  }
  return info;
}

void DecodeCache::add_stats(KernelCacheStats *s) const {
  s->decode_plans = plans_.compiles();
  s->decode_plans_cached = plans_.size();
  s->shape_calls = shape_calls_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(promotions_->mutex);
  s->promotions = promotions_->promotions;
  s->demotions = promotions_->demotions;
  size_t promoted = 0;
  for (const auto &w : promotions_->live)
    if (auto d = w.lock(); d && std::atomic_load(&d->special)) ++promoted;
  s->promoted = promoted;
}

}  // namespace ecjit::runtime
