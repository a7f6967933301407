// JitImpl: the Jit behind the public interface: session, target, cache, compile statistics.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "codes/matrix.h"
#include "codes/gf.h"
#include "ecjit/jit.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"
#include "jit/background_tuner.h"
#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_cache.h"
#include "jit/pipeline.h"
#include "runtime/kernel_slot.h"
#include "runtime/thread_pool.h"

namespace ecjit::runtime {

// The kernel ABI (KernelFn, kernel_slot.h): void(const uint8_t *const *in,
// uint8_t *const *out, size_t len).
// ir::OutputMode::kVerify: size_t(const uint8_t *const *in, size_t len).
using VerifyFn = size_t (*)(const uint8_t *const *, size_t);
// Shape kernels (ir::KernelDesc::runtime_coeffs): the kernel ABI plus the prepared
// coefficients, void(const uint8_t *const *in, uint8_t *const *out, size_t len,
// const uint8_t *coeffs).
using ShapeFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t, const uint8_t *);

// A compiled kernel plus what it is, kept alive by shared ownership.
// Work slots of the largest rs-fft kernel JitImpl::fft_kernel unrolls (ir::fft_kernel_slots).
// Zen 3, AVX2: encode 32:32 (32 slots) compiles in ~0.35 s, the decode core of 32:32 (64) ~1 s;
// past that the straight-line column spills more than it saves.
constexpr size_t kMaxFftKernelSlots = 64;

struct Kernel {
  std::shared_ptr<const jit::CompiledKernel> code;
  KernelFn fn = nullptr;          // every mode but kVerify and shape kernels
  VerifyFn verify_fn = nullptr;   // kVerify
  ShapeFn shape_fn = nullptr;     // shape kernels (JitImpl::shape_kernel)
  KernelInfo info;
  unsigned vector_lanes = 0;      // symbols per vector (the signature lane layout)
  // Tuned kernels (plain encode/decode under "auto"): the entry point the background tuner
  // may replace; null for every other kernel (then fn and info are final).
  std::shared_ptr<KernelSlot> slot;

  // The entry point to call now, and what it is.
  KernelFn entry() const { return slot ? slot->fn() : fn; }
  KernelInfo current_info() const { return slot ? slot->info() : info; }
  ir::Strategy strategy() const { return slot ? slot->strategy() : code->strategy(); }
};

// How JitImpl::kernel builds and keeps a kernel.
struct KernelMode {
  ir::OutputMode output = ir::OutputMode::kOverwrite;
  ir::InputMode input = ir::InputMode::kPlain;
  // true: kept in the Jit's kernel cache for the Jit's lifetime (encoders, verify,
  // signatures). false: compiled for the caller alone, freed with its last Kernel copy
  // (per-erasure-set kernels that a codec's bounded LRU owns).
  bool shared = true;
  // Non-temporal output stores (ir::KernelDesc::streaming_stores; never tuned).
  bool streaming = false;
  // A strategy to use instead of the Jit's (kAuto: the Jit's, tuned or static).
  ir::Strategy strategy = ir::Strategy::kAuto;
};

class JitImpl final : public Jit, public std::enable_shared_from_this<JitImpl> {
 public:
  static Result<std::shared_ptr<JitImpl>> make(const JitOptions &options);

  Result<std::shared_ptr<const Codec>> codec(const CodeSpec &spec) override;
  Result<std::shared_ptr<const ArrayCodec>> array_codec(const std::string &spec_text) override;
  const JitOptions &options() const override { return options_; }
  JitStats stats() const override;
  void wait_for_tuning() override;

  // The kernel computing out = coeffs * in over `field`, compiled once per cache key.
  // `what` names the operation in the symbol ("encode", jit::decoder_op: "decode_t0_3_s1_2_4").
  // `pre` (empty: none): a first stage, ir::KernelDesc::pre (coeffs then applies to [in; pre * in]).
  // Errors: kJitFailure.
  Result<Kernel> kernel(const CodeSpec &spec, const std::string &what,
                        const codes::Field &field, const codes::Matrix &coeffs,
                        const KernelMode &mode = KernelMode(),
                        const codes::Matrix &pre = codes::Matrix());

  // The shape kernel out = C * in for any C of `outputs` x `inputs` over `field`, with C
  // prepared as codes::prepare_matrix(ir::runtime_layout(info.strategy), field, C): one per
  // (field, target, strategy, inputs, outputs) for the Jit's lifetime, shared by every
  // codec of the field, on disk like any kernel. `strategy` (nullopt: shape_strategy(field))
  // picks another shape strategy; `accumulate`: out ^= C * in (ir::OutputMode::kAccumulate).
  // Errors: kJitFailure (also when there is no shape strategy, or `strategy` has no shape
  // kernel for the field here).
  Result<Kernel> shape_kernel(const codes::Field &field, unsigned inputs, unsigned outputs,
                              std::optional<ir::Strategy> strategy = std::nullopt,
                              bool accumulate = false);
  // The strategy of the field's shape kernels on this target: JitOptions::strategy when it
  // has a run-time form (clmul-mixed: clmul-insn), else the first of gfni, split-table and
  // clmul-insn that the target has; nullopt when none (no vector unit, or no byte shuffle,
  // GFNI or carry-less multiply for this field).
  std::optional<ir::Strategy> shape_strategy(unsigned field_bits) const {
    return shape_strategy_[__builtin_ctz(field_bits) - 3];
  }
  // A bit-matrix kernel (ir::build_xor_kernel, strategy "xor"). shared: kept in the Jit's
  // kernel cache by symbol for the Jit's lifetime (encoders); else compiled for the caller
  // alone (decoders per erasure set, owned by a codec's LRU). Errors: kJitFailure.
  Result<Kernel> xor_kernel(const ir::XorKernelDesc &desc, bool shared);

  // An rs-fft kernel (ir::build_fft_kernel: encode, or the decode core of every erasure
  // pattern), compiled once per Jit and shared by its codecs. Kernel::code->address() has
  // the kind's signature (fn is set for encode only). Errors: kUnsupported (no byte shuffle
  // on the target, or more than kMaxFftKernelSlots work slots: too large to unroll),
  // kJitFailure.
  Result<Kernel> fft_kernel(const ir::FftKernelDesc &desc);

  // Runs `task` on the Jit's background thread (one at a time, with the tunings). false
  // when refused: optional and 8 jobs wait already, or the Jit is going away.
  // still_wanted (may be null) is checked just before the task would start.
  bool submit_background(std::function<void()> task, std::function<bool()> still_wanted,
                         bool optional);

  // Stops the background thread for good (queued work dropped, the running job finished or
  // cancelled); later background work is refused. For a Jit that lives until exit (the
  // ISA-L drop-in): LLVM's static state must not be torn down under a running compile.
  void stop_background() { tuner_->stop(); }

  const ir::TargetInfo &target_info() const { return target_; }
  // The strategy kernels of a field start with (JitOptions::strategy resolved for target_;
  // the tuner may replace it later).
  ir::Strategy resolved(unsigned field_bits) const {
    return resolved_[__builtin_ctz(field_bits) - 3];
  }

  // JitOptions::threads resolved (0 -> hardware threads), >= 1.
  unsigned threads() const { return threads_; }
  // The workers behind threads() > 1 (started on first use); null when threads() == 1.
  ThreadPool *pool() const { return pool_.get(); }

 private:
  JitImpl() = default;
  JitOptions options_;
  ir::TargetInfo target_;
  ir::Strategy strategy_ = ir::Strategy::kAuto;
  jit::OptLevel opt_ = jit::OptLevel::kO3;
  std::shared_ptr<jit::JitSession> session_;
  std::unique_ptr<jit::DiskCache> disk_;  // null when the disk cache is off
  uint64_t from_disk_ = 0;
  // Fields (8 | 16 | 32 | 64 as bits) with more than one candidate strategy on target_.
  unsigned tunable_fields_ = 0;
  bool tunable(unsigned field_bits) const { return (tunable_fields_ & field_bits) != 0; }
  // strategy_ resolved for GF(2^8), GF(2^16), GF(2^32), GF(2^64) on target_, once at
  // creation (the feature queries behind it cost tens of microseconds).
  ir::Strategy resolved_[4] = {};
  std::optional<ir::Strategy> shape_strategy_[4];
  // Codecs handed out and still alive, by spec string: a repeated request returns the same
  // immutable codec without rebuilding the code or looking up its encoder.
  std::mutex codecs_mutex_;
  std::unordered_map<std::string, std::weak_ptr<const Codec>> codecs_;
  jit::KernelCache cache_;
  mutable std::mutex stats_mutex_;
  double compile_seconds_ = 0;
  uint64_t private_compiles_ = 0;  // KernelMode::shared == false
  unsigned threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;  // threads_ - 1 workers, joined when the Jit goes
  uint64_t tunings_done_ = 0;         // under stats_mutex_
  double tuning_seconds_ = 0;         // under stats_mutex_
  // Slots of the shared tuned kernels by cache key (every Kernel copy of one shares it).
  std::mutex slots_mutex_;
  std::unordered_map<std::string, std::shared_ptr<KernelSlot>> slots_;
  // jit::jit_kernel of req on this Jit's session and disk cache, its time and disk hit added
  // to the stats (and a private compile counted when !shared).
  llvm::Expected<std::unique_ptr<jit::CompiledKernel>> counted_compile(const jit::CompileRequest &req,
                                                                       bool shared);
  // Compiled with the static choice, queued for tuning: `slot` gets the winner.
  void tune_later(const jit::CompileRequest &req, const std::shared_ptr<KernelSlot> &slot,
                  std::shared_ptr<const jit::CompiledKernel> running, bool optional);
  // Tiered tuning of kernels (JitOptions::tune_in_background, "auto", a tunable field).
  bool background_tuning_ = false;
  // The background thread: tunings, and the compiles of promoted decoders (its thread
  // starts with the first job). Declared last so that it is destroyed first: its worker
  // uses the session, the disk cache and the stats above.
  std::unique_ptr<jit::BackgroundTuner> tuner_;
};

}  // namespace ecjit::runtime
