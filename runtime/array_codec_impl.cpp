// ArrayCodecImpl: cell maps by GF(2) elimination, XOR schedules over (disk, row) packets, kernels over the disk buffers.
#include "runtime/array_codec_impl.h"

#include "codes/xor_schedule.h"
#include "ir_builders/kernel_builder.h"
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
  std::vector<bool> parity(c->layout_.cells());
  for (unsigned cell = 0; cell < c->layout_.cells(); ++cell) parity[cell] = c->layout_.is_parity(cell);
  Result<ir::XorKernelDesc> enc = c->plan(parity, "encode", /*best=*/true, nullptr);
  if (!enc.ok()) return enc.status();
  if (enc->program.xors() > XorCodec::kMaxUnrolledXors) {
    c->encoder_runner_ = std::make_unique<XorRunner>(*enc);
    c->encoder_.info.symbol = enc->symbol;
    c->encoder_.info.strategy = "xor";
    c->encoder_.info.why = "schedule runner: " + std::to_string(enc->program.xors()) + " XORs per stripe, too many to unroll";
    return c;
  }
  Result<Kernel> k = c->jit_->xor_kernel(*enc, /*shared=*/true);
  if (!k.ok()) return k.status();
  c->encoder_ = std::move(*k);
  c->encoder_.info.why = "unrolled schedule, " + std::to_string(enc->program.xors()) + " XORs per stripe";
  return c;
}

Result<ir::XorKernelDesc> ArrayCodecImpl::plan(const std::vector<bool> &unknown, const std::string &op,
                                               bool best, codes::BitMatrix *map_out) const {
  codes::BitMatrix map;
  std::vector<unsigned> lost, known;
  ECJIT_RETURN_IF_ERROR(codes::solve_cells(layout_, unknown, &map, &lost, &known));
  ir::XorKernelDesc d;
  // Packet (disk, row) of every disk buffer: in and out are the same pointer array.
  for (unsigned c : known) d.inputs.push_back({layout_.disk_of(c), layout_.row_of(c)});
  for (unsigned c : lost) d.outputs.push_back({layout_.disk_of(c), layout_.row_of(c)});
  d.w = layout_.rows;
  d.packet = spec_.element;
  d.symbol = ir::kernel_symbol(op, spec_.to_string(), jit_->options().target);
  if (best) {
    Result<codes::XorProgram> p = codes::best_schedule(map);
    if (!p.ok()) return p.status();
    d.program = std::move(*p);
  } else {
    d.program = codes::make_schedule(map, codes::XorSchedule::kSmart);
  }
  ECJIT_RETURN_IF_ERROR(codes::check_program(d.program, map));
  if (map_out) *map_out = std::move(map);
  return d;
}

Status ArrayCodecImpl::check(const char *what, Span<uint8_t *const> disks, size_t len) const {
  if (disks.size != layout_.disks)
    return Status(StatusCode::kShardCount, std::string(what) + ": " + spec() + " has " +
                                               std::to_string(layout_.disks) + " disks; got " +
                                               std::to_string(disks.size));
  if (!disks.data) return Status(StatusCode::kNullPointer, std::string(what) + ": the disk pointer array is null");
  for (unsigned d = 0; d < layout_.disks; ++d)
    if (!disks[d]) return Status(StatusCode::kNullPointer, std::string(what) + ": disk " + std::to_string(d) + " is null");
  ECJIT_RETURN_IF_ERROR(check_distinct_outputs(what, {"disk", disks.data, disks.size}, {}));
  if (len % stripe_bytes())
    return Status(StatusCode::kShardSize, std::string(what) + ": len " + std::to_string(len) +
                                              " is not a multiple of the stripe (" + std::to_string(layout_.rows) +
                                              " rows of " + std::to_string(spec_.element) + " bytes)");
  return Status::Ok();
}

void ArrayCodecImpl::run(KernelFn fn, const XorRunner *runner, Span<uint8_t *const> disks, size_t len) const {
  run_split(*jit_, disks.data, disks.size, disks.data, disks.size, len, stripe_bytes(),
            [fn, runner](const uint8_t *const *in, uint8_t *const *out, size_t n) {
              if (fn) fn(in, out, n);
              else runner->run(in, out, n);
            });
}

Status ArrayCodecImpl::encode(Span<uint8_t *const> disks, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check("encode", disks, len));
  if (len) run(encoder_.fn, encoder_runner_.get(), disks, len);
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayCodecImpl::Op>> ArrayCodecImpl::rebuild_op(uint64_t failed) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = rebuilds_.find(failed); it != rebuilds_.end()) return it->second;
  }
  std::vector<bool> unknown(layout_.cells());
  std::vector<unsigned> lost_disks;
  for (unsigned d = 0; d < layout_.disks; ++d)
    if ((failed >> d) & 1) lost_disks.push_back(d);
  for (unsigned c = 0; c < layout_.cells(); ++c) unknown[c] = (failed >> layout_.disk_of(c)) & 1;
  codes::BitMatrix map;
  Result<ir::XorKernelDesc> d = plan(unknown, "rebuild_d" + join_indices(lost_disks), /*best=*/false, &map);
  if (!d.ok()) {
    if (d.status().code() != StatusCode::kTooManyErasures) return d.status();
    return Status(StatusCode::kTooManyErasures, spec() + " cannot rebuild disks " + join_indices(lost_disks) + ": " +
                                                    d.status().message());
  }
  auto op = std::make_shared<const Op>(std::move(*d), std::move(map));
  std::lock_guard<std::mutex> lock(mutex_);
  return rebuilds_.emplace(failed, std::move(op)).first->second;
}

Status ArrayCodecImpl::reconstruct(Span<uint8_t *const> disks, const std::vector<bool> &present, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check("reconstruct", disks, len));
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
  run(k ? k->fn : nullptr, &o->runner, disks, len);
  if (!k && o->desc.program.xors() <= XorCodec::kMaxUnrolledXors) {
    // The set's unrolled kernel (best schedule), compiled in the background from its first call.
    JitImpl *jit = jit_.get();  // the task runs on this Jit's own thread, which it outlives
    promote_in_background<Op>(
        *jit_, o, o->asked, o->bytes,
        [jit](const std::shared_ptr<const Op> &set) {
          std::shared_ptr<const Kernel> k = promoted_xor_kernel(*jit, set->desc, set->map, "stripe");
          if (k) std::atomic_store(&set->compiled, std::move(k));  // else the runner keeps serving
        },
        // Not optional: a failed-disk set serves every stripe until the disk is replaced.
        [] { return true; }, /*optional=*/false);
  }
  return Status::Ok();
}

KernelInfo ArrayCodecImpl::decoder_info(const std::vector<bool> &present) const {
  uint64_t failed = 0;
  for (unsigned d = 0; d < layout_.disks && d < present.size(); ++d)
    if (!present[d]) failed |= uint64_t(1) << d;
  KernelInfo info = encoder_.info;
  info.symbol.clear();
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
  info.why = "schedule runner (" + std::to_string((*op)->desc.program.xors()) +
             " XORs per stripe), no compile; its kernel compiles in the background";
  return info;
}

}  // namespace ecjit::runtime
