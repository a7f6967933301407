// ParityDelta: per-column accumulate shape kernels for update / encode_partial, background promotion of hot sets.
#include "runtime/parity_delta.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "codes/coeff_layout.h"
#include "ir_builders/lowering.h"
#include "runtime/decode_cache.h"
#include "runtime/parallel_kernel.h"
#include "runtime/promotion.h"
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

struct ParityDelta::Shared {
  explicit Shared(codes::LinearCode c) : code(std::move(c)) {}
  const codes::LinearCode code;
  std::atomic<bool> closed{false};  // the codec is gone: queued compiles do nothing
  std::atomic<uint64_t> promotions{0};
};

namespace {

// Outputs per shape kernel and those of the last chunk (0: all chunks are full).
std::pair<unsigned, unsigned> chunk_rows(const JitImpl &jit, const codes::LinearCode &code) {
  const unsigned rows = std::min(code.m, std::min(DecodeCache::kMaxShapeOutputs,
                                                  ir::shape_outputs_per_kernel(
                                                      *jit.shape_strategy(code.field.bits()),
                                                      code.field, jit.target_info())));
  return {rows, code.m % rows};
}

}  // namespace

std::vector<ShapeRequest> ParityDelta::shape_requests(const JitImpl &jit, const codes::LinearCode &code) {
  if (!jit.options().shape_kernels || !jit.shape_strategy(code.field.bits()) || code.m == 0 ||
      code.k == 0)
    return {};
  const auto [rows, last] = chunk_rows(jit, code);
  std::vector<ShapeRequest> requests = {{2, rows, true}};
  if (last) requests.push_back({2, last, true});
  return requests;
}

std::unique_ptr<ParityDelta> ParityDelta::make(const std::shared_ptr<JitImpl> &jit,
                                               const codes::LinearCode &code,
                                               std::shared_ptr<const CodecKernels> kernels,
                                               size_t first) {
  if (shape_requests(*jit, code).empty()) return nullptr;
  std::unique_ptr<ParityDelta> p(new ParityDelta(jit, code));
  const codes::CoeffLayout layout = ir::runtime_layout(*jit->shape_strategy(code.field.bits()));
  p->coeff_bytes_ = codes::coeff_bytes(layout, code.field);
  p->rows_ = chunk_rows(*jit, code).first;
  p->kernels_ = std::move(kernels);
  p->first_shape_ = first;
  // update: the column for old and for new; encode_partial: the column and 0 (the shard
  // passed twice: one kernel serves both, the second product is a table of zeros).
  for (unsigned pairs = 0; pairs < 2; ++pairs) {
    p->prepared_[pairs].resize(code.k);
    for (unsigned c = 0; c < code.k; ++c) {
      codes::Matrix col(code.m, 2);
      for (unsigned r = 0; r < code.m; ++r) {
        col.at(r, 0) = code.parity.at(r, c);
        col.at(r, 1) = pairs ? code.parity.at(r, c) : 0;
      }
      codes::prepare_matrix(layout, code.field, col, &p->prepared_[pairs][c]);
    }
  }
  return p;
}

ParityDelta::ParityDelta(std::shared_ptr<JitImpl> jit, const codes::LinearCode &code)
    : jit_(std::move(jit)), m_(code.m), promote_after_(jit_->options().promote_after_bytes),
      sets_(std::max<size_t>(1, jit_->options().max_cached_kernels)),
      shared_(std::make_shared<Shared>(code)) {}

ParityDelta::~ParityDelta() { shared_->closed.store(true); }

Result<std::shared_ptr<const DeltaSet>> ParityDelta::find(bool pairs, const ShardSet &cols) {
  const OpKey key(pairs ? OpKey::kUpdate : OpKey::kPartial, cols);
  return sets_.get(key, [&]() -> Result<std::shared_ptr<const DeltaSet>> {
    auto d = std::make_shared<DeltaSet>();
    d->pairs = pairs;
    d->cols = cols.to_vector();
    if (!kernels_->shapes()) {  // the ahead-of-time kernels serve: the set as one product
      const size_t width = 2 * d->cols.size();  // m x width: the columns' m x 2 blocks side by side
      std::vector<uint8_t> joined(m_ * width * coeff_bytes_);
      for (unsigned r = 0; r < m_; ++r)
        for (size_t i = 0; i < d->cols.size(); ++i)
          std::memcpy(joined.data() + (r * width + 2 * i) * coeff_bytes_,
                      prepared_[pairs][d->cols[i]].data() + size_t(r) * 2 * coeff_bytes_, 2 * coeff_bytes_);
      d->aot = aot::AotProduct::make(*kernels_->aot_set(), m_, unsigned(width), /*accumulate=*/true,
                                     joined.data(), coeff_bytes_);
      if (!d->aot) return Status(StatusCode::kJitFailure, "the ahead-of-time shape kernels are incomplete");
    }
    return std::shared_ptr<const DeltaSet>(std::move(d));
  });
}

void ParityDelta::run(const std::shared_ptr<const DeltaSet> &d, const uint8_t *const *in,
                      uint8_t *const *parity, size_t len) const {
  const size_t width = d->pairs ? 2 : 1;
  if (std::shared_ptr<const Kernel> special = std::atomic_load(&d->special)) {
    run_kernel(*jit_, special->entry(width * d->cols.size() * len), in, width * d->cols.size(), parity, m_, len);
    return;
  }
  // encode_partial reads its one shard as both inputs of the two-input kernel.
  const uint8_t *twice[2] = {in[0], in[0]};
  if (!d->pairs) in = twice;
  const std::vector<Kernel> *shapes = kernels_->shapes();
  if (!shapes) {  // the codec's shape kernels are being compiled
    kernels_->run_aot(*jit_, *d->aot, in, 2 * d->cols.size(), parity, m_, len);
  } else {
    run_shapes(*shapes, *d, in, parity, len);
  }
  shape_calls_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t bytes = uint64_t(width) * d->cols.size() * len;
  if (d->bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes >= promote_after_ &&
      !d->asked.load(std::memory_order_acquire))
    ask(d);
}

void ParityDelta::run_shapes(const std::vector<Kernel> &shapes, const DeltaSet &d, const uint8_t *const *in,
                             uint8_t *const *parity, size_t len) const {
  const ShapeFn fns[2] = {shapes[first_shape_].shape_fn,
                          shapes.size() > first_shape_ + 1 ? shapes[first_shape_ + 1].shape_fn : nullptr};
  constexpr size_t kStackChunks = 64;  // cols x row chunks <= 64: on the stack
  std::array<ShapeChunk, kStackChunks> stack;
  std::vector<ShapeChunk> heap;
  const size_t per_col = (m_ + rows_ - 1) / rows_, n_chunks = per_col * d.cols.size();
  ShapeChunk *chunks = stack.data();
  if (n_chunks > kStackChunks) {
    heap.resize(n_chunks);
    chunks = heap.data();
  }
  ShapeChunk *chunk = chunks;
  for (size_t i = 0; i < d.cols.size(); ++i) {
    const uint8_t *prepared = prepared_[d.pairs][d.cols[i]].data();
    for (unsigned r0 = 0; r0 < m_; r0 += rows_)
      *chunk++ = ShapeChunk{fns[r0 + rows_ > m_], prepared + size_t(r0) * 2 * coeff_bytes_,
                            r0, unsigned(2 * i)};
  }
  run_shape_kernels(*jit_, chunks, n_chunks, in, 2 * d.cols.size(), parity, m_, len);
}

void ParityDelta::ask(const std::shared_ptr<const DeltaSet> &d) const {
  if (std::atomic_load(&d->special)) return;
  std::shared_ptr<Shared> s = shared_;
  JitImpl *jit = jit_.get();  // the task runs on this Jit's own thread, which it outlives
  promote_in_background<DeltaSet>(
      *jit_, d, d->asked, d->bytes,
      [s, jit](const std::shared_ptr<const DeltaSet> &set) {
        const codes::LinearCode &code = s->code;
        codes::Matrix coeffs(code.m, unsigned(set->cols.size()));
        for (unsigned r = 0; r < code.m; ++r)
          for (size_t c = 0; c < set->cols.size(); ++c) coeffs.at(r, unsigned(c)) = code.parity.at(r, set->cols[c]);
        KernelMode mode;
        mode.output = ir::OutputMode::kAccumulate;
        if (set->pairs) mode.input = ir::InputMode::kDelta;
        mode.shared = false;
        const std::string what = (set->pairs ? "update_d" : "partial_d") + join_indices(set->cols);
        // The shape kernels keep serving when this fails (asked stays set).
        auto kernel = jit->kernel(code.spec, what, code.field, coeffs, mode);
        if (!kernel.ok() || !kernel->fn) return;
        std::atomic_store(&set->special, std::shared_ptr<const Kernel>(
                                             std::make_shared<const Kernel>(std::move(*kernel))));
        s->promotions.fetch_add(1);
      },
      [s] { return !s->closed.load(); }, /*optional=*/true);
}

void ParityDelta::add_stats(KernelCacheStats *s) const {
  s->promotions += shared_->promotions.load();
  s->delta_shape_calls = shape_calls_.load(std::memory_order_relaxed);
}

}  // namespace ecjit::runtime
