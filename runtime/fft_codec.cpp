// FftCodec: construction, the kernel seam, encode and the rebuilds (reconstruct and its variants).
#include "runtime/fft_codec.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "codes/families.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "runtime/fft_engine.h"
#include "runtime/parallel_kernel.h"
#include "runtime/shard_checks.h"
#include "runtime/spec_choice.h"

namespace ecjit::runtime {
namespace {

// Memory the cached decode plans of one codec may hold (with max_cached_kernels plans at most).
constexpr size_t kPlanBudget = size_t(64) << 20;

std::string num(size_t v) { return std::to_string(v); }

// spec re-validated (it may have been assembled by hand rather than parsed) as an rs-fft spec.
Result<CodeSpec> checked_spec(const CodeSpec &spec) {
  Result<CodeSpec> checked = CodeSpec::parse(spec.to_string());
  if (!checked.ok()) return checked.status();
  if (codes::codec_kind(*checked) != codes::CodecKind::kFft)
    return Status(StatusCode::kInvalidSpec, checked->to_string() + " is not an rs-fft code");
  checked->chosen_by = spec.chosen_by;  // not in the text: an "rs:" spec's reason stays
  return checked;
}

}  // namespace

size_t FftCodec::SetKeyHash::operator()(const SetKey &k) const {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t w : k.bits) h = (h ^ w) * 1099511628211ULL;
  return size_t(h);
}

FftCodec::FftCodec(std::shared_ptr<JitImpl> jit, const CodeSpec &spec, const codes::fft::Geometry &g,
                   size_t plans)
    : jit_(std::move(jit)), spec_(spec), geometry_(g), plans_(plans) {}

Result<std::shared_ptr<FftCodec>> FftCodec::make(std::shared_ptr<JitImpl> jit, const CodeSpec &spec) {
  Result<CodeSpec> checked = checked_spec(spec);
  if (!checked.ok()) return checked.status();
  FftKernels kernels;
  // The JIT kernels of whole chunks (runtime/fft_engine.h). A target without them (no 16-entry
  // byte shuffle) keeps the scalar path; a failed compile is an error like any codec's.
  Result<std::shared_ptr<const FftEngine>> engine = FftEngine::make(*jit, checked->k, checked->m, codes::fft::gf_of_bits(checked->gf));
  if (engine.ok()) {
    std::shared_ptr<const FftEngine> e = *engine;
    kernels.encode = [e](const uint8_t *const *in, uint8_t *const *out, size_t len) { e->encode(in, out, len); };
    kernels.decode = [e](const FftDecodePlan &plan, const uint8_t *const *in_at, uint8_t *const *out_at,
                         size_t len) { return e->decode(plan, in_at, out_at, len); };
    kernels.decide = [e](const FftDecodePlan &plan, const std::vector<unsigned> &targets, KernelDecision *d) {
      e->decide(plan, targets, d);
    };
    kernels.decode_entry_bytes = e->decode_entry_bytes();
    kernels.decode_reads_matrices_only = e->decode_reads_matrices_only();
    kernels.inverse_first_most = [e] { return e->inverse_first_most(); };
    kernels.encode_info = e->encode_info();
    kernels.encode_info_now = [e] { return e->encode_info(); };
    kernels.decode_info = e->decode_info();
  } else if (engine.status().code() != StatusCode::kUnsupported) {
    return engine.status();
  }
  return make(std::move(jit), *checked, std::move(kernels));
}

Result<std::shared_ptr<FftCodec>> FftCodec::make(std::shared_ptr<JitImpl> jit, const CodeSpec &spec,
                                                 FftKernels kernels) {
  Result<CodeSpec> checked = checked_spec(spec);
  if (!checked.ok()) return checked.status();
  Result<codes::fft::Geometry> g = codes::fft::geometry(checked->k, checked->m, codes::fft::gf_of_bits(checked->gf));
  if (!g.ok()) return g.status();
  const size_t n = g->decode_work;
  const size_t plan_bytes = 3 * n + 8 * size_t(checked->k) +
                            (kernels.decode ? 2 * n * sched::kFftMulTableBytes +
                                                  FftTargetCache::kEntries * kernels.decode_entry_bytes
                                            : 0);
  const size_t plans = std::clamp<size_t>(kPlanBudget / plan_bytes, 1, jit->options().max_cached_kernels);
  std::shared_ptr<FftCodec> c(new FftCodec(std::move(jit), *checked, *g, plans));
  c->kernels_ = std::move(kernels);
  return c;
}

Status FftCodec::check_len(const char *what, size_t len) const {
  if (!codes::fft::check_shard_bytes(len, geometry_.gf).ok())
    return Status(StatusCode::kShardSize,
                  std::string(what) + ": len = " + num(len) + ": " + spec_.to_string() +
                      (geometry_.gf == codes::fft::Gf::k8
                           ? " shards must hold at least one byte"
                           : " shards hold 16-bit elements, so len must be nonzero and even (reed-solomon-simd's rule)"));
  return Status::Ok();
}

// ---- Running: the seam, the scalar path, the split ----

void FftCodec::run_scalar(const Job &job, const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  if (!job.plan) fft_scalar_encode(geometry_, in, out, len);
  else fft_scalar_decode(geometry_, *job.plan, in, job.targets, out, job.n_targets, len);
}

void FftCodec::run_chunks(const Job &job, const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  if (!job.plan && kernels_.encode) {
    kernels_.encode(in, out, len);
    return;
  }
  if (job.plan && kernels_.decode) {  // by point, as FftDecodeFn takes them
    // decode_work entries each (16384:16384: 1 MiB of pointers): the calling thread's, kept.
    const size_t n = geometry_.decode_work;
    thread_local std::vector<const uint8_t *> in_at;
    thread_local std::vector<uint8_t *> out_at;
    in_at.assign(n, in[0]);
    out_at.assign(n, nullptr);
    for (size_t i = 0; i < job.plan->sources.size(); ++i) in_at[job.plan->points[i]] = in[i];
    for (size_t t = 0; t < job.n_targets; ++t) out_at[fft_point(geometry_, job.targets[t])] = out[t];
    if (kernels_.decode(*job.plan, in_at.data(), out_at.data(), len)) return;
  }
  run_scalar(job, in, out, len);
}

void FftCodec::run(const Job &job, const uint8_t *const *in, size_t n_in, uint8_t *const *out, size_t n_out,
                   size_t len) const {
  const size_t whole = len / 64 * 64;
  if (whole)
    run_split(*jit_, in, n_in, out, n_out, whole, kSplitAlign,
              [this, &job](const uint8_t *const *i, uint8_t *const *o, size_t l) { run_chunks(job, i, o, l); });
  if (whole == len) return;
  // The final partial chunk: its h low bytes then h high bytes, unpacked on its own.
  std::vector<const uint8_t *> tail_in(n_in);
  std::vector<uint8_t *> tail_out(n_out);
  for (size_t i = 0; i < n_in; ++i) tail_in[i] = in[i] + whole;
  for (size_t i = 0; i < n_out; ++i) tail_out[i] = out[i] + whole;
  run_scalar(job, tail_in.data(), tail_out.data(), len - whole);
}

// ---- Encode ----

Status FftCodec::encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity, size_t len) const {
  ECJIT_RETURN_IF_ERROR(check_encode_shards(spec_, data, parity));
  ECJIT_RETURN_IF_ERROR(check_len("encode", len));
  run(Job{}, data.data, spec_.k, parity.data, spec_.m, len);
  return Status::Ok();
}

KernelInfo FftCodec::scalar_info(const char *op) const {
  KernelInfo i;
  i.symbol = std::string("codes::fft::") + op + " (scalar reference, not compiled)";
  i.strategy = "fft";
  i.target = jit_->options().target;
  i.cpu = jit_->target_info().cpu;
  i.vector_bits = 64;
  i.decision.tier = KernelTier::kReference;
  const bool decode = std::string(op) == "decode";
  const size_t block = fft_block_bytes(decode ? geometry_.decode_work : 2 * geometry_.chunk);
  i.why = std::string("scalar reference (codes/rs_fft.h: ") +
          (geometry_.gf == codes::fft::Gf::k8 ? "Leopard-RS's GF(2^8)" : "reed-solomon-simd's GF(2^16)") +
          " additive FFT) on column blocks of " +
          num(block) + " bytes per shard" +
          (decode ? "; erasure-locator logs planned once per erasure set" : "") +
          "; no JIT kernel for rs-fft on this Jit";
  return i;
}

KernelInfo FftCodec::encoder_info() const {
  if (!kernels_.encode) return with_spec_choice(scalar_info("encode"), spec_);
  return with_spec_choice(kernels_.encode_info_now ? kernels_.encode_info_now() : kernels_.encode_info, spec_);
}

// ---- Rebuilds ----

Result<std::shared_ptr<const FftDecodePlan>> FftCodec::plan(const std::vector<unsigned> &sources) const {
  SetKey key;
  key.bits.assign((size_t(n()) + 63) / 64, 0);
  for (unsigned s : sources) key.bits[s / 64] |= uint64_t(1) << (s % 64);
  return plans_.get(key, [&]() -> Result<std::shared_ptr<const FftDecodePlan>> {
    auto p = std::make_shared<FftDecodePlan>(plan_fft_decode(geometry_, sources));
    if (kernels_.decode) {  // pre-multipliers at the sources, post-multipliers elsewhere
      const size_t n = geometry_.decode_work;
      const codes::fft::Gf gf = geometry_.gf;
      const uint16_t modulus = uint16_t(codes::fft::lch_field(gf).modulus);
      const bool matrices_only = kernels_.decode_reads_matrices_only;
      // Whole tables (another decode kernel) are zero where nothing is written.
      if (matrices_only) p->tables.resize(2 * n * sched::kFftMulTableBytes);
      else p->tables.assign(2 * n * sched::kFftMulTableBytes, 0);
      for (size_t x = 0; x < n; ++x) {
        if (p->holds[x]) sched::fft_mul_tables(p->logs[x], &p->tables[x * sched::kFftMulTableBytes], gf, matrices_only);
        else
          sched::fft_mul_tables(uint16_t(modulus - p->logs[x]), &p->tables[(n + x) * sched::kFftMulTableBytes], gf,
                                matrices_only);
      }
    }
    return std::shared_ptr<const FftDecodePlan>(std::move(p));
  });
}

Status FftCodec::rebuild(const char *what, Span<uint8_t *const> shards, const std::vector<bool> &present,
                         const ShardSet *wanted, bool data_only, size_t len, Rebuild mode,
                         std::shared_ptr<const FftDecodePlan> *out) const {
  const bool run_now = mode == Rebuild::kRun;
  const unsigned n = this->n(), k = spec_.k;
  if (run_now && shards.size != n)
    return Status(StatusCode::kShardCount, std::string(what) + ": " + spec_.to_string() + " has " + num(n) +
                                               " shards; got " + num(shards.size));
  if (present.size() != n)
    return Status(StatusCode::kShardCount, std::string(what) + ": present has " + num(present.size()) +
                                               " entries; the code has " + num(n) + " shards");
  if (wanted && (wanted->invalid() || wanted->end_index() > n))
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": a wanted shard index is out of range (n = " + num(n) + ")");
  // Sources: the first k present shards in index order; targets: the missing shards asked for.
  std::vector<unsigned> sources, targets;
  std::vector<uint8_t> is_target(n, 0);
  unsigned have = 0;
  for (unsigned s = 0; s < n; ++s) {
    if (present[s]) {
      if (have++ < k) sources.push_back(s);
    } else if (wanted ? wanted->contains(s) : (!data_only || s < k)) {
      targets.push_back(s);
      is_target[s] = 1;
    }
  }
  if (run_now) {
    if (!shards.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
    for (unsigned s = 0; s < n; ++s)
      if (!shards[s] && (present[s] || is_target[s]))
        return Status(StatusCode::kNullPointer,
                      std::string(what) + ": " + (present[s] ? "present" : "missing") + " shard " + num(s) +
                          " is null" + (present[s] ? "" : " (a shard to rebuild needs a buffer)"));
    ECJIT_RETURN_IF_ERROR(
        check_rebuilt_buffers(what, shards.data, n, present, [&](unsigned s) { return is_target[s] != 0; }));
    ECJIT_RETURN_IF_ERROR(check_len(what, len));
  }
  if (have < k)
    return Status(StatusCode::kTooManyErasures, num(n - have) + " shards missing; " + spec_.to_string() +
                                                    " can rebuild at most " + num(spec_.m));
  if (targets.empty()) return Status::Ok();
  // Other k present shards where those let the encoder's transforms be inverted (about an
  // encode's work, after restoring what it reads that is missing: runtime/fft_engine.h); the
  // engine still takes a matrix or the decode core where they are cheaper.
  if (std::optional<codes::fft::InverseReads> inv =
          codes::fft::inverse_decode_reads(k, spec_.m, present, targets, geometry_.gf, kernels_.inverse_bound()))
    sources = std::move(inv->sources);
  Result<std::shared_ptr<const FftDecodePlan>> p = plan(sources);
  if (!p.ok()) return p.status();
  if (out) *out = *p;
  if (!run_now) return Status::Ok();
  std::vector<const uint8_t *> src(k);
  std::vector<uint8_t *> dst(targets.size());
  for (unsigned i = 0; i < k; ++i) src[i] = shards[sources[i]];
  for (size_t t = 0; t < targets.size(); ++t) dst[t] = shards[targets[t]];
  run(Job{p->get(), targets.data(), targets.size()}, src.data(), k, dst.data(), dst.size(), len);
  return Status::Ok();
}

Status FftCodec::reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct", shards, present, nullptr, false, len, Rebuild::kRun);
}

Status FftCodec::reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present,
                                  size_t len) const {
  return rebuild("reconstruct_data", shards, present, nullptr, true, len, Rebuild::kRun);
}

Status FftCodec::reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                                  const std::vector<bool> &present, size_t len) const {
  return rebuild("reconstruct_some", shards, present, &wanted, false, len, Rebuild::kRun);
}

Status FftCodec::prepare_reconstruct(const std::vector<bool> &present) const {
  return rebuild("prepare_reconstruct", {}, present, nullptr, false, 0, Rebuild::kPrepare);
}

KernelInfo FftCodec::decoder_info(const std::vector<bool> &present) const {
  std::shared_ptr<const FftDecodePlan> p;
  if (!rebuild("decoder_info", {}, present, nullptr, false, 0, Rebuild::kPlan, &p).ok()) return KernelInfo();
  if (!p) return encoder_info();  // nothing missing
  if (!kernels_.decode) return scalar_info("decode");
  KernelInfo i = kernels_.decode_info;
  if (kernels_.decide) {  // reconstruct's targets: every missing shard
    std::vector<unsigned> targets;
    for (unsigned s = 0; s < n(); ++s)
      if (!present[s]) targets.push_back(s);
    kernels_.decide(*p, targets, &i.decision);
    i.why += "; " + fft_decode_why(i.decision);
  }
  return i;
}

KernelCacheStats FftCodec::kernel_cache_stats() const {
  KernelCacheStats s;
  s.hits = plans_.hits();
  s.evictions = plans_.evictions();
  s.cached = plans_.size();
  s.capacity = plans_.capacity();
  s.decode_plans = plans_.compiles();
  s.decode_plans_cached = plans_.size();
  return s;
}

}  // namespace ecjit::runtime
