// JitImpl: creates the LLJIT session for the host target and compiles kernels through the cache.
#include "runtime/jit_impl.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "codes/linear_code.h"
#include "ir_builders/lowering.h"
#include "jit/kernel_compiler.h"
#include "jit/target_spec.h"
#include "jit/tuner.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "runtime/array_codec_impl.h"
#include "runtime/codec_impl.h"
#include "runtime/fft_codec.h"
#include "runtime/xor_codec.h"
#include "runtime/llvm_status.h"

namespace ecjit {

Result<std::shared_ptr<const Codec>> Jit::codec(const std::string &spec_text) {
  Result<CodeSpec> spec = CodeSpec::parse(spec_text);
  if (!spec.ok()) return spec.status();
  return codec(*spec);
}

Result<std::shared_ptr<Jit>> Jit::create(const JitOptions &options) {
  auto impl = runtime::JitImpl::make(options);
  if (!impl.ok()) return impl.status();
  return std::shared_ptr<Jit>(*impl);
}

namespace runtime {

Result<std::shared_ptr<JitImpl>> JitImpl::make(const JitOptions &options) {
  if (options.max_cached_kernels == 0)
    return Status(StatusCode::kInvalidArgument, "max_cached_kernels must be at least 1");
  if (options.opt_level > 3)
    return Status(StatusCode::kInvalidArgument,
                  "opt_level " + std::to_string(options.opt_level) + " is not 0..3");
  if (options.threads > kMaxThreads)
    return Status(StatusCode::kInvalidArgument,
                  "threads " + std::to_string(options.threads) + " is more than " +
                      std::to_string(kMaxThreads) + " (0 = one per hardware thread)");
  std::optional<ir::Strategy> strategy = ir::parse_strategy(options.strategy);
  if (!strategy) {
    std::string known;
    for (const std::string &name : ir::known_strategies()) known += (known.empty() ? "" : ", ") + name;
    return Status(StatusCode::kInvalidArgument,
                  "unknown strategy '" + options.strategy + "'; known: " + known);
  }
  auto spec = jit::TargetSpec::parse(options.target);
  if (!spec) return to_status(spec.takeError(), StatusCode::kUnsupportedTarget, "target '" + options.target + "'");
  if (!spec->is_host())
    return Status(StatusCode::kUnsupportedTarget,
                  "target '" + options.target +
                      "' is not this machine; the JIT runs 'host' (optionally with features "
                      "masked, e.g. host-avx2); use `ecjit asm` for other targets");
  const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  for (const std::string &c : spec->changes) {
    if (c.empty() || c[0] != '+') continue;
    auto it = host.find(c.substr(1));
    if (it == host.end() || !it->second)
      return Status(StatusCode::kUnsupportedTarget,
                    "target '" + options.target + "' adds feature '" + c.substr(1) +
                        "', which this CPU (" + llvm::sys::getHostCPUName().str() + ") lacks");
  }
  auto info = spec->resolve();
  if (!info) return to_status(info.takeError(), StatusCode::kUnsupportedTarget, "target '" + options.target + "'");

  std::shared_ptr<JitImpl> jit(new JitImpl());
  jit->options_ = options;
  jit->options_.target = spec->to_string();
  jit->target_ = *info;
  jit->strategy_ = *strategy;
  static const jit::OptLevel kLevels[] = {jit::OptLevel::kO0, jit::OptLevel::kO1,
                                          jit::OptLevel::kO2, jit::OptLevel::kO3};
  jit->opt_ = kLevels[options.opt_level];
  jit->threads_ = options.threads ? options.threads
                                  : std::max(1u, std::min(kMaxThreads, std::thread::hardware_concurrency()));
  if (jit->threads_ > 1) jit->pool_ = std::make_unique<ThreadPool>(jit->threads_ - 1);
  if (Status st = to_status(jit::init_llvm_targets(), StatusCode::kJitFailure, "LLVM targets"); !st.ok())
    return st;
  auto session = jit::JitSession::create();
  if (!session) return to_status(session.takeError(), StatusCode::kJitFailure, "creating the LLJIT session");
  jit->session_ = std::move(*session);
  // Fields for which the tuner has more than one strategy to choose from on this target.
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    if (jit::candidate_strategies(jit->target_, l).size() > 1) jit->tunable_fields_ |= l;
    jit->resolved_[__builtin_ctz(l) - 3] = jit::resolve_strategy(jit->strategy_, jit->target_, l);
  }
  // ECJIT_DISK_CACHE=0 / off / false / no (any case) turns the disk cache off.
  const char *env = getenv("ECJIT_DISK_CACHE");
  std::string env_word = env ? env : "";
  for (char &ch : env_word) ch = char(tolower(static_cast<unsigned char>(ch)));
  const bool env_off = env_word == "0" || env_word == "off" || env_word == "false" || env_word == "no";
  if (options.disk_cache && !env_off) {
    std::string dir = options.cache_dir.empty() ? jit::DiskCache::default_dir() : options.cache_dir;
    if (!dir.empty()) {
      auto disk = std::make_unique<jit::DiskCache>(dir);
      if (disk->problem().empty()) {
        jit->disk_ = std::move(disk);
      } else {  // refused (see DiskCache): said once per process, the Jit works without it
        static std::once_flag warned;
        std::call_once(warned, [&] {
          fprintf(stderr, "ecjit: disk kernel cache off: %s\n", disk->problem().c_str());
        });
      }
    }
  }
  jit->background_tuning_ = options.tune && options.tune_in_background &&
                            jit->strategy_ == ir::Strategy::kAuto && jit->tunable_fields_;
  jit->tuner_ = std::make_unique<jit::BackgroundTuner>(*jit->session_, jit->disk_.get(), 5.0);
  // Pruning the disk cache scans the directory: on the background thread, not in codec().
  // (The tuner is destroyed before disk_, dropping or finishing such a task first.)
  if (jit->disk_) {
    JitImpl *self = jit.get();
    jit->disk_->set_background([self](std::function<void()> task) {
      return self->submit_background(std::move(task), nullptr, /*optional=*/true);
    });
  }
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    auto field = codes::Field::make(l);
    if (!field.ok()) continue;
    jit->shape_strategy_[__builtin_ctz(l) - 3] =
        ir::pick_shape_strategy(jit->resolved(l), *field, jit->target_);
  }
  return jit;
}

JitStats JitImpl::stats() const {
  JitStats s;
  s.kernels_compiled = cache_.compiles();
  s.kernel_cache_hits = cache_.hits();
  s.kernels_cached = cache_.size();
  s.tunings_pending = tuner_ ? tuner_->pending() : 0;
  std::lock_guard<std::mutex> lock(stats_mutex_);
  s.kernels_compiled += private_compiles_;
  s.compile_seconds = compile_seconds_;
  s.kernels_from_disk = from_disk_;
  s.kernels_tuned = tunings_done_;
  s.tuning_seconds = tuning_seconds_;
  return s;
}

void JitImpl::wait_for_tuning() {
  if (tuner_) tuner_->wait_idle();
}

bool JitImpl::submit_background(std::function<void()> task, std::function<bool()> still_wanted,
                                bool optional) {
  jit::BackgroundTuner::Job job;
  job.task = std::move(task);
  job.still_wanted = std::move(still_wanted);
  job.optional = optional;
  return tuner_->submit(std::move(job));
}

Result<Kernel> JitImpl::shape_kernel(const codes::Field &field, unsigned inputs, unsigned outputs,
                                     std::optional<ir::Strategy> strategy, bool accumulate) {
  if (!strategy) strategy = shape_strategy(field.bits());
  else if (!ir::shape_kernel_supported(*strategy, field, target_)) strategy.reset();
  const std::string shape = "k" + std::to_string(inputs) + "_r" + std::to_string(outputs) +
                            (accumulate ? "_acc" : "");
  if (!strategy)
    return Status(StatusCode::kJitFailure, "no shape kernel for GF(2^" +
                                               std::to_string(field.bits()) + ") on " +
                                               options_.target);
  const std::string field_name = "gf" + std::to_string(field.bits()) + "_p" + std::to_string(field.poly());
  jit::CompileRequest req{
      ir::KernelDesc{field, codes::Matrix(outputs, inputs),
                     ir::kernel_symbol(std::string("shape_") + ir::strategy_name(*strategy) + "_" + shape,
                                       field_name, options_.target)},
      target_, *strategy, opt_};
  req.desc.runtime_coeffs = true;
  if (accumulate) req.desc.output = ir::OutputMode::kAccumulate;
  const std::string key = req.desc.symbol + "|" + ir::strategy_name(*strategy) + "|O" +
                          std::to_string(options_.opt_level) + "|shape";
  auto compiled = cache_.get_or_compile(key, [&] { return counted_compile(req, /*shared=*/true); });
  if (!compiled)
    return to_status(compiled.takeError(), StatusCode::kJitFailure,
                     "compiling the " + shape + " shape kernel of GF(2^" + std::to_string(field.bits()) + ")");
  Kernel k;
  k.code = std::move(*compiled);
  k.shape_fn = reinterpret_cast<ShapeFn>(k.code->address());
  k.vector_lanes = ir::kernel_vector_lanes(field, target_);
  k.info.symbol = req.desc.symbol;
  k.info.strategy = ir::strategy_name(*strategy);
  k.info.why = "shape kernel: coefficients prepared per erasure set, no compile on first use";
  k.info.target = options_.target;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = target_.vector_bits;
  return k;
}

llvm::Expected<std::unique_ptr<jit::CompiledKernel>> JitImpl::counted_compile(const jit::CompileRequest &req,
                                                                              bool shared) {
  const auto t0 = std::chrono::steady_clock::now();
  bool from_disk = false;
  auto k = jit::jit_kernel(*session_, req, nullptr, disk_.get(), &from_disk);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(stats_mutex_);
  compile_seconds_ += seconds;
  from_disk_ += from_disk;
  if (!shared) ++private_compiles_;
  return k;
}

Result<Kernel> JitImpl::xor_kernel(const ir::XorKernelDesc &desc, bool shared) {
  const jit::CompileRequest req = jit::xor_compile_request(desc, target_, opt_);
  auto compile = [&] { return counted_compile(req, shared); };
  llvm::Expected<jit::KernelCache::Kernel> compiled = nullptr;
  if (shared) {
    compiled = cache_.get_or_compile(desc.symbol + "|xor|O" + std::to_string(options_.opt_level), compile);
  } else {
    auto made = compile();
    if (made) compiled = jit::KernelCache::Kernel(std::move(*made));
    else compiled = made.takeError();
  }
  if (!compiled)
    return to_status(compiled.takeError(), StatusCode::kJitFailure, "compiling xor kernel " + desc.symbol);
  Kernel k;
  k.code = std::move(*compiled);
  k.fn = reinterpret_cast<KernelFn>(k.code->address());
  k.info.symbol = desc.symbol;
  k.info.strategy = "xor";
  k.info.target = options_.target;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = ir::xor_kernel_vector_bytes(desc, target_) * 8;
  return k;
}

Result<Kernel> JitImpl::fft_kernel(const ir::FftKernelDesc &desc) {
  if (!ir::fft_kernel_supported(target_))
    return Status(StatusCode::kUnsupported, "rs-fft kernels need a 16-entry byte shuffle (x86 SSSE3 / AVX2, "
                                            "AArch64 NEON); target " + options_.target + " has none");
  const size_t slots = ir::fft_kernel_slots(desc);
  if (slots == 0 || slots > kMaxFftKernelSlots)
    return Status(StatusCode::kUnsupported, "rs-fft k=" + std::to_string(desc.k) + ",m=" + std::to_string(desc.m) +
                                                ": " + std::to_string(slots) + " work slots, more than the " +
                                                std::to_string(kMaxFftKernelSlots) + " an unrolled kernel takes");
  const jit::CompileRequest req = jit::fft_compile_request(desc, target_, opt_);
  auto compiled = cache_.get_or_compile(desc.symbol + "|fft|O" + std::to_string(options_.opt_level),
                                        [&] { return counted_compile(req, /*shared=*/true); });
  if (!compiled)
    return to_status(compiled.takeError(), StatusCode::kJitFailure, "compiling rs-fft kernel " + desc.symbol);
  Kernel k;
  k.code = std::move(*compiled);
  if (desc.kind == ir::FftKernelDesc::Kind::kEncode) k.fn = reinterpret_cast<KernelFn>(k.code->address());
  k.info.symbol = desc.symbol;
  k.info.strategy = "fft";
  k.info.target = options_.target;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = target_.vector_bits >= 256 ? 256 : 128;
  return k;
}

void JitImpl::tune_later(const jit::CompileRequest &req, const std::shared_ptr<KernelSlot> &slot,
                         std::shared_ptr<const jit::CompiledKernel> running, bool optional) {
  jit::BackgroundTuner::Job job;
  job.request = req;
  job.given = std::move(running);
  job.optional = optional;
  job.request->strategy = ir::Strategy::kAuto;
  std::weak_ptr<KernelSlot> weak = slot;
  job.still_wanted = [weak] { return !weak.expired(); };
  job.done = [this, weak](llvm::Expected<jit::TuneResult> result, double seconds) {
    if (!result) {  // the static choice keeps serving; say why in its description
      const std::string error = llvm::toString(result.takeError());
      if (auto s = weak.lock()) s->publish(nullptr, s->strategy(), "static choice (tuning failed: " + error + ")");
      return;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      ++tunings_done_;
      tuning_seconds_ += seconds;
      from_disk_ += result->from_disk;
    }
    if (auto s = weak.lock()) s->publish(std::move(result->kernel), result->strategy, "tuned: " + result->why);
  };
  if (!tuner_->submit(std::move(job)))
    slot->publish(nullptr, slot->strategy(), "static choice for this field and target (tuner backlog full)");
}

Result<Kernel> JitImpl::kernel(const CodeSpec &spec, const std::string &what,
                               const codes::Field &field, const codes::Matrix &coeffs,
                               const KernelMode &mode, const codes::Matrix &pre) {
  jit::CompileRequest req{
      ir::KernelDesc{field, coeffs,
                     ir::kernel_symbol(what, spec.to_string(), options_.target), mode.output,
                     mode.input, mode.streaming},
      target_, mode.strategy != ir::Strategy::kAuto ? mode.strategy : resolved(field.bits()), opt_};
  req.desc.pre = pre;
  // Plain encode/decode kernels under "auto" are tuned: every candidate strategy is timed
  // and the fastest kept (jit/tuner.h); other kernels take the static choice. In the
  // background (tiered) mode the static choice is compiled now and serves calls until the
  // tuner swaps its winner into the kernel's slot.
  // Private kernels (decoders per erasure set, owned by a codec's LRU) are tuned only in
  // the background: in a storm of distinct erasure sets a first reconstruct must not wait
  // for every candidate.
  const bool background = background_tuning_;
  const bool tune = strategy_ == ir::Strategy::kAuto && mode.strategy == ir::Strategy::kAuto &&
                    !mode.streaming && options_.tune && mode.output == ir::OutputMode::kOverwrite &&
                    mode.input == ir::InputMode::kPlain && tunable(field.bits()) &&
                    (mode.shared || background);
  // The cache key names everything the machine code depends on.
  const std::string key = req.desc.symbol + "|" + spec.to_string() + "|" + what + "|" +
                          options_.target + "|" +
                          (tune ? std::string("tuned") : ir::strategy_name(req.strategy)) + "|O" +
                          std::to_string(options_.opt_level) + "|mode" +
                          std::to_string(int(mode.output)) + std::to_string(int(mode.input));
  bool queue_tuning = false;  // set by the one call that compiled the static stand-in
  auto compile = [&]() -> llvm::Expected<std::unique_ptr<jit::CompiledKernel>> {
    double seconds = 0;
    bool from_disk = false;
    llvm::Expected<std::unique_ptr<jit::CompiledKernel>> k = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<jit::CompileRequest> auto_req;  // the request the tuner sees
    std::optional<jit::TuneResult> recorded;
    if (tune) {
      auto_req = req;
      auto_req->strategy = ir::Strategy::kAuto;
      recorded = jit::recorded_kernel(*session_, *auto_req, disk_.get());
    }
    if (recorded) {
      from_disk = recorded->from_disk;
      k = std::move(recorded->kernel);
    } else if (tune && !background) {
      auto tuned = jit::tune_kernel(*session_, *auto_req, disk_.get());
      if (!tuned) {
        k = tuned.takeError();
      } else {
        from_disk = tuned->from_disk;
        k = std::move(tuned->kernel);
      }
    } else {
      k = jit::jit_kernel(*session_, req, nullptr, disk_.get(), &from_disk);
      queue_tuning = background && bool(k);
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(stats_mutex_);
    compile_seconds_ += seconds;
    from_disk_ += from_disk;
    if (!mode.shared) ++private_compiles_;
    return k;
  };
  jit::KernelCache::Kernel code;
  auto failed = [&](llvm::Error err) {
    return to_status(std::move(err), StatusCode::kJitFailure,
                     "compiling " + what + " kernel for " + spec.to_string());
  };
  if (mode.shared) {
    auto compiled = cache_.get_or_compile(key, compile);
    if (!compiled) return failed(compiled.takeError());
    code = std::move(*compiled);
  } else {
    auto compiled = compile();
    if (!compiled) return failed(compiled.takeError());
    code = std::move(*compiled);
  }
  Kernel k;
  k.code = std::move(code);
  if (mode.output == ir::OutputMode::kVerify)
    k.verify_fn = reinterpret_cast<VerifyFn>(k.code->address());
  else
    k.fn = reinterpret_cast<KernelFn>(k.code->address());
  k.vector_lanes = ir::kernel_vector_lanes(field, target_);
  k.info.symbol = req.desc.symbol;
  k.info.strategy = ir::strategy_name(k.code->strategy());
  k.info.unroll = k.code->unroll();
  if (!k.code->why().empty()) k.info.why = "tuned: " + k.code->why();
  else if (queue_tuning) k.info.why = "static choice for this field and target; tuning in the background";
  else if (options_.strategy == "auto") k.info.why = "static choice for this field and target";
  else k.info.why = "strategy forced by the caller";
  k.info.target = options_.target;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = target_.vector_bits;
  if (tune) {
    if (mode.shared) {  // one slot per cache key, shared by every user of the kernel
      std::lock_guard<std::mutex> lock(slots_mutex_);
      std::shared_ptr<KernelSlot> &slot = slots_[key];
      if (!slot) slot = std::make_shared<KernelSlot>(k.code, k.info);
      k.slot = slot;
    } else {
      k.slot = std::make_shared<KernelSlot>(k.code, k.info);
    }
    if (queue_tuning) tune_later(req, k.slot, k.code, /*optional=*/!mode.shared);
  }
  return k;
}

Result<std::shared_ptr<const ArrayCodec>> JitImpl::array_codec(const std::string &spec_text) {
  auto c = ArrayCodecImpl::make(shared_from_this(), spec_text);
  if (!c.ok()) return c.status();
  return std::shared_ptr<const ArrayCodec>(*c);
}

Result<std::shared_ptr<const Codec>> JitImpl::codec(const CodeSpec &spec) {
  const std::string key = spec.to_string();
  {
    std::lock_guard<std::mutex> lock(codecs_mutex_);
    auto it = codecs_.find(key);
    if (it != codecs_.end())
      if (std::shared_ptr<const Codec> live = it->second.lock()) return live;
  }
  std::shared_ptr<const Codec> out;
  if (spec.family == CodeFamily::kRsFft) {  // not a matrix code: FftCodec (runtime/fft_codec.h)
    auto codec = FftCodec::make(shared_from_this(), spec);
    if (!codec.ok()) return codec.status();
    out = *codec;
  } else if (spec.bitmatrix()) {
    auto code = codes::build_bitmatrix_code(spec);
    if (!code.ok()) return code.status();
    auto codec = XorCodec::make(shared_from_this(), std::move(*code));
    if (!codec.ok()) return codec.status();
    out = *codec;
  } else {
    auto code = codes::build_code(spec);
    if (!code.ok()) return code.status();
    auto codec = CodecImpl::make(shared_from_this(), std::move(*code));
    if (!codec.ok()) return codec.status();
    out = *codec;
  }
  std::lock_guard<std::mutex> lock(codecs_mutex_);
  if (codecs_.size() >= 64) {  // forget codecs nobody holds any more
    for (auto it = codecs_.begin(); it != codecs_.end();)
      it = it->second.expired() ? codecs_.erase(it) : std::next(it);
  }
  codecs_[key] = out;
  return out;
}

}  // namespace runtime
}  // namespace ecjit
