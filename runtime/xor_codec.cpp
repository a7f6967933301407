// XorCodec: argument checks, per-set plans with the runner first and compiled kernels later.
#include "runtime/xor_codec.h"

#include <algorithm>
#include <cstring>

#include "ir_builders/kernel_builder.h"
#include "runtime/parallel_kernel.h"
#include "runtime/promotion.h"
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

Result<std::shared_ptr<XorCodec>> XorCodec::make(std::shared_ptr<JitImpl> jit, codes::BitMatrixCode code,
                                                 std::string layout_why, std::vector<MeasuredCandidate> packets) {
  std::shared_ptr<XorCodec> c(new XorCodec(std::move(jit), std::move(code)));
  c->packets_ = std::move(packets);
  const codes::BitMatrixCode &bc = c->code_;
  for (unsigned r = 0; r < bc.parity.rows; ++r)
    for (unsigned col = 0; col < bc.parity.cols; ++col) c->bits_.push_back(bc.parity.get(r, col));
  Result<jit::XorPlan> plan = jit::xor_encoder_plan(bc, c->jit_->options().target);
  if (!plan.ok()) return plan.status();
  const ir::XorKernelDesc &d = plan->desc;
  c->encoder_counts_ = std::string("schedule ") + codes::schedule_name(plan->schedule) + ": " +
                       std::to_string(d.program.xors()) + " XORs per block position (dumb: " +
                       std::to_string(codes::dumb_xors(bc.parity)) + ")" +
                       (layout_why.empty() ? "" : "; packet=auto: " + layout_why);
  auto op = std::make_shared<Op>(std::move(*plan));
  c->encoder_ = op;
  if (op->plan.desc.program.xors() > kMaxUnrolledXors) return c;  // the runner serves (see kMaxUnrolledXors)
  // The encoder's kernel (shared: a later codec of the spec finds it in memory) into op;
  // a cold compile of a few hundred XORs takes LLVM 15-90 ms, the runner serving meanwhile.
  ECJIT_RETURN_IF_ERROR(start_xor_encoder<Op>(*c->jit_, op, op->plan, c->encoder_counts_));
  return c;
}

Status XorCodec::check_len(const char *what, size_t len) const {
  if (len % code_.block_bytes() != 0)
    return Status(StatusCode::kShardSize,
                  std::string(what) + ": len " + std::to_string(len) +
                      " is not a multiple of the block (w x packet = " + std::to_string(code_.w) + " x " +
                      std::to_string(code_.packet) + " = " + std::to_string(code_.block_bytes()) + " bytes)");
  return Status::Ok();
}

Status XorCodec::encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check_encode_shards(code_.spec, data, parity));
  ECJIT_RETURN_IF_ERROR(check_len("encode", len));
  encode_blocks(data.data, parity.data, len);
  return Status::Ok();
}

void XorCodec::encode_blocks(const uint8_t *const *data, uint8_t *const *parity, size_t len) const {
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&encoder_->compiled)) {
    const KernelFn fn = k->fn;
    run_split(*jit_, data, code_.k, parity, code_.m, len, code_.block_bytes(),
              [fn](const uint8_t *const *in, uint8_t *const *out, size_t n) { fn(in, out, n); });
    return;
  }
  const XorRunner &runner = encoder_->runner;
  run_split(*jit_, data, code_.k, parity, code_.m, len, code_.block_bytes(),
            [&runner](const uint8_t *const *in, uint8_t *const *out, size_t n) { runner.run(in, out, n); });
}

void XorCodec::promote(const std::shared_ptr<const Op> &op, bool optional) const {
  if (op->plan.desc.program.xors() > kMaxUnrolledXors) return;  // the runner stays (see make)
  if (std::atomic_load(&op->compiled)) return;
  JitImpl *jit = jit_.get();  // the task runs on this Jit's own thread, which it outlives
  std::shared_ptr<std::atomic<uint64_t>> count = promotions_;
  promote_in_background<Op>(
      *jit_, op, op->asked, op->bytes,
      [jit, count](const std::shared_ptr<const Op> &o) {
        std::shared_ptr<const Kernel> k = promoted_xor_kernel(*jit, o->plan.desc, o->plan.map, "block position");
        if (!k) return;  // the runner keeps serving
        std::atomic_store(&o->compiled, std::move(k));
        count->fetch_add(1, std::memory_order_relaxed);
      },
      [] { return true; }, optional);
}

void XorCodec::run(const std::shared_ptr<const Op> &op, const uint8_t *const *in, uint8_t *const *out,
                   size_t len, bool promote_now) const {
  const size_t n_in = op->plan.desc.in_pointers(), n_out = op->plan.desc.out_pointers();
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&op->compiled)) {
    const KernelFn fn = k->fn;
    run_split(*jit_, in, n_in, out, n_out, len, code_.block_bytes(),
              [fn](const uint8_t *const *i, uint8_t *const *o, size_t n) { fn(i, o, n); });
    return;
  }
  const XorRunner &runner = op->runner;
  run_split(*jit_, in, n_in, out, n_out, len, code_.block_bytes(),
            [&runner](const uint8_t *const *i, uint8_t *const *o, size_t n) { runner.run(i, o, n); });
  runner_calls_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t bytes = uint64_t(op->runner.desc().inputs.size()) * (len / code_.w);
  if (promote_now || op->bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes >=
                         jit_->options().promote_after_bytes)
    promote(op, /*optional=*/!promote_now);
}

KernelInfo XorCodec::info(const Op &op) const {
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&op.compiled)) return k->info;
  KernelInfo i;
  i.symbol = op.runner.desc().symbol;
  i.strategy = "xor";
  i.target = jit_->options().target;
  i.cpu = jit_->target_info().cpu;
  i.decision.tier = KernelTier::kScheduleRunner;
  i.decision.xors = op.runner.desc().program.xors();
  if (&op == encoder_.get()) {
    i.decision.compiling = op.plan.desc.program.xors() <= kMaxUnrolledXors;
    i.why = encoder_counts_ + (op.plan.desc.program.xors() > kMaxUnrolledXors
                                   ? "; schedule runner: past " + std::to_string(kMaxUnrolledXors) +
                                         " XORs unrolled code compiles for seconds"
                                   : "; schedule runner while its unrolled kernel compiles in the background");
    return i;
  }
  i.why = "schedule runner (smart schedule, " + std::to_string(op.runner.desc().program.xors()) +
          " XORs per block position, interpreted)" +
          (op.asked.load() ? "; its unrolled kernel is being compiled" : "");
  i.decision.compiling = op.asked.load();
  return i;
}

Result<std::shared_ptr<const XorCodec::Op>> XorCodec::decoder(const ShardSet &present,
                                                              const std::vector<unsigned> &targets) const {
  ShardSet wanted;
  for (unsigned t : targets) wanted.insert(t);
  const OpKey key(OpKey::kDecode, present & ShardSet::first(code_.n()), wanted);
  return ops_.get(key, [&]() -> Result<std::shared_ptr<const Op>> {
    std::vector<bool> mask(code_.n());
    for (unsigned s = 0; s < code_.n(); ++s) mask[s] = present.contains(s);
    Result<jit::XorPlan> plan = jit::xor_decoder_plan(code_, mask, targets, jit_->options().target, false);
    if (!plan.ok()) return plan.status();
    return std::shared_ptr<const Op>(std::make_shared<Op>(std::move(*plan)));
  });
}

Status XorCodec::rebuild(const char *what, Span<uint8_t *const> shards, const std::vector<bool> &present,
                         const ShardSet *wanted, bool data_only, size_t len, Rebuild mode,
                         KernelInfo *info_out) const {
  const unsigned n = code_.n(), k = code_.k;
  if (present.size() != n || (mode == Rebuild::kRun && shards.size != n))
    return Status(StatusCode::kShardCount, std::string(what) + " of " + code_.spec.to_string() + " takes " +
                                               std::to_string(n) + " shards and present flags; got " +
                                               std::to_string(shards.size) + " and " + std::to_string(present.size()));
  if (wanted && (wanted->invalid() || wanted->end_index() > n))
    return Status(StatusCode::kInvalidArgument, std::string(what) + ": a wanted index is >= n = " + std::to_string(n));
  std::vector<unsigned> targets;
  unsigned have = 0;
  for (unsigned s = 0; s < n; ++s) {
    if (present[s]) ++have;
    else if (wanted ? wanted->contains(s) : (!data_only || s < k)) targets.push_back(s);
  }
  if (have < k)
    return Status(StatusCode::kTooManyErasures, std::to_string(n - have) + " shards missing; " +
                                                    code_.spec.to_string() + " rebuilds at most " + std::to_string(code_.m));
  if (mode == Rebuild::kRun) {
    if (!shards.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
    for (unsigned s = 0; s < n; ++s)
      if (present[s] && !shards[s])
        return Status(StatusCode::kNullPointer, std::string(what) + ": present shard " + std::to_string(s) + " is null");
    for (unsigned t : targets)
      if (!shards[t]) return Status(StatusCode::kNullPointer, std::string(what) + ": shard " + std::to_string(t) + " to rebuild is null");
    ECJIT_RETURN_IF_ERROR(check_len(what, len));
  }
  if (targets.empty()) return Status::Ok();
  auto op = decoder(ShardSet::from_mask(present), targets);
  if (!op.ok()) return op.status();
  if (mode == Rebuild::kPlan) {
    if (info_out) *info_out = info(**op);
    return Status::Ok();
  }
  if (mode == Rebuild::kPrepare) {  // asked for by the caller: never dropped for a full backlog
    promote(*op, /*optional=*/false);
    return Status::Ok();
  }
  const auto &sources = (*op)->plan.sources;
  const uint8_t *in_stack[kStackShards];
  uint8_t *out_stack[kStackShards];
  std::vector<const uint8_t *> in_heap;
  std::vector<uint8_t *> out_heap;
  const uint8_t **in = in_stack;
  uint8_t **out = out_stack;
  if (n > kStackShards) {
    in_heap.resize(n);
    out_heap.resize(n);
    in = in_heap.data();
    out = out_heap.data();
  }
  for (size_t i = 0; i < sources.size(); ++i) in[i] = shards[sources[i]];
  for (size_t i = 0; i < targets.size(); ++i) out[i] = shards[targets[i]];
  ECJIT_RETURN_IF_ERROR(check_distinct_outputs(what, {"shard to rebuild", out, targets.size()},
                                               {{"present shard", in, sources.size()}}));
  run(*op, in, out, len, false);
  return Status::Ok();
}

Status XorCodec::reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct", shards, present, nullptr, false, len, Rebuild::kRun);
}

Status XorCodec::prepare_reconstruct(const std::vector<bool> &present) const {
  return rebuild("prepare_reconstruct", {}, present, nullptr, false, 0, Rebuild::kPrepare);
}

KernelInfo XorCodec::decoder_info(const std::vector<bool> &present) const {
  KernelInfo i;
  if (!rebuild("decoder_info", {}, present, nullptr, false, 0, Rebuild::kPlan, &i).ok()) return KernelInfo();
  return i;
}

Status XorCodec::reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct_data", shards, present, nullptr, true, len, Rebuild::kRun);
}

Status XorCodec::reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                                  const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct_some", shards, present, &wanted, false, len, Rebuild::kRun);
}

Result<ShardSet> XorCodec::minimum_to_decode(const ShardSet &wanted, const ShardSet &available) const {
  const unsigned n = code_.n(), kw = code_.k * code_.w;
  if (wanted.invalid() || available.invalid() || wanted.end_index() > n || available.end_index() > n)
    return Status(StatusCode::kInvalidArgument, "minimum_to_decode: a shard index is out of range (n = " +
                                                    std::to_string(n) + ")");
  if (available.includes(wanted)) return wanted;
  if (available.size() < code_.k)
    return Status(StatusCode::kTooManyErasures, std::to_string(available.size()) + " shards available; " +
                                                    code_.spec.to_string() + " needs " + std::to_string(code_.k));
  const ShardSet forced = wanted & available;
  std::vector<unsigned> order = forced.to_vector();
  for (unsigned s = 0; s < n; ++s)
    if (available.contains(s) && !forced.contains(s)) order.push_back(s);
  // Greedy over shards: a shard is taken when its w bit-rows raise the rank (or it is wanted).
  codes::BitBasis basis(kw);
  ShardSet result;
  for (unsigned s : order) {
    if (basis.full() && !forced.contains(s)) break;
    const codes::BitMatrix rows = code_.shard_rows(s);
    bool adds = false;
    for (unsigned x = 0; x < code_.w; ++x) adds = basis.add(rows.row(x)) || adds;
    if (adds || forced.contains(s)) result.insert(s);
  }
  const unsigned rank = basis.rank();
  if (rank < kw)
    return Status(StatusCode::kSingular, "the available shards do not determine the data of " + code_.spec.to_string());
  return result;
}

Status XorCodec::update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                        Span<const uint8_t *const> new_data, Span<uint8_t *const> parity, size_t len) const {
  const unsigned k = code_.k, m = code_.m;
  if (changed.invalid() || changed.empty() || changed.end_index() > k)
    return Status(StatusCode::kInvalidArgument, "update: the changed set must name data shards 0.." + std::to_string(k - 1));
  const std::vector<unsigned> idx = changed.to_vector();
  const unsigned c = unsigned(idx.size());
  if (old_data.size != c || new_data.size != c || parity.size != m)
    return Status(StatusCode::kShardCount, "update takes " + std::to_string(c) + " old and new data shards and " +
                                               std::to_string(m) + " parity shards");
  if (!old_data.data || !new_data.data || !parity.data)
    return Status(StatusCode::kNullPointer, "update: a pointer array is null");
  for (unsigned i = 0; i < c; ++i)
    if (!old_data[i] || !new_data[i]) return Status(StatusCode::kNullPointer, "update: a data shard is null");
  for (unsigned i = 0; i < m; ++i)
    if (!parity[i]) return Status(StatusCode::kNullPointer, "update: parity shard " + std::to_string(i) + " is null");
  ECJIT_RETURN_IF_ERROR(check_distinct_outputs("update", {"parity shard", parity.data, m},
                                               {{"old data shard", old_data.data, c}, {"new data shard", new_data.data, c}}));
  ECJIT_RETURN_IF_ERROR(check_len("update", len));
  auto op = ops_.get(OpKey(OpKey::kUpdate, changed), [&]() -> Result<std::shared_ptr<const Op>> {
    Result<jit::XorPlan> plan = jit::xor_update_plan(code_, idx, jit_->options().target);
    if (!plan.ok()) return plan.status();
    return std::shared_ptr<const Op>(std::make_shared<Op>(std::move(*plan)));
  });
  if (!op.ok()) return op.status();
  std::vector<const uint8_t *> in(2 * size_t(c));
  for (unsigned i = 0; i < c; ++i) {
    in[i] = old_data[i];
    in[c + i] = new_data[i];
  }
  run(*op, in.data(), parity.data, len, false);
  return Status::Ok();
}

Status XorCodec::encode_partial(unsigned data_index, const uint8_t *shard, Span<uint8_t *const> parity_acc,
                                size_t len) const {
  ECJIT_RETURN_IF_ERROR(check_partial_shards(code_.spec, data_index, shard, parity_acc));
  ECJIT_RETURN_IF_ERROR(check_len("encode_partial", len));
  auto op = ops_.get(OpKey(OpKey::kPartial, ShardSet{data_index}), [&]() -> Result<std::shared_ptr<const Op>> {
    Result<jit::XorPlan> plan = jit::xor_partial_plan(code_, data_index, jit_->options().target);
    if (!plan.ok()) return plan.status();
    return std::shared_ptr<const Op>(std::make_shared<Op>(std::move(*plan)));
  });
  if (!op.ok()) return op.status();
  run(*op, &shard, parity_acc.data, len, false);
  return Status::Ok();
}

Result<bool> XorCodec::verify(Span<const uint8_t *const> shards, size_t len, size_t *mismatch_offset) const {
  const unsigned n = code_.n(), k = code_.k, m = code_.m;
  if (shards.size != n)
    return Status(StatusCode::kShardCount, "verify takes " + std::to_string(n) + " shards; got " + std::to_string(shards.size));
  if (!shards.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
  for (unsigned s = 0; s < n; ++s)
    if (!shards[s]) return Status(StatusCode::kNullPointer, "verify: shard " + std::to_string(s) + " is null");
  ECJIT_RETURN_IF_ERROR(check_len("verify", len));
  // Encode a run of blocks at a time into per-thread scratch and compare.
  const size_t block = code_.block_bytes();
  const size_t run_len = std::max<size_t>(1, (64 * 1024) / block) * block;
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < m * run_len) scratch.resize(m * run_len);
  std::vector<const uint8_t *> in(k);
  std::vector<uint8_t *> out(m);
  for (size_t off = 0; off < len; off += run_len) {
    const size_t part = std::min(run_len, len - off);
    for (unsigned j = 0; j < k; ++j) in[j] = shards[j] + off;
    for (unsigned i = 0; i < m; ++i) out[i] = scratch.data() + i * run_len;
    encode_blocks(in.data(), out.data(), part);
    for (unsigned i = 0; i < m; ++i) {
      if (std::memcmp(out[i], shards[k + i] + off, part) == 0) continue;
      if (mismatch_offset) {  // the first differing byte of any parity shard in this run
        size_t first = part;
        for (unsigned r = 0; r < m; ++r)
          for (size_t b = 0; b < first; ++b)
            if (out[r][b] != shards[k + r][off + b]) {
              first = b;
              break;
            }
        *mismatch_offset = off + first;
      }
      return false;
    }
  }
  if (mismatch_offset) *mismatch_offset = len;
  return true;
}

Status XorCodec::signature(const uint8_t *, size_t, Span<uint64_t>) const {
  return Status(StatusCode::kUnsupported, code_.spec.to_string() +
                                              ": algebraic signatures need a code over GF(2^l) symbols; "
                                              "bit-matrix codes do not have them");
}

Result<bool> XorCodec::verify_by_signatures(Span<const uint64_t>, unsigned) const {
  return Status(StatusCode::kUnsupported, code_.spec.to_string() +
                                              ": eq. 2.37 holds for codes over GF(2^l) symbols, not bit-matrix codes; "
                                              "use verify()");
}

KernelCacheStats XorCodec::kernel_cache_stats() const {
  KernelCacheStats s;
  s.compiles = promotions_->load();
  s.hits = ops_.hits();
  s.evictions = ops_.evictions();
  s.cached = ops_.size();
  s.capacity = ops_.capacity();
  s.decode_plans = ops_.compiles();
  s.decode_plans_cached = ops_.size();
  s.promotions = promotions_->load();
  s.shape_calls = runner_calls_.load();
  return s;
}

std::shared_ptr<const Kernel> promoted_xor_kernel(JitImpl &jit, ir::XorKernelDesc desc, const codes::BitMatrix &map,
                                                  const std::string &unit) {
  if (Result<codes::XorProgram> best = codes::best_schedule(map); best.ok() && best->xors() < desc.program.xors())
    desc.program = std::move(*best);
  auto k = jit.xor_kernel(desc, /*shared=*/false);
  if (!k.ok()) return nullptr;
  k->info.why = "unrolled schedule, " + std::to_string(desc.program.xors()) + " XORs per " + unit +
                "; compiled in the background after the runner served";
  return std::make_shared<const Kernel>(std::move(*k));
}

Status install_xor_kernel(JitImpl &jit, const jit::XorPlan &plan, bool tuned, const std::string &why,
                          std::shared_ptr<const Kernel> &compiled) {
  auto k = tuned ? jit.tuned_xor_kernel(plan) : jit.xor_kernel(plan.desc, /*shared=*/true);
  if (!k.ok()) return k.status();
  k->info.why = k->info.why.empty() ? why : why + "; compiled: " + k->info.why;
  std::atomic_store(&compiled, std::shared_ptr<const Kernel>(std::make_shared<Kernel>(std::move(*k))));
  return Status::Ok();
}

}  // namespace ecjit::runtime
