// ArrayCodecImpl: cell maps by GF(2) elimination, XOR schedules over (disk, row) packets, kernels over the disk buffers.
#include "runtime/array_codec_impl.h"

#include <algorithm>
#include <cstring>

#include "jit/array_planner.h"
#include "runtime/parallel_kernel.h"
#include "runtime/promotion.h"
#include "runtime/shard_checks.h"
#include "runtime/xor_codec.h"

namespace ecjit::runtime {

Result<std::shared_ptr<ArrayCodecImpl>> ArrayCodecImpl::make(std::shared_ptr<JitImpl> jit, const std::string &text) {
  Result<codes::ArraySpec> spec = codes::parse_array_spec(text);
  if (!spec.ok()) return spec.status();
  Result<codes::ArrayLayout> layout = codes::array_layout(spec->family, spec->p);
  if (!layout.ok()) return layout.status();
  std::shared_ptr<ArrayCodecImpl> c(new ArrayCodecImpl(std::move(jit), *spec, std::move(*layout)));
  Result<jit::XorPlan> enc = jit::array_encoder_plan(c->spec_, c->layout_, c->jit_->options().target);
  if (!enc.ok()) return enc.status();
  c->encoder_ = std::make_shared<const Op>(enc->desc, enc->map);
  const ir::TargetInfo &t = c->jit_->target_info();
  c->base_info_.strategy = "xor";
  c->base_info_.target = c->jit_->options().target;
  c->base_info_.cpu = t.cpu;
  c->base_info_.vector_bits = t.vector_bits;
  if (c->encoder_->desc.program.xors() > XorCodec::kMaxUnrolledXors) return c;  // the runner serves
  // The encoder's kernel (shared: a later codec of the spec finds it in memory) into the op;
  // LLVM takes tens of ms over an unrolled stripe, the runner serving meanwhile.
  ECJIT_RETURN_IF_ERROR(start_xor_encoder<Op>(*c->jit_, c->encoder_, *enc,
                                              "unrolled schedule, " + std::to_string(enc->desc.program.xors()) +
                                                  " XORs per stripe"));
  return c;
}

namespace {
// Spans of a disk array as read-only pointers (the checks take either).
Span<const uint8_t *const> read_only(Span<uint8_t *const> disks) {
  return {const_cast<const uint8_t *const *>(disks.data), disks.size};
}
}  // namespace

Status ArrayCodecImpl::check(const char *what, Span<const uint8_t *const> disks, size_t len, bool writes) const {
  if (disks.size != layout_.disks)
    return Status(StatusCode::kShardCount, std::string(what) + ": " + spec() + " has " +
                                               std::to_string(layout_.disks) + " disks; got " +
                                               std::to_string(disks.size));
  if (!disks.data) return Status(StatusCode::kNullPointer, std::string(what) + ": the disk pointer array is null");
  for (unsigned d = 0; d < layout_.disks; ++d)
    if (!disks[d]) return Status(StatusCode::kNullPointer, std::string(what) + ": disk " + std::to_string(d) + " is null");
  if (writes)  // two disks sharing a buffer matter only where the call writes
    ECJIT_RETURN_IF_ERROR(check_distinct_outputs(what, {"disk", disks.data, disks.size}, {}));
  if (len % stripe_bytes())
    return Status(StatusCode::kShardSize, std::string(what) + ": len " + std::to_string(len) +
                                              " is not a multiple of the stripe (" + std::to_string(layout_.rows) +
                                              " rows of " + std::to_string(spec_.element) + " bytes)");
  return Status::Ok();
}

void ArrayCodecImpl::run(KernelFn fn, const XorRunner *runner, const uint8_t *const *in, uint8_t *const *out,
                         size_t len) const {
  run_split(*jit_, in, layout_.disks, out, layout_.disks, len, stripe_bytes(),
            [fn, runner](const uint8_t *const *in, uint8_t *const *out, size_t n) {
              if (fn) fn(in, out, n);
              else runner->run(in, out, n);
            });
}

void ArrayCodecImpl::run_op(const Op &op, const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  std::shared_ptr<const Kernel> k = std::atomic_load(&op.compiled);
  run(k ? k->fn : nullptr, &op.runner, in, out, len);
}

KernelInfo ArrayCodecImpl::encoder_info() const {
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&encoder_->compiled)) return k->info;
  KernelInfo info = base_info_;
  info.symbol = encoder_->desc.symbol;
  const unsigned xors = encoder_->desc.program.xors();
  info.decision.tier = KernelTier::kScheduleRunner;
  info.decision.xors = xors;
  info.decision.compiling = xors <= XorCodec::kMaxUnrolledXors;
  info.why = "schedule runner: " + std::to_string(xors) + " XORs per stripe" +
             (xors > XorCodec::kMaxUnrolledXors ? ", too many to unroll"
                                                : ", no compile; its unrolled kernel compiles in the background");
  return info;
}

Status ArrayCodecImpl::encode(Span<uint8_t *const> disks, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check("encode", read_only(disks), len, /*writes=*/true));
  if (len) run_op(*encoder_, disks.data, disks.data, len);
  return Status::Ok();
}

void ArrayCodecImpl::promote(const std::shared_ptr<const Op> &op, bool optional) const {
  JitImpl *jit = jit_.get();  // the task runs on this Jit's own thread, which it outlives
  promote_in_background<Op>(
      *jit_, op, op->asked, op->bytes,
      [jit](const std::shared_ptr<const Op> &set) {
        std::shared_ptr<const Kernel> k = promoted_xor_kernel(*jit, set->desc, set->map, "stripe");
        if (k) std::atomic_store(&set->compiled, std::move(k));  // else the runner keeps serving
      },
      [] { return true; }, optional);
}

Result<std::shared_ptr<const ArrayCodecImpl::Op>> ArrayCodecImpl::rebuild_op(uint64_t failed) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = rebuilds_.find(failed); it != rebuilds_.end()) return it->second;
  }
  Result<jit::XorPlan> d = jit::array_rebuild_plan(spec_, layout_, failed, jit_->options().target, /*best=*/false);
  if (!d.ok()) return d.status();
  auto op = std::make_shared<const Op>(std::move(d->desc), std::move(d->map));
  std::lock_guard<std::mutex> lock(mutex_);
  return rebuilds_.emplace(failed, std::move(op)).first->second;
}

Status ArrayCodecImpl::reconstruct(Span<uint8_t *const> disks, const std::vector<bool> &present, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check("reconstruct", read_only(disks), len, /*writes=*/true));
  if (present.size() != layout_.disks)
    return Status(StatusCode::kShardCount, "reconstruct: present has " + std::to_string(present.size()) +
                                               " entries for " + std::to_string(layout_.disks) + " disks");
  uint64_t failed = 0;
  for (unsigned d = 0; d < layout_.disks; ++d)
    if (!present[d]) failed |= uint64_t(1) << d;
  if (!failed || !len) return Status::Ok();
  Result<std::shared_ptr<const Op>> op = rebuild_op(failed);
  if (!op.ok()) return op.status();
  const std::shared_ptr<const Op> &o = *op;
  std::shared_ptr<const Kernel> k = std::atomic_load(&o->compiled);
  run(k ? k->fn : nullptr, &o->runner, disks.data, disks.data, len);
  if (!k && o->desc.program.xors() <= XorCodec::kMaxUnrolledXors) {
    // The set's unrolled kernel (best schedule), compiled in the background from its first
    // call. Not optional: a failed-disk set serves every stripe until the disk is replaced.
    promote(o, /*optional=*/false);
  }
  return Status::Ok();
}

// Verify and update work through scratch of at most this many bytes per disk at a time.
constexpr size_t kScratchBytes = size_t(64) << 10;

Result<bool> ArrayCodecImpl::verify(Span<const uint8_t *const> disks, size_t len, size_t *mismatch_offset,
                                    unsigned *mismatch_disk) const {
  ECJIT_RETURN_IF_ERROR(check("verify", disks, len, /*writes=*/false));
  const size_t stripe = stripe_bytes(), e = spec_.element;
  const size_t chunk = std::max(stripe, kScratchBytes / stripe * stripe);
  std::vector<std::vector<uint8_t>> scratch(layout_.disks, std::vector<uint8_t>(std::min(chunk, len)));
  std::vector<uint8_t *> work(layout_.disks);
  for (unsigned d = 0; d < layout_.disks; ++d) work[d] = scratch[d].data();
  for (size_t at = 0; at < len; at += chunk) {
    const size_t n = std::min(chunk, len - at);
    for (unsigned d = 0; d < layout_.disks; ++d) std::memcpy(work[d], disks[d] + at, n);
    run_op(*encoder_, work.data(), work.data(), n);
    // Cell by cell in offset order; at one offset the lowest disk.
    for (size_t cell_at = 0; cell_at < n; cell_at += e) {
      const unsigned row = unsigned(cell_at / e % layout_.rows);
      size_t best = e;
      unsigned best_disk = 0;
      for (unsigned d = 0; d < layout_.disks; ++d) {
        if (!layout_.is_parity(layout_.cell(row, d))) continue;
        const uint8_t *a = disks[d] + at + cell_at, *b = work[d] + cell_at;
        if (std::memcmp(a, b, e) == 0) continue;
        size_t i = 0;
        while (a[i] == b[i]) ++i;
        if (i < best) best = i, best_disk = d;
      }
      if (best < e) {
        if (mismatch_offset) *mismatch_offset = at + cell_at + best;
        if (mismatch_disk) *mismatch_disk = best_disk;
        return false;
      }
    }
  }
  return true;
}

Result<std::shared_ptr<const ArrayCodecImpl::Op>> ArrayCodecImpl::update_op(unsigned disk) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = updates_.find(disk); it != updates_.end()) return it->second;
  }
  Result<jit::XorPlan> d =
      jit::array_update_plan(spec_, layout_, encoder_->desc, encoder_->map, disk, jit_->options().target);
  if (!d.ok()) return d.status();
  auto op = std::make_shared<const Op>(std::move(d->desc), std::move(d->map));
  std::lock_guard<std::mutex> lock(mutex_);
  return updates_.emplace(disk, std::move(op)).first->second;
}

Status ArrayCodecImpl::update(Span<uint8_t *const> disks, unsigned disk, const uint8_t *new_data, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check("update", read_only(disks), len, /*writes=*/true));
  if (disk >= layout_.disks)
    return Status(StatusCode::kInvalidArgument, "update: disk " + std::to_string(disk) + " out of range: " + spec() +
                                                    " has " + std::to_string(layout_.disks) + " disks");
  if (!new_data) return Status(StatusCode::kNullPointer, "update: new_data is null");
  if (new_data == disks[disk])
    return Status(StatusCode::kInvalidArgument, "update: new_data is disk " + std::to_string(disk) +
                                                    "'s own buffer; the old data must stay readable until parity is patched");
  Result<std::shared_ptr<const Op>> op = update_op(disk);
  if (!op.ok()) return op.status();
  if (!len) return Status::Ok();
  const std::shared_ptr<const Op> &o = *op;
  const size_t stripe = stripe_bytes(), e = spec_.element;
  const size_t chunk = std::max(stripe, kScratchBytes / stripe * stripe);
  std::vector<uint8_t> delta(std::min(chunk, len));
  std::vector<const uint8_t *> in(layout_.disks, delta.data());  // only slot `disk` is read
  std::vector<uint8_t *> out(disks.data, disks.data + disks.size);
  std::shared_ptr<const Kernel> k = std::atomic_load(&o->compiled);
  for (size_t at = 0; at < len; at += chunk) {
    const size_t n = std::min(chunk, len - at);
    uint8_t *old = disks[disk] + at;
    const uint8_t *now = new_data + at;
    for (size_t i = 0; i < n; ++i) delta[i] = old[i] ^ now[i];
    for (unsigned d = 0; d < layout_.disks; ++d) out[d] = disks[d] + at;
    if (k) k->fn(in.data(), out.data(), n);
    else o->runner.run(in.data(), out.data(), n);
    // Then the new data cells (not the parity cells, which were just patched).
    for (size_t cell_at = 0; cell_at < n; cell_at += e)
      if (!layout_.is_parity(layout_.cell(unsigned(cell_at / e % layout_.rows), disk)))
        std::memcpy(old + cell_at, now + cell_at, e);
  }
  const uint64_t bytes = len;
  if (!k && o->bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes >= jit_->options().promote_after_bytes &&
      o->desc.program.xors() <= XorCodec::kMaxUnrolledXors) {
    promote(o, /*optional=*/true);
  }
  return Status::Ok();
}

KernelInfo ArrayCodecImpl::decoder_info(const std::vector<bool> &present) const {
  uint64_t failed = 0;
  for (unsigned d = 0; d < layout_.disks && d < present.size(); ++d)
    if (!present[d]) failed |= uint64_t(1) << d;
  KernelInfo info = base_info_;
  if (!failed) {
    info.why = "nothing to rebuild";
    return info;
  }
  Result<std::shared_ptr<const Op>> op = rebuild_op(failed);
  if (!op.ok()) {
    info.why = op.status().message();
    return info;
  }
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&(*op)->compiled)) return k->info;
  info.symbol = (*op)->desc.symbol;
  info.decision.tier = KernelTier::kScheduleRunner;
  info.decision.xors = (*op)->desc.program.xors();
  info.decision.compiling = true;
  info.why = "schedule runner (" + std::to_string((*op)->desc.program.xors()) +
             " XORs per stripe), no compile; its kernel compiles in the background";
  return info;
}

}  // namespace ecjit::runtime
