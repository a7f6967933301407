// CodecKernels: the encoder and shape kernels of a codec, compiled on two threads before codec() returns or on the background thread behind the ahead-of-time kernels.
#include "runtime/codec_kernels.h"

#include <pthread.h>

#include <thread>

#include "codes/coeff_layout.h"
#include "ir_builders/lowering.h"
#include "ir_builders/strategy.h"
#include "runtime/parallel_kernel.h"

namespace ecjit::runtime {

const aot::AotShapeSet *aot_set_for(const JitImpl &jit, const codes::Field &field) {
  const JitOptions &o = jit.options();  // aot_kernels: ECJIT_AOT=0 applied (JitImpl::make)
  // tune without tune_in_background: codec() returns the tuned encoder, as asked.
  // (Every Jit's target is this CPU, masked or not: KernelService refuses others.)
  if (!o.aot_kernels || (o.tune && !o.tune_in_background)) return nullptr;
  const std::optional<ir::Strategy> strategy = jit.shape_strategy(field.bits());
  if (!strategy) return nullptr;
  // The fastest set this CPU runs that the Jit's target allows (a masked tier, e.g.
  // host-gfni,-avx512f or ECJIT_HOST_MASK, gets the set its machine class would): the field's
  // shape strategy, at most the target's vector width, its instructions there.
  const ir::TargetInfo &target = jit.target_info();
  for (const aot::AotShapeSet *set : aot::runnable_shape_sets(field.bits())) {
    if (set->strategy != *strategy || set->vector_bits > target.vector_bits) continue;
    ir::TargetInfo at_width = target;
    at_width.vector_bits = set->vector_bits;
    if (ir::shape_kernel_supported(set->strategy, field, at_width)) return set;
  }
  return nullptr;
}

namespace {

// Runs `first` (the encoder's compile) and compiles (or loads) every requested shape kernel
// into `shapes` (request order): a work queue served by the calling thread and, where the
// machine has more than one core, a helper. Errors: the first failure in that order.
Status compile_now(JitImpl &jit, const codes::Field &field, const std::vector<ShapeRequest> &requests,
                   const std::function<Status()> &first, std::vector<Kernel> *shapes) {
  Status first_status;
  std::vector<Result<Kernel>> made(requests.size(), Status(StatusCode::kJitFailure, "not compiled"));
  std::atomic<size_t> next{0};
  auto serve = [&] {  // job 0 is `first`, job i + 1 is shape i
    for (size_t job; (job = next.fetch_add(1)) <= requests.size();) {
      if (job == 0) {
        first_status = first();
        continue;
      }
      const ShapeRequest &r = requests[job - 1];
      made[job - 1] = jit.shape_kernel(field, r.inputs, r.outputs, std::nullopt, r.accumulate);
    }
  };
  if (!requests.empty() && std::thread::hardware_concurrency() > 1) {
    std::thread helper([&] { pthread_setname_np(pthread_self(), "ecjit-compile"); serve(); });
    serve();
    helper.join();
  } else {
    serve();
  }
  ECJIT_RETURN_IF_ERROR(first_status);
  shapes->clear();
  shapes->reserve(made.size());
  for (Result<Kernel> &k : made) {
    if (!k.ok()) return k.status();
    shapes->push_back(std::move(*k));
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<CodecKernels>> CodecKernels::make(const std::shared_ptr<JitImpl> &jit,
                                                         const codes::LinearCode &code,
                                                         std::vector<ShapeRequest> requests) {
  std::shared_ptr<CodecKernels> c(new CodecKernels());
  c->requests_ = std::move(requests);
  c->k_ = code.k;
  c->m_ = code.m;
  if (const aot::AotShapeSet *set = aot_set_for(*jit, code.field)) {
    std::vector<uint8_t> prepared;
    const codes::CoeffLayout layout = ir::runtime_layout(set->strategy);
    codes::prepare_matrix(layout, code.field, code.parity, &prepared);
    c->aot_encoder_ = aot::AotProduct::make(*set, code.m, code.k, /*accumulate=*/false, prepared.data(),
                                            codes::coeff_bytes(layout, code.field));
    if (c->aot_encoder_) c->aot_ = set;
  }
  if (c->aot_) {
    c->compile_later(jit, code);
    return c;
  }
  auto shapes = std::make_unique<std::vector<Kernel>>();
  ECJIT_RETURN_IF_ERROR(compile_now(
      *jit, code.field, c->requests_,
      [&]() -> Status {
        auto enc = jit->kernel(code.spec, "encode", code.field, code.parity);
        if (!enc.ok()) return enc.status();
        c->encoder_storage_ = std::make_unique<Kernel>(std::move(*enc));
        return Status::Ok();
      },
      shapes.get()));
  c->encoder_.store(c->encoder_storage_.get(), std::memory_order_release);
  c->shapes_storage_ = std::move(shapes);
  c->shapes_.store(c->shapes_storage_.get(), std::memory_order_release);
  return c;
}

void CodecKernels::compile_later(const std::shared_ptr<JitImpl> &jit, const codes::LinearCode &code) {
  // One job per kernel on the Jit's own thread (one at a time, in this order), so a codec
  // dropped early, or a Jit going, cancels what is left after the compile in flight. The
  // encoder first: a writer's first calls are encodes, and its kernel gains most. A job
  // holds this object (weakly until it starts), never the Jit or the codec: the Jit's
  // thread outlives its jobs.
  std::weak_ptr<CodecKernels> weak = shared_from_this();
  JitImpl *j = jit.get();
  auto wanted = [weak] { return !weak.expired(); };
  auto submit = [&](std::function<void(CodecKernels &)> work) {
    auto task = [weak, work = std::move(work)] {
      if (std::shared_ptr<CodecKernels> k = weak.lock()) work(*k);
    };
    if (!jit->submit_background(std::move(task), wanted, /*optional=*/false))
      failed(Status(StatusCode::kJitFailure, "the Jit's background thread has stopped"));
  };
  submit([j, spec = code.spec, field = code.field, parity = code.parity](CodecKernels &k) {
    auto enc = j->kernel(spec, "encode", field, parity);
    if (!enc.ok()) return k.failed(enc.status());
    k.encoder_storage_ = std::make_unique<Kernel>(std::move(*enc));
    k.encoder_.store(k.encoder_storage_.get(), std::memory_order_release);
  });
  for (size_t i = 0; i < requests_.size(); ++i)
    submit([j, field = code.field, i](CodecKernels &k) {
      const ShapeRequest &r = k.requests_[i];
      if (i == 0) k.pending_shapes_ = std::make_unique<std::vector<Kernel>>();
      if (!k.pending_shapes_) return;  // an earlier one failed
      auto shape = j->shape_kernel(field, r.inputs, r.outputs, std::nullopt, r.accumulate);
      if (!shape.ok()) {
        k.pending_shapes_.reset();
        return k.failed(shape.status());
      }
      k.pending_shapes_->push_back(std::move(*shape));
      if (k.pending_shapes_->size() < k.requests_.size()) return;
      k.shapes_storage_ = std::move(k.pending_shapes_);  // all of them: published together
      k.shapes_.store(k.shapes_storage_.get(), std::memory_order_release);
    });
}

void CodecKernels::failed(const Status &s) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_.empty()) failure_ = s.to_string();
}

void CodecKernels::run_aot(const JitImpl &jit, const aot::AotProduct &p, const uint8_t *const *in, size_t n_in,
                           uint8_t *const *out, size_t n_out, size_t len) const {
  run_split(jit, in, n_in, out, n_out, len, kSplitAlign,
            [&p](const uint8_t *const *i, uint8_t *const *o, size_t n) { p.run(i, o, n); });
  aot_calls_.fetch_add(1, std::memory_order_relaxed);
}

KernelInfo CodecKernels::encoder_info() const {
  if (const Kernel *e = encoder()) return e->current_info();
  return aot_info("encoder");
}

KernelInfo CodecKernels::aot_info(const std::string &what) const {
  KernelInfo info;
  if (!aot_) return info;
  const std::string target = aot_->target;
  info.symbol = "ecjit_aot_shapes (" + target + ")";
  info.strategy = ir::strategy_name(aot_->strategy);
  info.target = "host";
  info.cpu = target;
  info.vector_bits = aot_->vector_bits;
  std::lock_guard<std::mutex> lock(failure_mutex_);
  info.decision.tier = KernelTier::kBuiltIn;
  info.decision.compiling = failure_.empty();
  info.why = "shape kernels built into libecjit ahead of time for " + target + " serve from the first call; " +
             (failure_.empty() ? "the codec's own " + what + " is being compiled in the background"
                               : "the codec's own kernels could not be compiled (" + failure_ + ")");
  return info;
}

}  // namespace ecjit::runtime
