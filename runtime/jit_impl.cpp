// JitImpl: creates the LLJIT session for the host target and compiles kernels through the cache.
#include "runtime/jit_impl.h"

#include <cstdio>

#include "codes/linear_code.h"
#include "jit/kernel_compiler.h"
#include "jit/target_spec.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "runtime/codec_impl.h"
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
  if (options.opt_level > 3)
    return Status(StatusCode::kInvalidArgument,
                  "opt_level " + std::to_string(options.opt_level) + " is not 0..3");
  std::optional<ir::Strategy> strategy = ir::parse_strategy(options.strategy);
  if (!strategy)
    return Status(StatusCode::kInvalidArgument,
                  "unknown strategy '" + options.strategy + "'; known: auto, clmul-shift");
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
  if (Status st = to_status(jit::init_llvm_targets(), StatusCode::kJitFailure, "LLVM targets"); !st.ok())
    return st;
  auto session = jit::JitSession::create();
  if (!session) return to_status(session.takeError(), StatusCode::kJitFailure, "creating the LLJIT session");
  jit->session_ = std::move(*session);
  return jit;
}

JitStats JitImpl::stats() const {
  JitStats s;
  s.kernels_compiled = cache_.compiles();
  s.kernel_cache_hits = cache_.hits();
  s.kernels_cached = cache_.size();
  std::lock_guard<std::mutex> lock(stats_mutex_);
  s.compile_seconds = compile_seconds_;
  return s;
}

Result<Kernel> JitImpl::kernel(const CodeSpec &spec, const std::string &what,
                               const codes::Field &field, const codes::Matrix &coeffs) {
  jit::CompileRequest req{
      ir::KernelDesc{field, coeffs,
                     ir::kernel_symbol(what, spec.to_string(), options_.target)},
      target_, jit::resolve_strategy(strategy_, target_, field.bits()), opt_};
  // The cache key names everything the machine code depends on.
  const std::string key = req.desc.symbol + "|" + spec.to_string() + "|" + what + "|" +
                          options_.target + "|" + ir::strategy_name(req.strategy) + "|O" +
                          std::to_string(options_.opt_level);
  auto compiled = cache_.get_or_compile(key, [this, &req]() {
    double seconds = 0;
    auto k = jit::jit_kernel(*session_, req, &seconds);
    std::lock_guard<std::mutex> lock(stats_mutex_);
    compile_seconds_ += seconds;
    return k;
  });
  if (!compiled)
    return to_status(compiled.takeError(), StatusCode::kJitFailure,
                     "compiling " + what + " kernel for " + spec.to_string());
  Kernel k;
  k.code = *compiled;
  k.fn = reinterpret_cast<KernelFn>(k.code->address());
  k.info.symbol = req.desc.symbol;
  k.info.strategy = ir::strategy_name(req.strategy);
  k.info.target = options_.target;
  k.info.cpu = target_.cpu;
  k.info.vector_bits = target_.vector_bits;
  return k;
}

Result<std::shared_ptr<const Codec>> JitImpl::codec(const CodeSpec &spec) {
  auto code = codes::build_code(spec);
  if (!code.ok()) return code.status();
  auto codec = CodecImpl::make(shared_from_this(), std::move(*code));
  if (!codec.ok()) return codec.status();
  return std::shared_ptr<const Codec>(*codec);
}

}  // namespace runtime
}  // namespace ecjit
