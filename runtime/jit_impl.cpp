// JitImpl: validates a Jit's options, starts its KernelService and hands out codecs.
#include "runtime/jit_impl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "codes/families.h"
#include "codes/linear_code.h"
#include "jit/decoder_planner.h"
#include "jit/service_options.h"
#include "runtime/array_codec_impl.h"
#include "runtime/codec_impl.h"
#include "runtime/fft_codec.h"
#include "runtime/xor_codec.h"

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
namespace {

static_assert(kMaxShapeInputs == jit::kMaxShapeInputs, "the public limit is the kernel service's");

// The kernel service's share of a Jit's options (the one place JitOptions becomes jit/'s).
jit::ServiceOptions service_options(const JitOptions &o) {
  jit::ServiceOptions s;
  s.target = o.target;
  s.strategy = o.strategy;
  s.opt_level = o.opt_level;
  s.disk_cache = o.disk_cache;
  s.cache_dir = o.cache_dir;
  s.tune = o.tune;
  s.tune_in_background = o.tune_in_background;
  s.tune_after_bytes = o.tune_after_bytes;
  return s;
}

}  // namespace

Result<std::shared_ptr<JitImpl>> JitImpl::make(const JitOptions &options) {
  if (options.max_cached_kernels == 0)
    return Status(StatusCode::kInvalidArgument, "max_cached_kernels must be at least 1");
  if (options.threads > kMaxThreads)
    return Status(StatusCode::kInvalidArgument,
                  "threads " + std::to_string(options.threads) + " is more than " +
                      std::to_string(kMaxThreads) + " (0 = one per hardware thread)");
  auto service = jit::KernelService::make(service_options(options));
  if (!service.ok()) return service.status();
  std::shared_ptr<JitImpl> jit(new JitImpl());
  jit->options_ = options;
  jit->options_.target = (*service)->target_name();
  // ECJIT_AOT=0 turns the built-in kernels off for every Jit (options() says so).
  if (const char *aot = std::getenv("ECJIT_AOT"); aot && std::strcmp(aot, "0") == 0)
    jit->options_.aot_kernels = false;
  jit->service_ = std::move(*service);
  jit->threads_ = options.threads ? options.threads
                                  : std::max(1u, std::min(kMaxThreads, std::thread::hardware_concurrency()));
  if (jit->threads_ > 1) jit->pool_ = std::make_unique<ThreadPool>(jit->threads_ - 1);
  return jit;
}

JitStats JitImpl::stats() const { return service_->stats(); }

void JitImpl::wait_for_tuning() { service_->wait_for_tuning(); }

Result<std::shared_ptr<const ArrayCodec>> JitImpl::array_codec(const std::string &spec_text) {
  auto c = ArrayCodecImpl::make(shared_from_this(), spec_text);
  if (!c.ok()) return c.status();
  return std::shared_ptr<const ArrayCodec>(*c);
}

Result<std::shared_ptr<const Codec>> JitImpl::codec(const CodeSpec &spec) {
  // An "rs:" spec's codec says why it was chosen: not shared with the named spec's.
  const std::string key = spec.to_string() + (spec.chosen_by.empty() ? "" : " (rs)");
  {
    std::lock_guard<std::mutex> lock(codecs_mutex_);
    auto it = codecs_.find(key);
    if (it != codecs_.end())
      if (std::shared_ptr<const Codec> live = it->second.lock()) return live;
  }
  std::shared_ptr<const Codec> out;
  if (!spec.bitmatrix()) {  // a forced strategy runs as asked or is refused, never replaced
    auto field = codes::Field::make(spec.gf);
    if (field.ok()) ECJIT_RETURN_IF_ERROR(service_->check_strategy(*field));
  }
  const codes::CodecKind kind = codes::codec_kind(spec);
  if (kind == codes::CodecKind::kFft) {  // not a matrix code: FftCodec (runtime/fft_codec.h)
    auto codec = FftCodec::make(shared_from_this(), spec);
    if (!codec.ok()) return codec.status();
    out = *codec;
  } else if (kind == codes::CodecKind::kBitmatrix) {
    // packet=auto: the packet timed fastest here (recorded on disk); the codec's spec names it.
    CodeSpec resolved = spec;
    std::string layout_why;
    std::vector<MeasuredCandidate> packets;
    if (spec.packet_auto) {
      Result<jit::XorPacketChoice> choice = service_->xor_packet(spec);
      if (!choice.ok()) return choice.status();
      resolved.packet = choice->packet;
      resolved.packet_auto = false;
      layout_why = choice->why;
      packets = choice->candidates;
    }
    auto code = codes::build_bitmatrix_code(resolved);
    if (!code.ok()) return code.status();
    auto codec = XorCodec::make(shared_from_this(), std::move(*code), std::move(layout_why), std::move(packets));
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
