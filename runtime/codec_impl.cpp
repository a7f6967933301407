// CodecImpl: argument checks, then a call into the JIT-compiled encoder or a cached decoder.
#include "runtime/codec_impl.h"

#include "runtime/region_xor.h"

#include "ir_builders/kernel_builder.h"
#include "runtime/parallel_kernel.h"
#include "runtime/shard_checks.h"

#include <string>

namespace ecjit::runtime {

Result<std::shared_ptr<CodecImpl>> CodecImpl::make(std::shared_ptr<JitImpl> jit,
                                                   codes::LinearCode code) {
  std::shared_ptr<CodecImpl> c(new CodecImpl(std::move(jit), std::move(code)));
  // The encoder and every shape kernel of the first calls (decode, update, encode_partial):
  // compiled together on two threads before codec() returns, or, where the ahead-of-time
  // kernels serve, on the background thread (CodecKernels). No later call waits for LLVM.
  std::vector<ShapeRequest> requests = DecodeCache::shape_requests(*c->jit_, c->code_);
  const size_t n_decode = requests.size();
  for (const ShapeRequest &r : ParityDelta::shape_requests(*c->jit_, c->code_)) requests.push_back(r);
  auto kernels = CodecKernels::make(c->jit_, c->code_, std::move(requests));
  if (!kernels.ok()) return kernels.status();
  c->kernels_ = std::move(*kernels);
  c->decodes_ = DecodeCache::make(c->jit_, c->code_, c->kernels_, 0);
  c->deltas_ = ParityDelta::make(c->jit_, c->code_, c->kernels_, n_decode);
  // A local XOR repair of w shards runs the encoder of raidz:k=w,m=1 (the XOR of w inputs):
  // the codec path's kernels, built-in ones from the first call, a compiled one later.
  for (const codes::LocalCheck &check : c->local_) {
    const unsigned w = unsigned(check.shards.size()) - 1;
    if (!check.xor_only() || w > 255 || c->xor_codec(w)) continue;
    auto spec = CodeSpec::parse("raidz:k=" + std::to_string(w) + ",m=1");
    if (!spec.ok()) continue;
    auto x = c->jit_->codec(*spec);
    if (x.ok()) c->local_xor_.emplace_back(w, std::move(*x));  // else xor_regions serves
  }
  return c;
}

const Codec *CodecImpl::xor_codec(unsigned inputs) const {
  for (const auto &[w, codec] : local_xor_)
    if (w == inputs) return codec.get();
  return nullptr;
}

Status CodecImpl::encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                         size_t len) const {
  const unsigned k = code_.k, m = code_.m, sb = code_.field.bytes();
  ECJIT_RETURN_IF_ERROR(check_encode_shards(code_.spec, data, parity));
  if (len % sb) return shard_size_error(len, sb);
  if (len == 0) return Status::Ok();
  const size_t streaming_min = jit_->options().streaming_min_len;
  // The streaming encoder's contract (ir::kernel_contract): whole aligned cache lines.
  constexpr size_t kLine = ir::kStreamingStoreAlign;
  if (streaming_min && len >= streaming_min && len % kLine == 0) {
    bool aligned = true;
    for (unsigned i = 0; i < m; ++i) aligned &= (reinterpret_cast<uintptr_t>(parity[i]) % kLine) == 0;
    if (const Kernel *nt = aligned ? streaming_encoder() : nullptr) {
      run_kernel(*jit_, nt->fn, data.data, k, parity.data, m, len);
      return Status::Ok();
    }
  }
  if (const Kernel *enc = kernels_->encoder())
    run_kernel(*jit_, enc->entry(k * len), data.data, k, parity.data, m, len);
  else
    kernels_->aot_encode(*jit_, data.data, parity.data, len);
  return Status::Ok();
}

const Kernel *CodecImpl::streaming_encoder() const {
  const Kernel *encoder = kernels_->encoder();
  if (!encoder) return nullptr;  // the ahead-of-time kernels serve until it is compiled
  std::call_once(streaming_once_, [this, encoder] {
    if (jit_->target_info().triple.rfind("x86_64", 0) != 0) return;  // x86 only
    KernelMode mode;
    mode.streaming = true;
    mode.strategy = encoder->strategy();  // the tuned one once the tuner has finished
    auto k = jit_->kernel(code_.spec, "encode_nt", code_.field, code_.parity, mode);
    if (k.ok()) streaming_encoder_ = std::move(*k);
  });
  return streaming_encoder_.fn ? &streaming_encoder_ : nullptr;
}

Result<std::shared_ptr<const OpKernel>> CodecImpl::decoder(const ShardSet &present,
                                                           const ShardSet &targets) const {
  return ops_.get(OpKey(OpKey::kDecode, present, targets), [&]() -> Result<std::shared_ptr<const OpKernel>> {
    auto op = compile_decoder(*jit_, code_, present, targets.to_vector(), jit::DecoderUse::kPerSet);
    if (!op.ok()) return op.status();
    return std::shared_ptr<const OpKernel>(std::make_shared<OpKernel>(std::move(*op)));
  });
}

Status CodecImpl::rebuild(const char *what, Span<uint8_t *const> shards,
                          const std::vector<bool> &present, const ShardSet *wanted,
                          bool data_only, size_t len, Rebuild mode) const {
  const bool run = mode == Rebuild::kRun;
  const unsigned n = code_.n(), k = code_.k, sb = code_.field.bytes();
  if (shards.size != n)
    return Status(StatusCode::kShardCount, std::string(what) + ": " + code_.spec.to_string() +
                                               " has " + std::to_string(n) + " shards; got " +
                                               std::to_string(shards.size));
  if (present.size() != n)
    return Status(StatusCode::kShardCount, std::string(what) + ": present has " +
                                               std::to_string(present.size()) +
                                               " entries; the code has " + std::to_string(n) +
                                               " shards");
  if (wanted && (wanted->invalid() || wanted->end_index() > n))
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": a wanted shard index is out of range (n = " +
                      std::to_string(n) + ")");
  if (n && !shards.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
  const ShardSet have = ShardSet::from_mask(present);
  const ShardSet missing = ShardSet::first(n) - have;
  const ShardSet targets =
      wanted ? (*wanted & missing) : data_only ? (missing & ShardSet::first(k)) : missing;
  for (unsigned s = 0; s < n; ++s) {
    if (shards[s] || !(present[s] || targets.contains(s))) continue;
    return Status(StatusCode::kNullPointer,
                  std::string(what) + ": " + (present[s] ? "present" : "missing") + " shard " +
                      std::to_string(s) + " is null" +
                      (present[s] ? "" : " (a shard to rebuild needs a buffer)"));
  }
  if (run)  // every buffer written must differ from every present shard and the other ones written
    ECJIT_RETURN_IF_ERROR(
        check_rebuilt_buffers(what, shards.data, n, present, [&](unsigned s) { return targets.contains(s); }));
  if (len % sb) return shard_size_error(len, sb);
  if (std::shared_ptr<const codes::LocalPlan> local = local_plan(have, targets)) {  // reads fewer than k shards
    if (run) run_local(*local, shards, len);
    return Status::Ok();
  }
  if (have.size() < k)
    return Status(StatusCode::kTooManyErasures,
                  std::to_string(n - have.size()) + " shards missing; " + code_.spec.to_string() +
                      " can rebuild at most " + std::to_string(code_.m));
  if (targets.size() == 0 || (run && len == 0)) return Status::Ok();
  std::array<const uint8_t *, kStackShards> in_stack;
  std::array<uint8_t *, kStackShards> out_stack;
  std::vector<const uint8_t *> in_heap;
  std::vector<uint8_t *> out_heap;
  // The kernel's input and output pointer arrays for `sources` and `targets`.
  auto gather = [&](const std::vector<unsigned> &sources, const std::vector<unsigned> &outs,
                    const uint8_t **&in, uint8_t **&out) {
    in = in_stack.data();
    out = out_stack.data();
    if (sources.size() > kStackShards || outs.size() > kStackShards) {
      in_heap.resize(sources.size());
      out_heap.resize(outs.size());
      in = in_heap.data();
      out = out_heap.data();
    }
    for (size_t i = 0; i < sources.size(); ++i) in[i] = shards[sources[i]];
    for (size_t i = 0; i < outs.size(); ++i) out[i] = shards[outs[i]];
  };
  if (decodes_) {
    auto d = decodes_->find(have, targets);
    if (!d.ok()) return d.status();
    if (mode == Rebuild::kPrepare) decodes_->promote_now(*d);
    if (!run) return Status::Ok();
    const uint8_t **in;
    uint8_t **out;
    gather((*d)->sources, (*d)->targets, in, out);
    decodes_->run(*d, in, out, len);
    return Status::Ok();
  }
  auto d = decoder(have, targets);
  if (!d.ok()) return d.status();
  if (!run) return Status::Ok();
  const OpKernel &op = **d;
  const uint8_t **in;
  uint8_t **out;
  gather(op.sources, op.targets, in, out);
  run_kernel(*jit_, op.kernel.entry(op.sources.size() * len), in, op.sources.size(), out, op.targets.size(), len);
  return Status::Ok();
}

std::shared_ptr<const codes::LocalPlan> CodecImpl::local_plan(const ShardSet &have, const ShardSet &targets) const {
  if (local_.empty() || targets.size() == 0) return nullptr;
  auto plan = local_plans_.get(OpKey(OpKey::kLocal, have, targets), [&]() -> Result<std::shared_ptr<const codes::LocalPlan>> {
    std::vector<bool> mask(code_.n());
    for (unsigned s = 0; s < code_.n(); ++s) mask[s] = have.contains(s);
    std::optional<codes::LocalPlan> p = codes::plan_local(code_, local_, mask, targets.to_vector());
    return std::make_shared<const codes::LocalPlan>(p && p->xor_only ? std::move(*p) : codes::LocalPlan{});
  });
  if (!plan.ok() || (*plan)->steps.empty()) return nullptr;
  return std::move(*plan);  // held by the caller: an eviction meanwhile frees nothing in use
}

void CodecImpl::run_local(const codes::LocalPlan &plan, Span<uint8_t *const> shards, size_t len) const {
  std::array<const uint8_t *, kStackShards> stack;
  std::vector<const uint8_t *> heap;
  for (const codes::LocalRepair &step : plan.steps) {
    const uint8_t **in = stack.data();
    if (step.sources.size() > kStackShards) {
      heap.resize(step.sources.size());
      in = heap.data();
    }
    for (size_t i = 0; i < step.sources.size(); ++i) in[i] = shards[step.sources[i]];
    uint8_t *out = shards[step.target];
    const Codec *x = xor_codec(unsigned(step.sources.size()));
    if (!x || !x->encode({in, step.sources.size()}, {&out, 1}, len).ok())
      xor_regions(out, in, unsigned(step.sources.size()), len);
  }
}

Status CodecImpl::reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                              size_t len) const {
  return rebuild("reconstruct", shards, present, nullptr, false, len, Rebuild::kRun);
}

Status CodecImpl::reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present,
                                   size_t len) const {
  return rebuild("reconstruct_data", shards, present, nullptr, true, len, Rebuild::kRun);
}

Status CodecImpl::reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                                   const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct_some", shards, present, &wanted, false, len, Rebuild::kRun);
}

Status CodecImpl::prepare_reconstruct(const std::vector<bool> &present) const {
  std::vector<uint8_t> dummy(1);
  std::vector<uint8_t *> shards(code_.n(), dummy.data());
  return rebuild("prepare_reconstruct", shards, present, nullptr, false, 0, Rebuild::kPrepare);
}

KernelInfo CodecImpl::decoder_info(const std::vector<bool> &present) const {
  std::vector<uint8_t> dummy(1);
  std::vector<uint8_t *> shards(code_.n(), dummy.data());
  if (!rebuild("decoder_info", shards, present, nullptr, false, 0, Rebuild::kPlan).ok())
    return KernelInfo();
  const ShardSet have = ShardSet::from_mask(present);
  const ShardSet missing = ShardSet::first(code_.n()) - have;
  if (missing.size() == 0) return kernels_->encoder_info();
  if (std::shared_ptr<const codes::LocalPlan> local = local_plan(have, missing)) {
    KernelInfo info;
    info.strategy = "region-xor";
    info.decision.tier = KernelTier::kLocalXor;
    info.decision.local_reads = unsigned(local->reads.size());
    info.why = "a local repair: the XOR of " + std::to_string(local->reads.size()) + " shards of " +
               (local->steps.size() == 1 ? "the lost shard's local group" : "the lost shards' local groups") +
               " (no kernel; the other shards are not read)";
    return info;
  }
  if (decodes_) {
    auto d = decodes_->find(have, missing);
    return d.ok() ? decodes_->info(**d) : KernelInfo();
  }
  auto d = decoder(have, missing);
  return d.ok() ? (*d)->kernel.current_info() : KernelInfo();
}

KernelCacheStats CodecImpl::kernel_cache_stats() const {
  KernelCacheStats s;
  s.compiles = ops_.compiles();
  s.hits = ops_.hits();
  s.evictions = ops_.evictions();
  s.cached = ops_.size();
  s.capacity = ops_.capacity();
  if (decodes_) decodes_->add_stats(&s);
  if (deltas_) deltas_->add_stats(&s);
  s.aot_calls = kernels_->aot_calls();
  return s;
}

}  // namespace ecjit::runtime
