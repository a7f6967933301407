// FftEngine: kernels, schedules, and the tile loop that feeds them shard pointers and scratch.
#include "runtime/fft_engine.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "codes/rs_fft_program.h"
#include "fft/ends.h"
#include "fft/mul_tables.h"
#include "fft/order.h"
#include "fft/prune.h"
#include "fft/schedule.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/fft_step_kernel.h"
#include "jit/decoder_planner.h"
#include "runtime/aot_shapes/aot_fft_steps.h"
#include "runtime/fft_tiles.h"

namespace ecjit::runtime {
namespace {

// The step kernels built into libecjit that run this Jit's schedules as its own would: the
// same multiplier tables and step kinds (ir::fft_multiply_name, ir::fft_radix8_steps), at most
// the target's vector width, run by this CPU. Null with JitOptions::aot_kernels off
// (ECJIT_AOT=0) or where none was built.
const aot::AotFftSteps *built_in_steps(const JitImpl &jit, codes::fft::Gf gf) {
  if (!jit.options().aot_kernels) return nullptr;
  const ir::TargetInfo &target = jit.target_info();
  if (!ir::fft_kernel_supported(target)) return nullptr;
  const std::string multiplies = ir::fft_multiply_name(target);
  const bool whole = ir::fft_radix8_steps(target);
  for (const aot::AotFftSteps *set : aot::runnable_fft_steps(gf == codes::fft::Gf::k8 ? 8 : 16))
    if (multiplies == set->multiplies && whole == set->whole_columns && set->vector_bits <= target.vector_bits)
      return set;
  return nullptr;
}

// A built-in step kernel as the Jit's own would be described.
Kernel built_in_kernel(const JitImpl &jit, const aot::AotFftSteps &set, void *address, const std::string &symbol) {
  Kernel k;
  k.address = address;
  k.info.symbol = symbol;
  k.info.strategy = "fft";
  k.info.target = jit.options().target;
  k.info.cpu = set.target;
  k.info.vector_bits = set.vector_bits;
  k.info.why = std::string("multiplies by ") + set.multiplies;
  k.info.decision.tier = KernelTier::kBuiltIn;
  return k;
}

// Scratch tiles of the calling thread: at least `bytes`, 64-byte aligned, kept for later calls.
uint8_t *scratch(size_t bytes) {
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  thread_local std::unique_ptr<uint8_t, Free> buf;
  thread_local size_t size = 0;
  if (size < bytes) {
    buf.reset(static_cast<uint8_t *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    size = buf ? bytes : 0;
  }
  return buf.get();
}

// Pointer tables of the calling thread, kept for later calls: slot 0 the steps' pointer
// array (run_shard_schedule, the matrix and core tiles), slot 1 the restored shards and
// slot 2 the shards read of a decode (FftEngine::decode).
template <class T>
std::vector<T> &pointers(size_t slot, size_t count) {
  thread_local std::vector<T> v[3];
  v[slot].assign(count, T{});
  return v[slot];
}

// The decode of `targets` from `sources` (exactly the shards `present` marks) as a matrix
// schedule; null where codes::fft::decode_matrix refuses (not for a valid plan).
// core: the code's decode core program (FftEngine::matrix_core).
std::shared_ptr<const sched::FftSchedule> matrix_decode(unsigned k, unsigned m, const std::vector<bool> &present,
                                                        const std::vector<unsigned> &sources,
                                                        const std::vector<unsigned> &targets, codes::fft::Gf gf,
                                                        const codes::fft::Program *core) {
  Result<std::vector<uint16_t>> coeffs = codes::fft::decode_matrix(k, m, present, sources, targets, gf, core);
  if (!coeffs.ok()) return nullptr;
  return std::make_shared<const sched::FftSchedule>(sched::fft_matrix_schedule(*coeffs, sources, targets, gf));
}

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_steps(void *fn, uint8_t *const *ptr, const sched::FftStep *steps, size_t count, const uint8_t *tables,
                size_t bytes) {
  if (count) reinterpret_cast<void (*)(uint8_t *const *, const sched::FftStep *, size_t, const uint8_t *, size_t)>(fn)(
      ptr, steps, count, tables, bytes);
}

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_kernel(KernelFn fn, const uint8_t *const *in, uint8_t *const *out, size_t len) {
  fn(in, out, len);
}

}  // namespace

Result<std::shared_ptr<const FftEngine>> FftEngine::make(JitImpl &jit, unsigned k, unsigned m, codes::fft::Gf gf) {
  std::shared_ptr<FftEngine> e(new FftEngine());
  e->jit_ = &jit;
  e->k_ = k;
  e->m_ = m;
  const std::string prefix = ir::fft_symbol_prefix(gf);
  e->core_desc_ = {ir::FftKernelDesc::Kind::kSteps, 0, 0, prefix + "steps", {}, {}, gf};
  // The step kernels built into libecjit serve where they run this target's schedules: no
  // compile on codec()'s thread nor in the background; else the Jit's own, one per field.
  const aot::AotFftSteps *built_in = built_in_steps(jit, gf);
  if (built_in) {
    e->transform_steps_ = built_in_kernel(jit, *built_in, built_in->transform_steps, prefix + "transform_steps");
    e->core_kernel_ = std::make_shared<const Kernel>(built_in_kernel(jit, *built_in, built_in->steps, prefix + "steps"));
  } else {
    Result<Kernel> steps =
        jit.fft_kernel({ir::FftKernelDesc::Kind::kTransformSteps, 0, 0, prefix + "transform_steps", {}, {}, gf});
    if (!steps.ok()) return steps.status();
    e->transform_steps_ = std::move(*steps);
  }
  // Three-layer steps where the step kernel holds eight slots and seven multipliers in
  // registers (whole-column AVX-512): a third fewer tile loads and stores in the transforms.
  e->radix8_ = ir::fft_radix8_steps(jit.target_info());
  Result<sched::FftSchedule> enc = sched::fft_encode_schedule(k, m, true, e->radix8_, gf);
  if (!enc.ok()) return enc.status();
  if (!sched::fft_steps_are_transforms(enc->steps))  // the transform kernel would skip a step
    return Status(StatusCode::kInternal, "rs-fft encode schedule holds a decode core's step kind");
  e->encode_schedule_ = std::move(*enc);
  sched::order_fft_steps_by_block(&e->encode_schedule_.steps, e->encode_schedule_.slots,
                                  l2_block_slots(e->encode_schedule_.slots, tile_bytes(e->encode_schedule_.slots)));
  e->encode_multiplies_ = sched::fft_multiplies(e->encode_schedule_.steps);
  e->geometry_ = *codes::fft::geometry(k, m, gf);  // the encode schedule's check passed
  e->decode_info_ = e->transform_steps_.info;
  e->decode_reads_matrices_only_ = ir::fft_multiplies_by_gfni(jit.target_info());
  const std::string multiplies = e->transform_steps_.info.why;  // "multiplies by gfni" / "... split-table"
  e->decode_info_.why = std::string(built_in ? "step kernels: built into libecjit for " + std::string(built_in->target)
                                             : std::string("step kernels: one per Jit")) +
                        ", " + multiplies + "; few losses as a matrix "
                        "(codes::fft::decode_matrix), where the shards read allow it the encoder's transforms "
                        "inverted (the transforms' kernel" + (built_in ? "" : ", compiled with the codec") +
                        "), else the code's decode core with the erasure set's multipliers as data (the kernel of "
                        "every step kind" + (built_in ? "" : ", compiled on the background thread after the codec") +
                        ")";
  e->encode_info_ = e->decode_info_;
  const ir::FftKernelDesc unrolled{ir::FftKernelDesc::Kind::kEncode, k, m,
                                   prefix + "encode__k" + std::to_string(k) + "_m" + std::to_string(m), {}, {}, gf};
  const bool small = ir::fft_kernel_slots(unrolled) <= kFftUnrolledEncodeSlots;
  e->encode_info_.why = "step kernel on the code's encode schedule (" + std::to_string(e->encode_schedule_.slots) +
                        " work slots" +
                        (small ? std::string(")")
                               : ", more than the " + std::to_string(kFftUnrolledEncodeSlots) + " unrolled)") +
                        ", " + multiplies;
  std::weak_ptr<const FftEngine> self = e;
  if (small) {
    // Behind built-in step kernels on the background thread (the step kernel encodes until
    // it lands; refused, the Jit stopping: the step kernel stays); else with the codec.
    if (built_in) {
      e->unrolled_coming_ = true;  // before the job can run: it clears it, compiled or failed
      const bool queued = jit.submit_background(
          [self, unrolled] {
            std::shared_ptr<const FftEngine> engine = self.lock();
            if (!engine) return;
            Result<Kernel> u = engine->jit_->fft_kernel(unrolled);
            engine->set_unrolled(u.ok() ? std::move(*u) : Kernel());  // failed: the step kernel stays
          },
          [self] { return !self.expired(); }, /*optional=*/false);
      if (!queued) e->unrolled_coming_ = false;  // refused (the Jit stopping): the job never runs
    } else {
      Result<Kernel> u = jit.fft_kernel(unrolled);
      if (!u.ok()) return u.status();
      e->set_unrolled(std::move(*u));
    }
  }
  // The decode core's schedule and, without built-in step kernels, its kernel, in the
  // background: ready before most first decodes. Refused (the Jit stopping): the first core
  // decode makes them.
  (void)jit.submit_background(
      [self, built_in] {
        if (std::shared_ptr<const FftEngine> engine = self.lock()) {
          (void)engine->core();
          if (!built_in) (void)engine->core_kernel();
        }
      },
      [self] { return !self.expired(); }, /*optional=*/false);
  return std::shared_ptr<const FftEngine>(std::move(e));
}

const FftEngine::Core &FftEngine::core() const {
  std::call_once(core_once_, [this] {
    auto c = std::make_unique<Core>();
    Result<sched::FftSchedule> schedule = sched::fft_decode_core(k_, m_, radix8_, geometry_.gf);
    // Fails only for a geometry make has refused already; the slots stay, the steps empty.
    if (schedule.ok()) {
      c->schedule = std::move(*schedule);
    } else {
      c->schedule.gf = geometry_.gf;
      c->schedule.slots = uint32_t(geometry_.decode_work);
    }
    sched::FftSchedule &sch = c->schedule;
    c->block_slots = l2_block_slots(sch.slots, kCoreTileBytes);  // every decode's tiles
    if (!c->block_slots) c->block_slots = l1_block_slots(sch.slots, core_slot_stride(kCoreTileBytes));
    sched::order_fft_steps_by_block(&sch.steps, sch.slots, c->block_slots);
    c->multiplies = sched::fft_multiplies(sch.steps);
    c->steps = sch.steps.size();
    // Folded for every point; a copy where the core may be pruned, else the core itself.
    std::vector<sched::FftStep> whole;
    if (c->steps > kFftPruneMaxSteps) whole.swap(sch.steps);
    else whole = sch.steps;
    c->whole = make_folded_core(*c, &whole, {});
    core_ = std::move(c);
  });
  return *core_;
}

void FftEngine::set_unrolled(Kernel k) const {
  std::lock_guard<std::mutex> lock(unrolled_mutex_);
  unrolled_coming_ = false;
  unrolled_ = std::move(k);
  unrolled_fn_.store(unrolled_.fn, std::memory_order_release);
}

KernelInfo FftEngine::encode_info() const {
  std::lock_guard<std::mutex> lock(unrolled_mutex_);
  if (!unrolled_.fn) {
    KernelInfo i = encode_info_;
    if (unrolled_coming_) {
      i.decision.compiling = true;
      i.why += "; its unrolled encoder is being compiled in the background";
    }
    return i;
  }
  KernelInfo i = unrolled_.info;
  i.why = "unrolled: the code's butterflies with constant twiddles per 64-byte column, " + transform_steps_.info.why;
  return i;
}

double FftEngine::matrix_make_ns(size_t matrix_cost, size_t targets) const {
  return double(matrix_cost) * kFftMatrixNsPerCoefficient +
         double(targets) * double(core().multiplies) * kFftMatrixNsPerCoreMultiply;
}

std::shared_ptr<const codes::fft::Program> FftEngine::matrix_core() const {
  std::lock_guard<std::mutex> lock(matrix_core_mutex_);
  if (!matrix_core_) {
    Result<codes::fft::Program> p = codes::fft::decode_core_program(k_, m_, geometry_.gf);
    if (p.ok()) matrix_core_ = std::make_shared<const codes::fft::Program>(std::move(*p));
  }
  return matrix_core_;
}

std::shared_ptr<const Kernel> FftEngine::core_kernel() const {
  if (std::shared_ptr<const Kernel> k = std::atomic_load(&core_kernel_)) return k;
  Result<Kernel> k = jit_->fft_kernel(core_desc_);  // one compile per Jit: later askers wait for it
  if (!k.ok()) return nullptr;
  auto made = std::make_shared<const Kernel>(std::move(*k));
  std::atomic_store(&core_kernel_, made);
  return made;
}

std::shared_ptr<const FftFoldedCore> FftEngine::make_folded_core(const Core &core, std::vector<sched::FftStep> *whole,
                                                                  std::vector<uint8_t> lost_blocks) const {
  const uint32_t n = core.schedule.slots, block = fft_prune_block(n), blocks = n / block;
  auto c = std::make_shared<FftFoldedCore>();
  // Every point filled and restored but those of the blocks: the folded steps take each
  // point's pointers per call (null: not read, not restored).
  c->pre.reserve(n);
  c->post.reserve(n);
  std::vector<bool> live(3 * size_t(n), false);
  for (uint32_t x = 0; x < n; ++x) {
    const bool zero = !lost_blocks.empty() && lost_blocks[x / block];
    const bool dead = !lost_blocks.empty() && lost_blocks[blocks + x / block];
    c->pre.push_back(zero ? sched::FftStep{sched::kFftStepZero, x, 0, 0} : sched::FftStep{sched::kFftStepMul, x, n + x, x});
    if (!dead) c->post.push_back({sched::kFftStepMul, 2 * n + x, x, n + x});
    live[2 * size_t(n) + x] = !dead;
  }
  if (whole) {
    c->core = std::move(*whole);
  } else {
    std::vector<std::vector<sched::FftStep>> p =
        sched::prune_fft_steps({&c->pre, &core.schedule.steps, &c->post}, 3 * size_t(n), live);
    c->pre = std::move(p[0]);
    c->core = std::move(p[1]);
    c->post = std::move(p[2]);
  }
  c->multiplies = sched::fft_multiplies(c->pre) + sched::fft_multiplies(c->core) + sched::fft_multiplies(c->post);
  c->lost_blocks = std::move(lost_blocks);
  const char *off = std::getenv("ECJIT_FFT_FOLD");
  if (!(off && off[0] == '0')) {
    const size_t ends = c->pre.size() + c->post.size();
    sched::fold_decode_ends(&c->pre, &c->core, &c->post, n, kPreTables * n, kPreTables * n + 1);
    c->ends_folded = c->pre.size() + c->post.size() < ends;
    // Where the core's scratch is past twice L2, its In steps ask for the shards two In steps
    // ahead read (Emerald Rapids, m lost at random, 4 KiB shards: 4096:4096 +4.5%,
    // 16384:16384 +4%); at 1024:1024 (2.2 MB of scratch, 2 MiB L2) that cost 1.7%.
    if (size_t(n) * core_slot_stride(kCoreTileBytes) > 4 * l2_budget()) sched::prefetch_shard_reads(c->core, n);
  }
  if (core.block_slots)  // several blocks: kept for the decodes' segmenting
    c->blocks = sched::fft_step_blocks(c->core, n, core.block_slots);
  return c;
}

std::shared_ptr<const FftFoldedCore> FftEngine::pruned_core(std::vector<uint8_t> lost_blocks, bool now) const {
  {
    std::lock_guard<std::mutex> lock(pruned_mutex_);
    for (size_t i = 0; i < pruned_.size(); ++i)
      if (pruned_[i]->lost_blocks == lost_blocks) {
        std::shared_ptr<const FftFoldedCore> c = pruned_[i];
        pruned_.erase(pruned_.begin() + ptrdiff_t(i));
        pruned_.push_back(c);
        return c;
      }
    if (!now) {
      if (std::find(pruning_.begin(), pruning_.end(), lost_blocks) != pruning_.end()) return nullptr;  // on its way
      // Queued on the second set that asks: sets whose blocks no other set shares (a few
      // scattered losses leave blocks of present points here and there) cost nothing.
      const auto seen = std::find(seen_.begin(), seen_.end(), lost_blocks);
      if (seen == seen_.end()) {
        if (seen_.size() >= kFftPrunedCores * 4) seen_.erase(seen_.begin());
        seen_.push_back(std::move(lost_blocks));
        return nullptr;
      }
      seen_.erase(seen);
      pruning_.push_back(lost_blocks);
    }
  }
  if (now) {  // made outside the lock (two threads may both make one; either serves)
    std::shared_ptr<const FftFoldedCore> c = make_folded_core(core(), nullptr, std::move(lost_blocks));
    keep_pruned(c);
    return c;
  }
  std::weak_ptr<const FftEngine> self = weak_from_this();
  auto make = [self, lost = lost_blocks] {
    if (std::shared_ptr<const FftEngine> e = self.lock()) {
      e->keep_pruned(e->make_folded_core(e->core(), nullptr, lost));
      e->done_pruning(lost);
    }
  };
  if (!jit_->submit_background(make, [self] { return !self.expired(); }, /*optional=*/true))
    done_pruning(lost_blocks);  // refused (queue full): a later set asks again
  return nullptr;
}

void FftEngine::keep_pruned(std::shared_ptr<const FftFoldedCore> c) const {
  std::lock_guard<std::mutex> lock(pruned_mutex_);
  if (pruned_.size() >= kFftPrunedCores) pruned_.erase(pruned_.begin());
  pruned_.push_back(std::move(c));
}

void FftEngine::done_pruning(const std::vector<uint8_t> &lost_blocks) const {
  std::lock_guard<std::mutex> lock(pruned_mutex_);
  const auto at = std::find(pruning_.begin(), pruning_.end(), lost_blocks);
  if (at != pruning_.end()) pruning_.erase(at);
}

void FftEngine::encode(const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  if (const KernelFn u = unrolled_fn_.load(std::memory_order_acquire)) return call_kernel(u, in, out, len);
  const unsigned k = k_;
  run_shard_schedule(
      encode_schedule_, encode_schedule_.tables.data(), [in, k](unsigned s) { return s < k ? in[s] : nullptr; },
      [out, k](unsigned s) { return s >= k ? out[s - k] : nullptr; }, len);
}

template <class In, class Out>
void FftEngine::run_shard_schedule(const sched::FftSchedule &s, const uint8_t *tables, In in, Out out, size_t len,
                                   const sched::FftSchedule *first) const {
  const size_t tile = tile_bytes(s.slots);
  const uint32_t restored = first ? first->slots : 0;
  uint8_t *scr = scratch(size_t(s.slots + restored) * tile);
  std::vector<uint8_t *> &ptr = pointers<uint8_t *>(0, s.slots + k_ + m_);
  std::vector<uint8_t *> &fptr = pointers<uint8_t *>(2, first ? first->slots + k_ + m_ : 0);
  for (size_t off = 0; off < len; off += tile) {
    const size_t bytes = std::min(tile, len - off);
    for (uint32_t x = 0; x < s.slots; ++x)
      ptr[x] = s.slot_shard[x] >= 0 ? out(unsigned(s.slot_shard[x])) + off : scr + size_t(x) * tile;
    for (unsigned i = 0; i < k_ + m_; ++i) {
      const uint8_t *p = in(i);
      ptr[s.slots + i] = p ? const_cast<uint8_t *>(p) + off : nullptr;  // read only
    }
    if (first) {
      for (uint32_t t = 0; t < restored; ++t) {
        const unsigned shard = unsigned(first->slot_shard[t]);
        uint8_t *o = out(shard);
        fptr[t] = o ? o + off : scr + size_t(s.slots + t) * tile;
        ptr[s.slots + shard] = fptr[t];  // the inverse reads it there
      }
      std::copy(ptr.begin() + s.slots, ptr.end(), fptr.begin() + restored);
      for (uint32_t t = 0; t < restored; ++t) fptr[restored + unsigned(first->slot_shard[t])] = nullptr;
      call_steps(transform_steps_.address, fptr.data(), first->steps.data(), first->steps.size(),
                 first->tables.data(), bytes);
    }
    call_steps(transform_steps_.address, ptr.data(), s.steps.data(), s.steps.size(), tables, bytes);
  }
}

std::shared_ptr<const FftTargetDecode> FftEngine::target_decode(const FftDecodePlan &plan,
                                                                const std::vector<unsigned> &targets,
                                                                size_t len) const {
  FftTargetCache &cache = *plan.decodes;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    for (const auto &[t, s] : cache.entries)
      if (t == targets) return s;
  }
  auto d = std::make_shared<FftTargetDecode>();
  // Matrix or transforms by their multiplies, the transforms counted whole: pruning them costs
  // ~1 ms per new set on a 1000:1000 core, too much for the first call of a single loss, so it
  // runs only once the transforms are chosen.
  d->matrix_cost = targets.size() * plan.sources.size();
  const Core &core = this->core();
  d->transform_cost = plan.sources.size() + core.multiplies + targets.size();
  std::vector<bool> present(k_ + m_, false);  // the shards read
  for (unsigned s : plan.sources) present[s] = true;
  // The inverted encoder costs about an encode (its transforms, one chunk's FFT truncated),
  // plus |first| x k where shards it reads are missing too; built only where the matrix would
  // not run anyway.
  if (d->matrix_cost > std::min(encode_multiplies_, d->transform_cost)) {
    // first_cost below must stay under transform_cost: no more shards first than that allows.
    const std::optional<codes::fft::InverseReads> reads = codes::fft::inverse_decode_reads(
        k_, m_, present, targets, geometry_.gf, (d->transform_cost - 1) / plan.sources.size());
    const size_t first_cost = reads ? reads->first.size() * plan.sources.size() : 0;
    std::optional<sched::FftSchedule> inv;
    if (reads && reads->sources == plan.sources && first_cost < d->transform_cost) {
      std::vector<unsigned> read = plan.sources;  // with the shards restored first
      read.insert(read.end(), reads->first.begin(), reads->first.end());
      // Its steps index the encoder's tables (the same twiddles): an entry holds its steps only.
      inv = sched::fft_inverse_decode_schedule(k_, m_, read, reads->targets, &encode_schedule_, radix8_, geometry_.gf);
    }
    std::shared_ptr<const sched::FftSchedule> first;
    if (inv && !reads->first.empty() &&
        !(first = matrix_decode(k_, m_, present, plan.sources, reads->first, geometry_.gf, matrix_core().get())))
      inv.reset();  // cannot fail for a valid plan; else the others serve
    if (inv) {
      sched::order_fft_steps_by_block(&inv->steps, inv->slots, l2_block_slots(inv->slots, tile_bytes(inv->slots)));
      d->inverse_cost = sched::fft_multiplies(inv->steps) + first_cost;
      if (d->inverse_cost < d->transform_cost && d->inverse_cost < d->matrix_cost) {
        const uint32_t slots = inv->slots;
        d->inverse = std::make_shared<const sched::FftSchedule>(std::move(*inv));
        d->first = std::move(first);
        d->unrolled_asked = !d->first && slots <= kFftUnrolledEncodeSlots;
        if (d->unrolled_asked) {
          // Its unrolled kernel on the background thread; the step kernel serves meanwhile.
          ir::FftKernelDesc desc{ir::FftKernelDesc::Kind::kInverse, k_, m_,
                                 std::string(ir::fft_symbol_prefix(geometry_.gf)) +
                                     "inverse__k" + std::to_string(k_) + "_m" + std::to_string(m_) + "_" +
                                     jit::decoder_op(targets, plan.sources),
                                 plan.sources, targets, geometry_.gf};
          std::weak_ptr<FftTargetDecode> entry = d;
          JitImpl *jit = jit_;
          (void)jit_->submit_background(
              [jit, entry, desc] {
                Result<Kernel> k = jit->fft_kernel(desc);  // a failure leaves the step kernel serving
                if (std::shared_ptr<FftTargetDecode> e = entry.lock(); e && k.ok() && k->fn)
                  std::atomic_store(&e->unrolled, std::make_shared<const Kernel>(std::move(*k)));
              },
              [entry] { return !entry.expired(); }, /*optional=*/true);
        }
      }
    }
  }
  if (!d->inverse && d->matrix_cost <= d->transform_cost) {
    // Its making against the whole transforms' run of the asking call (runtime/fft_engine.h).
    const double make_ns = matrix_make_ns(d->matrix_cost, targets.size());
    const double core_ns = double(d->transform_cost) * double(len / 64) * kFftCoreNsPerColumnMultiply;
    // Null only where decode_matrix refuses (not for a valid plan): the transforms serve.
    // The kept core program is fetched where the matrix is made (the background thread when
    // queued): the call that queues it does not build it.
    auto make = [self = weak_from_this(), k = k_, m = m_, gf = geometry_.gf, present, sources = plan.sources,
                 targets]() -> std::shared_ptr<const sched::FftSchedule> {
      const std::shared_ptr<const FftEngine> e = self.lock();
      return e ? matrix_decode(k, m, present, sources, targets, gf, e->matrix_core().get()) : nullptr;
    };
    if (len > 0 && make_ns > core_ns) {
      std::weak_ptr<FftTargetDecode> entry = d;
      d->matrix_asked = jit_->submit_background(
          [entry, make] {
            if (std::shared_ptr<FftTargetDecode> e = entry.lock())
              if (std::shared_ptr<const sched::FftSchedule> mat = make()) std::atomic_store(&e->matrix_later, mat);
          },
          [entry] { return !entry.expired(); }, /*optional=*/true);
      d->whole_core = d->matrix_asked;  // meanwhile: no pruning either (a making of its own)
    }
    if (!d->matrix_asked) d->matrix = make();
  }
  if (!d->matrix && !d->inverse) {
    // The erasure set's ends, on pointers [0, n) work slots (scratch tiles, evenly spaced: the
    // core's derivative-fused steps find other groups at one offset), [n, 2n) the shards read
    // and [2n, 3n) the shards restored: point x = shard * pre(x) or 0; restored shard at x =
    // point x * post(x) (plan.tables: pre, then post).
    const uint32_t n = core.schedule.slots, block = fft_prune_block(n);
    std::vector<bool> restored(n, false);
    for (unsigned t : targets) restored[fft_point(geometry_, t)] = true;
    d->whole_core = d->whole_core || core.steps > kFftPruneMaxSteps;
    std::shared_ptr<const FftFoldedCore> c = core.whole;
    if (!d->whole_core) {
      // What pruning can remove in whole steps: the IFFT's butterflies over blocks of points
      // read nowhere, the FFT's over blocks restored nowhere; too little of them, and the
      // whole core runs.
      const uint32_t blocks = n / block;
      std::vector<uint8_t> lost_blocks(2 * size_t(blocks), 1);  // FftFoldedCore's: unread, then unrestored
      for (uint32_t x = 0; x < n; ++x) {
        if (plan.holds[x]) lost_blocks[x / block] = 0;
        if (restored[x]) lost_blocks[blocks + x / block] = 0;
      }
      std::vector<bool> zero(n), dead(n);
      for (uint32_t x = 0; x < n; ++x) {
        zero[x] = lost_blocks[x / block];
        dead[x] = lost_blocks[blocks + x / block];
      }
      d->block_multiplies = sched::fft_block_butterflies(zero) + sched::fft_block_butterflies(dead);
      d->prune_skipped = d->whole_core = d->block_multiplies * kFftPruneMinShare < core.multiplies;
      if (!d->whole_core) {
        // Made on this call where what it removes over the call's columns pays for it (or
        // without a call: decide); else in the background, the whole core serving.
        const double saved_ns = double(d->block_multiplies) * double((len + 63) / 64) * kFftCoreNsPerColumnMultiply;
        const bool now = len == 0 || saved_ns >= kFftPruneNsPerStep * double(core.steps + n);
        if (std::shared_ptr<const FftFoldedCore> p = pruned_core(std::move(lost_blocks), now)) {
          c = std::move(p);
          d->transform_cost = c->multiplies;
        } else {
          d->whole_core = d->prune_later = true;
        }
      }
    }
    // The folded core's fills and restores that stay steps, for this set's points (in point
    // order, as order_fft_ends_by_block wants them).
    d->folded = c;
    d->ends_folded = c->ends_folded;
    d->pre.reserve(c->pre.size());
    d->post.reserve(std::min(c->post.size(), targets.size()));
    for (const sched::FftStep &st : c->pre)
      d->pre.push_back(st.kind == sched::kFftStepMul && st.b == n + st.a && !plan.holds[st.a]
                           ? sched::FftStep{sched::kFftStepZero, st.a, 0, 0}
                           : st);
    for (const sched::FftStep &st : c->post)
      if (restored[st.a - 2 * n]) d->post.push_back(st);
    // Each block's slots filled from the shards just before its first transform steps and
    // finished just after its last, while its tiles are in L2 (L1 where the core fits L2).
    d->segments = sched::order_fft_ends_by_block(&d->pre, c->core, &d->post, n, core.block_slots,
                                                 c->blocks.empty() ? nullptr : &c->blocks);
    sched::prefetch_shard_reads(d->pre, n);  // pre runs in its order, across the segments
  }
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.entries.size() >= FftTargetCache::kEntries) cache.entries.erase(cache.entries.begin());
  cache.entries.emplace_back(targets, d);
  return d;
}

size_t FftEngine::inverse_first_most() const {
  // target_decode's bound, first x k < k + the core's multiplies + targets, at its largest
  // (targets: every shard).
  return (k_ + core().multiplies + k_ + m_ - 1) / k_;
}

size_t FftEngine::decode_entry_bytes() const {
  // The set's own fills and restores, or the inverted encoder's steps (about the encoder's;
  // their tables are the encoder's), whichever is larger; the pruned cores are the engine's.
  const size_t steps = std::max(2 * size_t(geometry_.decode_work), encode_schedule_.steps.size());
  return steps * sizeof(sched::FftStep);
}

void FftEngine::run_matrix(const sched::FftSchedule &mat, const FftDecodePlan &plan, const uint8_t *const *in_at,
                           uint8_t *const *target_out, size_t len) const {
  std::vector<uint8_t *> &ptr = pointers<uint8_t *>(0, mat.slots + k_ + m_);
  const size_t tile = 16384;
  for (size_t off = 0; off < len; off += tile) {
    for (uint32_t t = 0; t < mat.slots; ++t) ptr[t] = target_out[t] + off;
    for (size_t i = 0; i < plan.sources.size(); ++i)
      ptr[mat.slots + plan.sources[i]] = const_cast<uint8_t *>(in_at[plan.points[i]]) + off;  // read only
    call_steps(transform_steps_.address, ptr.data(), mat.steps.data(), mat.steps.size(), mat.tables.data(),
               std::min(tile, len - off));
  }
}

void FftEngine::decide(const FftDecodePlan &plan, const std::vector<unsigned> &targets, KernelDecision *d) const {
  const std::shared_ptr<const FftTargetDecode> td = target_decode(plan, targets);
  FftDecodeDecision &f = d->fft;
  f = FftDecodeDecision();
  f.matrix_multiplies = td->matrix_cost;
  f.transform_multiplies = td->transform_cost;
  f.restored = unsigned(targets.size());
  f.read = unsigned(plan.sources.size());
  if (td->matrix_asked || td->matrix) {
    f.route = FftRoute::kMatrix;
    f.multiplies = td->matrix_cost;
    f.made_later = td->matrix_asked && std::atomic_load(&td->matrix_later) != nullptr;
    d->compiling = td->matrix_asked && !f.made_later;
    return;
  }
  if (td->inverse) {
    f.route = FftRoute::kInverse;
    f.multiplies = td->inverse_cost;
    f.restored_first = td->first ? unsigned(td->first->slots) : 0;
    f.unrolled = std::atomic_load(&td->unrolled) != nullptr;
    d->compiling = !f.unrolled && td->unrolled_asked;
    if (f.unrolled) d->tier = KernelTier::kCompiled;
    return;
  }
  f.route = FftRoute::kTransforms;
  f.multiplies = f.whole_multiplies = td->transform_cost;
  f.ends_folded = td->ends_folded;
  f.block_multiplies = td->block_multiplies;
  f.pruning = td->prune_skipped  ? FftPruning::kTooScattered
              : td->prune_later  ? FftPruning::kLater
              : td->whole_core   ? FftPruning::kCoreTooLong
                                 : FftPruning::kPruned;
  if (f.pruning == FftPruning::kPruned) f.whole_multiplies = plan.sources.size() + core().multiplies + targets.size();
}

std::string fft_decode_why(const KernelDecision &d) {
  const FftDecodeDecision &f = d.fft;
  const std::string matrix = std::to_string(f.matrix_multiplies), transforms = std::to_string(f.transform_multiplies);
  const std::string shape = " (" + std::to_string(f.restored) + " restored x " + std::to_string(f.read) + " read)";
  switch (f.route) {
    case FftRoute::kNone:
      return "";
    case FftRoute::kMatrix:
      return "this set: a matrix, " + matrix + " multiply-adds per element" + shape + ", against the transforms' " +
             transforms +
             (f.made_later ? "; made in the background (the whole transforms served until then)"
              : d.compiling ? "; being made in the background: its making would cost the first call more than the "
                              "whole transforms, which serve until then"
                            : "");
    case FftRoute::kInverse:
      return "this set: the encoder's transforms inverted (every recovery shard read at the high rate, one "
             "whole chunk at the low" +
             (f.restored_first ? ", the " + std::to_string(f.restored_first) +
                                     " of them missing restored first as a matrix"
                               : std::string()) +
             "), " + std::to_string(f.multiplies) + " multiplies per element, against the decode core's " +
             transforms + " and a matrix's " + matrix +
             (f.unrolled ? "; unrolled for this set" : d.compiling ? "; step kernel until its unrolled kernel is compiled" : "");
    case FftRoute::kTransforms:
      break;
  }
  const std::string matrix_ends =
      matrix + (f.ends_folded ? "; the shards read and restored inside the first and last transform steps" : "");
  const std::string head = "this set: the transforms, " + transforms + " multiplies per element";
  switch (f.pruning) {
    case FftPruning::kTooScattered:
      return head + ", not pruned (losses too scattered: " + std::to_string(f.block_multiplies) +
             " in whole blocks of points, under 1/" + std::to_string(kFftPruneMinShare) +
             " of the core's), against a matrix's " + matrix_ends;
    case FftPruning::kLater:
      return head + ", not pruned: pruning its blocks of points read or restored nowhere (" +
             std::to_string(f.block_multiplies) +
             " multiplies) would cost this call more than it removes; the core pruned for them is made in the "
             "background once a second set loses the same blocks, for the sets after it; against a matrix's " +
             matrix_ends;
    case FftPruning::kCoreTooLong:
      return head + " (a core past " + std::to_string(kFftPruneMaxSteps) + " steps is not pruned), against a matrix's " +
             matrix_ends;
    default:
      return head + " after pruning (of " + std::to_string(f.whole_multiplies) + "; points read " +
             std::to_string(f.read) + ", restored " + std::to_string(f.restored) + "), against a matrix's " +
             matrix_ends;
  }
}

bool FftEngine::decode(const FftDecodePlan &plan, const uint8_t *const *in_at, uint8_t *const *out_at,
                       size_t len) const {
  const sched::FftSchedule &core = this->core().schedule;
  const uint32_t n = core.slots;
  // Few losses: |targets| x k multiply-adds straight from the shards, no scratch.
  thread_local std::vector<unsigned> targets;
  targets.clear();
  std::vector<uint8_t *> &target_out = pointers<uint8_t *>(1, 0);
  for (unsigned s = 0; s < k_ + m_; ++s) {
    const size_t x = fft_point(geometry_, s);
    if (out_at[x]) {
      targets.push_back(s);
      target_out.push_back(out_at[x]);
    }
  }
  const std::shared_ptr<const FftTargetDecode> td = target_decode(plan, targets, len);
  if (std::shared_ptr<const Kernel> u = std::atomic_load(&td->unrolled)) {
    std::vector<const uint8_t *> &in = pointers<const uint8_t *>(2, plan.sources.size());
    for (size_t i = 0; i < plan.sources.size(); ++i) in[i] = in_at[plan.points[i]];
    call_kernel(u->fn, in.data(), target_out.data(), len);
    return true;
  }
  if (const sched::FftSchedule *inv = td->inverse.get()) {
    // Shard s sits at its point: read where the plan holds it, written where out_at names it.
    const codes::fft::Geometry &g = geometry_;
    run_shard_schedule(
        *inv, encode_schedule_.tables.data(),
        [&](unsigned s) -> const uint8_t * {
          const size_t x = fft_point(g, s);
          return plan.holds[x] ? in_at[x] : nullptr;
        },
        [&](unsigned s) { return out_at[fft_point(g, s)]; }, len, td->first.get());
    return true;
  }
  const sched::FftSchedule *mat = td->matrix.get();
  std::shared_ptr<const sched::FftSchedule> later;
  if (!mat && td->matrix_asked && (later = std::atomic_load(&td->matrix_later))) mat = later.get();
  if (mat) {
    run_matrix(*mat, plan, in_at, target_out.data(), len);
    return true;
  }
  std::shared_ptr<const Kernel> kernel = std::atomic_load(&core_kernel_);
  if (!kernel) {
    // The decode core's kernel not compiled yet (a first decode soon after the Jit's first
    // rs-fft codec): a matrix on the transforms' kernel serves this call where making and
    // running it costs less than kFftInterimMatrixNs; else the call waits for the compile.
    const double ns = matrix_make_ns(td->matrix_cost, targets.size()) +
                      double(td->matrix_cost) * double(len / 64) * kFftCoreNsPerColumnMultiply;
    if (ns <= kFftInterimMatrixNs) {
      std::vector<bool> present(k_ + m_, false);
      for (unsigned s : plan.sources) present[s] = true;
      if (std::shared_ptr<const sched::FftSchedule> interim =
              matrix_decode(k_, m_, present, plan.sources, targets, geometry_.gf, matrix_core().get())) {
        if (td->matrix_asked) std::atomic_store(&td->matrix_later, interim);  // what the background makes
        run_matrix(*interim, plan, in_at, target_out.data(), len);
        return true;
      }
    }
    kernel = core_kernel();
    if (!kernel) return false;
  }
  const size_t tile = kCoreTileBytes, stride = core_slot_stride(tile);
  uint8_t *scr = scratch(size_t(n) * stride);
  std::vector<uint8_t *> &ptr = pointers<uint8_t *>(0, kPreTables * size_t(n) + 2);
  void *fn = kernel->address;
  for (uint32_t x = 0; x < n; ++x) ptr[x] = scr + size_t(x) * stride;
  // The folded ends' table arrays (sched::fold_decode_ends): pre's, then post's.
  ptr[kPreTables * n] = const_cast<uint8_t *>(plan.tables.data());
  ptr[kPreTables * n + 1] = const_cast<uint8_t *>(plan.tables.data()) + size_t(n) * sched::kFftMulTableBytes;
  // The shards read and restored at the first tile (null: not read, not restored); each
  // later tile moves the others on by a tile (a branch-free pass the compiler vectorizes).
  uint8_t **shard_ptr = ptr.data() + n;
  for (uint32_t x = 0; x < n; ++x) {
    shard_ptr[x] = plan.holds[x] ? const_cast<uint8_t *>(in_at[x]) : nullptr;  // read only
    shard_ptr[n + x] = out_at[x];
  }
  for (size_t off = 0; off < len; off += tile) {
    if (off)
      for (size_t i = 0; i < 2 * size_t(n); ++i)
        shard_ptr[i] = shard_ptr[i] ? shard_ptr[i] + tile : nullptr;
    const size_t bytes = std::min(tile, len - off);
    const sched::FftStep *lists[3] = {td->pre.data(), td->folded->core.data(), td->post.data()};
    for (const sched::FftSegment &g : td->segments)  // pre and post: plan.tables; the core: its own
      call_steps(fn, ptr.data(), lists[g.list] + g.begin, g.end - g.begin,
                 g.list == 1 ? core.tables.data() : plan.tables.data(), bytes);
  }
  return true;
}

}  // namespace ecjit::runtime
