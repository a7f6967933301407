// KernelService: the LLJIT session, disk cache, shared kernels, tuning and statistics behind a Jit.
#include "jit/kernel_service.h"

#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "ir_builders/fft_step_kernel.h"
#include "ir_builders/lowering.h"
#include "jit/background_worker.h"
#include "jit/disk_cache.h"
#include "jit/xor_packet_tuner.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/llvm_status.h"
#include "jit/once_cache.h"
#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "jit/tuner.h"
#include "jit/xor_tuner.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace ecjit::jit {

// A bit-matrix kernel under the schedule the XOR tuner kept, and why: the code may be the
// incumbent's, shared with its untuned entry in State::cache.
struct TunedXorKernel {
  std::shared_ptr<const CompiledKernel> code;
  std::string why;
  KernelDecision decision;
};

struct KernelService::State {
  OptLevel opt = OptLevel::kO3;
  std::shared_ptr<JitSession> session;
  std::unique_ptr<DiskCache> disk;  // null when the disk cache is off
  // Shared kernels by key, for the service's lifetime.
  OnceCache<std::string, CompiledKernel> cache;
  // Tuned XOR kernels by the memory key of their plan's kernel.
  OnceCache<std::string, TunedXorKernel> tuned_xor;
  // packet=auto choices by spec.
  OnceCache<std::string, XorPacketChoice> xor_packets;
  mutable std::mutex stats_mutex;
  double compile_seconds = 0;
  uint64_t from_disk = 0;
  uint64_t private_compiles = 0;  // KernelMode::shared == false
  uint64_t tunings_done = 0;
  double tuning_seconds = 0;
  // Slots of the shared tuned kernels by cache key (every Kernel copy of one shares it).
  std::mutex slots_mutex;
  std::unordered_map<std::string, std::shared_ptr<KernelSlot>> slots;
  // The background thread: tunings, the compiles of promoted decoders, disk pruning (its
  // thread starts with the first job). Declared last so that it is destroyed first: its
  // worker uses the session, the disk cache and the stats above.
  std::unique_ptr<BackgroundWorker> worker;

  // Counts `seconds` of compiling (and a disk hit, and a private compile) in the stats.
  void count(double seconds, bool hit_disk, bool shared) {
    std::lock_guard<std::mutex> lock(stats_mutex);
    compile_seconds += seconds;
    from_disk += hit_disk;
    if (!shared) ++private_compiles;
  }
  // jit_kernel of req on this service's LLJIT session and disk cache, counted.
  Result<std::shared_ptr<const CompiledKernel>> compile(const CompileRequest &req, bool shared) {
    const auto t0 = std::chrono::steady_clock::now();
    bool hit_disk = false;
    auto k = jit_kernel(*session, req, nullptr, disk.get(), &hit_disk);
    count(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), hit_disk, shared);
    if (!k) return to_status(k.takeError(), StatusCode::kJitFailure, req.desc.symbol);
    return std::shared_ptr<const CompiledKernel>(std::move(*k));
  }
  // Queues the tuning of req, compiled with the static choice (`running`, serving now):
  // `slot` gets the winner, or a note of why the static choice stays.
  void tune_later(const CompileRequest &req, const std::shared_ptr<KernelSlot> &slot,
                  std::shared_ptr<const CompiledKernel> running, bool optional) {
    BackgroundWorker::Job job;
    job.request = req;
    job.given = std::move(running);
    job.optional = optional;
    job.request->strategy = ir::Strategy::kAuto;
    std::weak_ptr<KernelSlot> weak = slot;
    job.still_wanted = [weak] { return !weak.expired(); };
    job.done = [this, weak](llvm::Expected<TuneResult> result, double seconds) {
      if (!result) {  // the static choice keeps serving; say why in its description
        const std::string error = llvm::toString(result.takeError());
        if (auto s = weak.lock())
          s->publish(nullptr, static_choice(s->strategy(), "static choice (tuning failed: " + error + ")"));
        return;
      }
      {
        std::lock_guard<std::mutex> lock(stats_mutex);
        ++tunings_done;
        tuning_seconds += seconds;
        from_disk += result->from_disk;
      }
      if (auto s = weak.lock()) {
        result->choice.why = "tuned: " + result->choice.why;
        s->publish(std::move(result->kernel), std::move(result->choice));
      }
    };
    KernelService::register_exit_handler();
    if (!worker->submit(std::move(job)))
      slot->publish(nullptr,
                    static_choice(slot->strategy(), "static choice for this field and target (tuner backlog full)"));
  }
  // Through the cache under `key` when shared, else compiled for the caller alone.
  template <typename Make>
  Result<std::shared_ptr<const CompiledKernel>> get(const std::string &key, bool shared, Make &&make) {
    return shared ? cache.get(key, make) : make();
  }
};

namespace {

// ECJIT_DISK_CACHE=0 / off / false / no (any case) turns the disk cache off.
bool disk_cache_env_off() {
  const char *env = getenv("ECJIT_DISK_CACHE");
  std::string word = env ? env : "";
  for (char &ch : word) ch = char(tolower(static_cast<unsigned char>(ch)));
  return word == "0" || word == "off" || word == "false" || word == "no";
}

// The services alive now, for the exit handler (KernelService::guard_exit). Leaked on
// purpose: used from that handler, after static destructors may have run.
struct LiveServices {
  std::mutex mutex;
  std::unordered_set<KernelService *> live;
};
LiveServices &live_services() {
  static LiveServices *l = new LiveServices();
  return *l;
}

}  // namespace

Result<std::unique_ptr<KernelService>> KernelService::make(const ServiceOptions &options) {
  if (options.opt_level > 3)
    return Status(StatusCode::kInvalidArgument,
                  "opt_level " + std::to_string(options.opt_level) + " is not 0..3");
  std::optional<ir::Strategy> strategy = ir::parse_strategy(options.strategy);
  if (!strategy) {
    std::string known;
    for (const std::string &name : ir::known_strategies()) known += (known.empty() ? "" : ", ") + name;
    return Status(StatusCode::kInvalidArgument,
                  "unknown strategy '" + options.strategy + "'; known: " + known);
  }
  auto spec = TargetSpec::parse(options.target);
  if (!spec) return to_status(spec.takeError(), StatusCode::kUnsupportedTarget, "target '" + options.target + "'");
  if (!spec->is_host())
    return Status(StatusCode::kUnsupportedTarget,
                  "target '" + options.target +
                      "' is not this machine; the JIT runs 'host' (optionally with features "
                      "masked, e.g. host-avx2); use `ecjit asm` for other targets");
  if (!jit::host_mask().error.empty()) return Status(StatusCode::kUnsupportedTarget, jit::host_mask().error);
  const llvm::StringMap<bool> host = jit::host_features();
  for (const std::string &c : spec->changes) {
    if (c.empty() || c[0] != '+') continue;
    auto it = host.find(c.substr(1));
    if (it == host.end() || !it->second)
      return Status(StatusCode::kUnsupportedTarget,
                    "target '" + options.target + "' adds feature '" + c.substr(1) +
                        "', which this CPU (" + llvm::sys::getHostCPUName().str() + ") lacks" +
                        (jit::host_mask().changes.empty() ? "" : " (or ECJIT_HOST_MASK hides)"));
  }
  auto info = spec->resolve();
  if (!info) return to_status(info.takeError(), StatusCode::kUnsupportedTarget, "target '" + options.target + "'");

  std::unique_ptr<KernelService> s(new KernelService());
  s->state_ = std::make_unique<State>();
  State &st = *s->state_;
  s->target_ = *info;
  s->target_name_ = spec->to_string();
  s->strategy_ = *strategy;
  s->strategy_auto_ = options.strategy == "auto";
  s->tune_ = options.tune;
  s->tune_after_bytes_ = options.tune_after_bytes;
  s->opt_name_ = "O" + std::to_string(options.opt_level);
  static const OptLevel kLevels[] = {OptLevel::kO0, OptLevel::kO1, OptLevel::kO2, OptLevel::kO3};
  st.opt = kLevels[options.opt_level];
  if (Status e = to_status(init_llvm_targets(), StatusCode::kJitFailure, "LLVM targets"); !e.ok()) return e;
  auto session = JitSession::create();
  if (!session) return to_status(session.takeError(), StatusCode::kJitFailure, "creating the LLJIT session");
  st.session = std::move(*session);
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    if (candidate_strategies(s->target_, l).size() > 1) s->tunable_fields_ |= l;
    s->resolved_[__builtin_ctz(l) - 3] = resolve_strategy(s->strategy_, s->target_, l);
  }
  if (options.disk_cache && !disk_cache_env_off()) {
    std::string dir = options.cache_dir.empty() ? DiskCache::default_dir() : options.cache_dir;
    if (!dir.empty()) {
      auto disk = std::make_unique<DiskCache>(dir);
      if (disk->problem().empty()) {
        st.disk = std::move(disk);
      } else {  // refused (see DiskCache): said once per process, the service works without it
        static std::once_flag warned;
        std::call_once(warned, [&] {
          fprintf(stderr, "ecjit: disk kernel cache off: %s\n", disk->problem().c_str());
        });
      }
    }
  }
  s->background_tuning_ = options.tune && options.tune_in_background &&
                          s->strategy_ == ir::Strategy::kAuto && s->tunable_fields_;
  st.worker = std::make_unique<BackgroundWorker>(*st.session, st.disk.get(), 5.0);
  // Pruning the disk cache scans the directory: on the background thread, not in make().
  // (The worker is destroyed before the disk cache, dropping or finishing such a task first.)
  if (st.disk) {
    KernelService *self = s.get();
    st.disk->set_background([self](std::function<void()> task) {
      return self->submit_background(std::move(task), nullptr, /*optional=*/true);
    });
  }
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    auto field = codes::Field::make(l);
    if (!field.ok()) continue;
    // A forced strategy is the shape kernels' too (its run-time form, or none: decoders are
    // then compiled per erasure set in it); "auto" takes the best the target has.
    s->shape_strategy_[__builtin_ctz(l) - 3] =
        ir::pick_shape_strategy(s->strategy_, s->resolved(l), *field, s->target_);
  }
  s->guard_exit();
  return s;
}

void KernelService::guard_exit() {
  // A service still alive when the process exits (a Jit in a static, or a codec whose own
  // kernels are still being compiled behind the ahead-of-time ones when main returns) must
  // not be compiling while exit() destroys LLVM's lazily made statics: its background
  // thread is stopped first, by a handler that waits for the job in flight. exit() runs a
  // handler before the destructors of every static constructed before it was registered,
  // so one compile here first constructs the code generator's statics (a 1 x 1 kernel,
  // never on disk: a few ms, once per process); the handler is registered when a background
  // thread first gets work (register_exit_handler), as late as it can be, so that it also
  // runs before the statics the callers made in between (codes' tables, the disk cache's
  // identity). Statics first made on the background thread itself are never destroyed.
  static std::once_flag once;
  std::call_once(once, [this] {
    auto field = codes::Field::make(8);
    if (field.ok()) {
      codes::Matrix one(1, 1);
      one.at(0, 0) = 1;
      CompileRequest req{ir::KernelDesc{*field, one, "ecjit_exit_guard_warm_up", ir::OutputMode::kOverwrite,
                                        ir::InputMode::kPlain, false},
                         target_, resolved(8), state_->opt};
      bool hit_disk = false;
      (void)jit_kernel(*state_->session, req, nullptr, /*disk=*/nullptr, &hit_disk);
    }
  });
  LiveServices &l = live_services();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.live.insert(this);
}

KernelService::~KernelService() {
  LiveServices &l = live_services();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.live.erase(this);
}

JitStats KernelService::stats() const {
  JitStats s;
  const State &st = *state_;
  s.kernels_compiled = st.cache.compiles();
  s.kernel_cache_hits = st.cache.hits();
  s.kernels_cached = st.cache.size();
  s.tunings_pending = st.worker->pending();
  std::lock_guard<std::mutex> lock(st.stats_mutex);
  s.kernels_compiled += st.private_compiles;
  s.compile_seconds = st.compile_seconds;
  s.kernels_from_disk = st.from_disk;
  s.kernels_tuned = st.tunings_done;
  s.tuning_seconds = st.tuning_seconds;
  return s;
}

void KernelService::wait_for_tuning() {
  State &st = *state_;
  // Deferred tunings start now: the caller wants tuned kernels before it measures. Kernels
  // compiled on the background thread (a codec's own, while ahead-of-time kernels serve)
  // make their slots there, so this repeats until a pass finds nothing left to start.
  for (;;) {
    st.worker->wait_idle();
    std::vector<std::shared_ptr<KernelSlot>> slots;
    {
      std::lock_guard<std::mutex> lock(st.slots_mutex);
      for (const auto &entry : st.slots) slots.push_back(entry.second);
    }
    bool started = false;
    for (const std::shared_ptr<KernelSlot> &slot : slots) started |= slot->start_deferred();
    if (!started) return;
  }
}

void KernelService::stop_background() { state_->worker->stop(); }

void KernelService::register_exit_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      LiveServices &l = live_services();
      std::lock_guard<std::mutex> lock(l.mutex);
      for (KernelService *s : l.live) s->stop_background();
    });
  });
}

bool KernelService::submit_background(std::function<void()> task, std::function<bool()> still_wanted,
                                      bool optional) {
  register_exit_handler();
  BackgroundWorker::Job job;
  job.task = std::move(task);
  job.still_wanted = std::move(still_wanted);
  job.optional = optional;
  return state_->worker->submit(std::move(job));
}

Kernel KernelService::describe(std::shared_ptr<const CompiledKernel> code, const std::string &symbol,
                               const std::string &strategy) const {
  Kernel k;
  k.address = code->address();
  k.built = code->strategy();
  k.code = std::move(code);
  k.info.symbol = symbol;
  k.info.strategy = strategy;
  k.info.target = target_name_;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = target_.vector_bits;
  k.info.decision.tier = KernelTier::kCompiled;
  return k;
}

Result<Kernel> KernelService::shape_kernel(const codes::Field &field, unsigned inputs, unsigned outputs,
                                           std::optional<ir::Strategy> strategy, bool accumulate) {
  if (!strategy) strategy = shape_strategy(field.bits());
  else if (!ir::shape_kernel_supported(*strategy, field, target_)) strategy.reset();
  const std::string shape = "k" + std::to_string(inputs) + "_r" + std::to_string(outputs) +
                            (accumulate ? "_acc" : "");
  if (!strategy)
    return Status(StatusCode::kJitFailure, "no shape kernel for GF(2^" + std::to_string(field.bits()) +
                                               ") on " + target_name_);
  const std::string field_name = "gf" + std::to_string(field.bits()) + "_p" + std::to_string(field.poly());
  const CompileRequest req = shape_compile_request(
      field, inputs, outputs, accumulate, *strategy, target_, state_->opt,
      ir::kernel_symbol(std::string("shape_") + ir::strategy_name(*strategy) + "_" + shape, field_name,
                        target_name_));
  const std::string key = req.desc.symbol + "|" + ir::strategy_name(*strategy) + "|" + opt_name_ + "|shape";
  auto code = state_->cache.get(key, [&] { return state_->compile(req, /*shared=*/true); });
  if (!code.ok())
    return code.status().with_context("compiling the " + shape + " shape kernel of GF(2^" +
                                      std::to_string(field.bits()) + ")");
  Kernel k = describe(std::move(*code), req.desc.symbol, ir::strategy_name(*strategy));
  k.shape_fn = reinterpret_cast<ShapeFn>(k.address);
  k.vector_lanes = ir::kernel_vector_lanes(field, target_);
  k.info.why = "shape kernel: coefficients prepared per erasure set, no compile on first use";
  k.info.decision.tier = KernelTier::kShape;
  return k;
}

Result<Kernel> KernelService::xor_kernel(const ir::XorKernelDesc &desc, bool shared) {
  const CompileRequest req = xor_compile_request(desc, target_, state_->opt);
  auto code = state_->get(xor_memory_key(desc), shared,
                          [&] { return state_->compile(req, shared); });
  if (!code.ok()) return code.status().with_context("compiling xor kernel " + desc.symbol);
  Kernel k = describe(std::move(*code), desc.symbol, "xor");
  k.fn = reinterpret_cast<KernelFn>(k.address);
  k.info.vector_bits = ir::xor_kernel_vector_bytes(desc, target_) * 8;
  k.info.decision.xors = desc.program.xors();
  return k;
}

bool KernelService::xor_kernel_ready(const ir::XorKernelDesc &desc) const {
  return state_->cache.ready(xor_memory_key(desc)) || xor_object_on_disk(desc);
}

bool KernelService::xor_object_on_disk(const ir::XorKernelDesc &desc) const {
  const State &st = *state_;
  if (!st.disk) return false;
  struct stat info;
  return ::stat(st.disk->path_for(kernel_cache_key(xor_compile_request(desc, target_, st.opt))).c_str(), &info) == 0;
}

Result<Kernel> KernelService::tuned_xor_kernel(const XorPlan &plan) {
  if (!tune_) return xor_kernel(plan.desc, /*shared=*/true);
  State &st = *state_;
  const std::string key = xor_memory_key(plan.desc);
  auto tuned = st.tuned_xor.get(key, [&]() -> Result<std::shared_ptr<const TunedXorKernel>> {
    // The incumbent, when it is serving calls already, is timed as it is: not compiled again.
    const std::shared_ptr<const CompiledKernel> incumbent = st.cache.peek(key);
    TuneOptions options;
    options.given_address = incumbent ? incumbent->address() : nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    auto result = tune_xor_kernel(*st.session, plan, target_, st.opt, st.disk.get(), options);
    st.count(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             result && result->from_disk, /*shared=*/true);
    if (!result) return to_status(result.takeError(), StatusCode::kJitFailure, plan.desc.symbol);
    auto out = std::make_shared<TunedXorKernel>();
    out->code = result->kernel ? std::shared_ptr<const CompiledKernel>(std::move(result->kernel)) : incumbent;
    out->why = std::to_string(result->plan.desc.program.xors()) + " XORs, schedule " + result->why;
    out->decision.tier = KernelTier::kCompiled;
    out->decision.source = result->source;
    out->decision.candidates = std::move(result->candidates);
    out->decision.xors = result->plan.desc.program.xors();
    return std::shared_ptr<const TunedXorKernel>(std::move(out));
  });
  if (!tuned.ok()) return tuned.status().with_context("compiling xor kernel " + plan.desc.symbol);
  Kernel k = describe((*tuned)->code, plan.desc.symbol, "xor");
  k.fn = reinterpret_cast<KernelFn>(k.address);
  k.info.vector_bits = ir::xor_kernel_vector_bytes(plan.desc, target_) * 8;
  k.info.why = (*tuned)->why;
  k.info.decision = (*tuned)->decision;
  return k;
}

Result<XorPacketChoice> KernelService::xor_packet(const CodeSpec &spec) {
  State &st = *state_;
  auto choice = st.xor_packets.get(spec.to_string(), [&]() -> Result<std::shared_ptr<const XorPacketChoice>> {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = tune_xor_packet(*st.session, spec, target_, target_name_, st.opt, st.disk.get());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!result) return to_status(result.takeError(), StatusCode::kJitFailure, spec.to_string());
    if (result->source == DecisionSource::kTuned) {
      std::lock_guard<std::mutex> lock(st.stats_mutex);
      ++st.tunings_done;
      st.tuning_seconds += seconds;
    }
    return std::make_shared<const XorPacketChoice>(std::move(*result));
  });
  if (!choice.ok()) return choice.status().with_context("choosing the packet of " + spec.to_string());
  return **choice;
}

bool KernelService::tuned_xor_kernel_ready(const XorPlan &plan) const {
  if (!tune_) return xor_kernel_ready(plan.desc);
  const State &st = *state_;
  if (st.tuned_xor.ready(xor_memory_key(plan.desc))) return true;
  if (!st.disk) return false;
  // The memory key names the symbol, not the program: only the recorded program's object counts.
  const std::optional<XorPlan> chosen = recorded_xor_plan(plan, target_, st.opt, st.disk.get());
  return chosen && xor_object_on_disk(chosen->desc);
}

Status KernelService::check_strategy(const codes::Field &field) const {
  if (strategy_ == ir::Strategy::kAuto) return Status::Ok();
  auto lowering = ir::make_lowering(strategy_, field, target_);
  if (lowering) return Status::Ok();
  return Status(StatusCode::kUnsupportedTarget,
                "strategy '" + std::string(ir::strategy_name(strategy_)) + "' cannot run GF(2^" +
                    std::to_string(field.bits()) + ") on target '" + target_name_ + "': " +
                    llvm::toString(lowering.takeError()) + " (strategy 'auto' picks what the target has)");
}

Result<Kernel> KernelService::fft_kernel(const ir::FftKernelDesc &desc) {
  if (!ir::fft_kernel_supported(target_))
    return Status(StatusCode::kUnsupported, "rs-fft kernels need GFNI with AVX2 or a 16-entry byte shuffle (x86 "
                                            "SSSE3 / AVX2, AArch64 NEON); target " + target_name_ + " has neither");
  const size_t slots = ir::fft_kernel_slots(desc);
  if (slots == 0 || slots > kMaxFftKernelSlots)
    return Status(StatusCode::kUnsupported, "rs-fft k=" + std::to_string(desc.k) + ",m=" + std::to_string(desc.m) +
                                                ": " + std::to_string(slots) + " work slots, more than the " +
                                                std::to_string(kMaxFftKernelSlots) + " an unrolled kernel takes");
  const CompileRequest req = fft_compile_request(desc, target_, state_->opt);
  auto code = state_->cache.get(desc.symbol + "|fft|" + opt_name_,
                                [&] { return state_->compile(req, /*shared=*/true); });
  if (!code.ok()) return code.status().with_context("compiling rs-fft kernel " + desc.symbol);
  Kernel k = describe(std::move(*code), desc.symbol, "fft");
  k.info.why = std::string("multiplies by ") + ir::fft_multiply_name(target_);
  k.info.decision.tier = desc.steps() ? KernelTier::kStepKernel : KernelTier::kCompiled;
  if (desc.kind == ir::FftKernelDesc::Kind::kEncode || desc.kind == ir::FftKernelDesc::Kind::kInverse)
    k.fn = reinterpret_cast<KernelFn>(k.address);
  // Whole 64-byte columns in one register where three-layer steps run (AVX-512), else planes.
  k.info.vector_bits = ir::fft_radix8_steps(target_) ? 512 : target_.vector_bits >= 256 ? 256 : 128;
  return k;
}

Result<Kernel> KernelService::kernel(const std::string &code, const std::string &what,
                                     const codes::Field &field, const codes::Matrix &coeffs,
                                     const KernelMode &mode, const codes::Matrix &pre) {
  State &st = *state_;
  CompileRequest req{ir::KernelDesc{field, coeffs, ir::kernel_symbol(what, code, target_name_), mode.output,
                                    mode.input, mode.streaming},
                     target_, mode.strategy != ir::Strategy::kAuto ? mode.strategy : resolved(field.bits()),
                     st.opt};
  req.desc.pre = pre;
  req.desc.whole_vectors = mode.whole_vectors;
  // Kernels per erasure set (or per caller's matrix) pay their compile per set.
  if (!mode.shared) req.codegen = Codegen::kNoSchedulers;
  // Plain encode/decode kernels under "auto" are tuned: every candidate strategy is timed
  // and the fastest kept (jit/tuner.h); other kernels take the static choice. In the
  // background (tiered) mode the static choice is compiled now and serves calls until the
  // tuner swaps its winner into the kernel's slot.
  // Private kernels (decoders per erasure set, owned by a codec's LRU) are tuned only in
  // the background: in a storm of distinct erasure sets a first reconstruct must not wait
  // for every candidate.
  const bool background = background_tuning_;
  const bool tune = strategy_ == ir::Strategy::kAuto && mode.strategy == ir::Strategy::kAuto &&
                    !mode.streaming && tune_ && mode.output == ir::OutputMode::kOverwrite &&
                    mode.input == ir::InputMode::kPlain && (tunable_fields_ & field.bits()) != 0 &&
                    (mode.shared || background);
  // The cache key names everything the machine code depends on.
  const std::string key = req.desc.symbol + "|" + code + "|" + what + "|" + target_name_ + "|" +
                          (tune ? std::string("tuned") : ir::strategy_name(req.strategy)) + "|" +
                          opt_name_ + "|mode" + std::to_string(int(mode.output)) +
                          std::to_string(int(mode.input)) + (mode.whole_vectors ? "|wv" : "");
  bool queue_tuning = false;  // set by the one call that compiled the static stand-in
  auto compile = [&]() -> Result<std::shared_ptr<const CompiledKernel>> {
    if (tune) {
      const auto t0 = std::chrono::steady_clock::now();
      CompileRequest auto_req = req;  // the request the tuner sees
      auto_req.strategy = ir::Strategy::kAuto;
      llvm::Expected<std::unique_ptr<CompiledKernel>> k = nullptr;
      bool hit_disk = false;
      // A winner recorded on disk by an earlier run serves at once, tuning nothing.
      if (std::optional<TuneResult> recorded = recorded_kernel(*st.session, auto_req, st.disk.get())) {
        hit_disk = recorded->from_disk;
        k = std::move(recorded->kernel);
      } else if (!background) {
        auto tuned = tune_kernel(*st.session, auto_req, st.disk.get());
        if (!tuned) {
          k = tuned.takeError();
        } else {
          hit_disk = tuned->from_disk;
          k = std::move(tuned->kernel);
        }
      }
      if (!k || *k) {
        st.count(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), hit_disk,
                 mode.shared);
        if (!k) return to_status(k.takeError(), StatusCode::kJitFailure, req.desc.symbol);
        return std::shared_ptr<const CompiledKernel>(std::move(*k));
      }
    }
    // The static choice (in the background mode: serving until the tuner's winner).
    auto k = st.compile(req, mode.shared);
    queue_tuning = tune && k.ok();
    return k;
  };
  auto compiled = st.get(key, mode.shared, compile);
  if (!compiled.ok()) return compiled.status().with_context("compiling " + what + " kernel for " + code);
  // A shared kernel (an encoder, compiled by codec() before any call) is tuned once calls
  // have passed it tune_after_bytes of input; a private one (a promoted decoder) is hot already.
  const bool defer_tuning = queue_tuning && mode.shared && tune_after_bytes_ > 0;
  Kernel k = describe(std::move(*compiled), req.desc.symbol, "");
  k.info.strategy = ir::strategy_name(k.built);
  if (mode.output == ir::OutputMode::kVerify)
    k.verify_fn = reinterpret_cast<VerifyFn>(k.address);
  else
    k.fn = reinterpret_cast<KernelFn>(k.address);
  k.vector_lanes = ir::kernel_vector_lanes(field, target_);
  k.min_len = ir::kernel_min_len(req.desc, target_);
  k.info.unroll = k.code->unroll();
  KernelDecision &d = k.info.decision;
  d.tier = KernelTier::kCompiled;
  d.source = strategy_auto_ ? DecisionSource::kStatic : DecisionSource::kForced;
  if (const KernelChoice &c = k.code->choice(); !c.why.empty()) {
    k.info.why = "tuned: " + c.why;
    d.source = c.source;
    d.candidates = c.measured;
  } else if (defer_tuning) {
    k.info.why = "static choice for this field and target; tuning in the background after " +
                 std::to_string(tune_after_bytes_ >> 20) + " MiB of work";
    d.tuning = true;
    d.tune_after_bytes = tune_after_bytes_;
  } else if (queue_tuning) {
    k.info.why = "static choice for this field and target; tuning in the background";
    d.tuning = true;
  } else if (strategy_auto_) {
    k.info.why = "static choice for this field and target";
  } else {
    k.info.why = "strategy forced by the caller";
  }
  if (tune) {
    if (mode.shared) {  // one slot per cache key, shared by every user of the kernel
      std::lock_guard<std::mutex> lock(st.slots_mutex);
      std::shared_ptr<KernelSlot> &slot = st.slots[key];
      if (!slot) slot = std::make_shared<KernelSlot>(k.code, k.info);
      k.slot = slot;
    } else {
      k.slot = std::make_shared<KernelSlot>(k.code, k.info);
    }
    if (defer_tuning) {
      std::weak_ptr<KernelSlot> weak = k.slot;
      State *state = &st;  // outlives the slot's deferred start (State owns st.slots)
      k.slot->defer(tune_after_bytes_, [state, req, weak, code = k.code] {
        auto slot = weak.lock();
        if (!slot) return;
        slot->publish(nullptr,
                      static_choice(slot->strategy(), "static choice for this field and target; tuning in the background"),
                      /*tuning=*/true);
        state->tune_later(req, slot, code, /*optional=*/false);
      });
    } else if (queue_tuning) {
      st.tune_later(req, k.slot, k.code, /*optional=*/!mode.shared);
    }
  }
  return k;
}

}  // namespace ecjit::jit
