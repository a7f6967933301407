// KernelService: every kernel a Jit hands out - compile policy, tuning, cache keys, slots, stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ecjit/jit_stats.h"
#include "ecjit/kernel_info.h"
#include "ecjit/status.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"
#include "ir_builders/xor_kernel.h"
#include "jit/kernel_slot.h"
#include "jit/service_options.h"
#include "jit/xor_packet.h"
#include "jit/xor_planner.h"

namespace ecjit::jit {

// ir::OutputMode::kVerify: size_t(const uint8_t *const *in, size_t len).
using VerifyFn = size_t (*)(const uint8_t *const *, size_t);
// Shape kernels (ir::KernelDesc::runtime_coeffs): the kernel ABI plus the prepared
// coefficients, void(const uint8_t *const *in, uint8_t *const *out, size_t len,
// const uint8_t *coeffs).
using ShapeFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t, const uint8_t *);

// Work slots of the largest rs-fft kernel KernelService::fft_kernel unrolls
// (ir::fft_kernel_slots). Zen 3, AVX2: encode 32:32 (32 slots) compiles in ~0.35 s, the
// decode core of 32:32 (64) ~1 s; past that the straight-line column spills more than it saves.
constexpr size_t kMaxFftKernelSlots = 64;

// A compiled kernel plus what it is, kept alive by shared ownership.
struct Kernel {
  std::shared_ptr<const CompiledKernel> code;
  void *address = nullptr;        // the entry point, whatever its signature (rs-fft kinds)
  KernelFn fn = nullptr;          // every mode but kVerify and shape kernels
  VerifyFn verify_fn = nullptr;   // kVerify
  ShapeFn shape_fn = nullptr;     // shape kernels (KernelService::shape_kernel)
  KernelInfo info;
  unsigned vector_lanes = 0;      // symbols per vector (the signature lane layout)
  size_t min_len = 1;             // shortest nonzero len it takes (KernelMode::whole_vectors)
  ir::Strategy built = ir::Strategy::kAuto;  // the strategy `code` was built with
  // Tuned kernels (plain encode/decode under "auto"): the entry point the background tuner
  // may replace; null for every other kernel (then fn and info are final).
  std::shared_ptr<KernelSlot> slot;

  // The entry point for a call over `input_bytes` of input (the bytes count toward a
  // deferred tuning, KernelSlot::defer), and what it is.
  KernelFn entry(size_t input_bytes) const {
    if (!slot) return fn;
    slot->note_work(input_bytes);
    return slot->fn();
  }
  KernelInfo current_info() const { return slot ? slot->info() : info; }
  ir::Strategy strategy() const { return slot ? slot->strategy() : built; }
};

// How KernelService::kernel builds and keeps a kernel.
struct KernelMode {
  ir::OutputMode output = ir::OutputMode::kOverwrite;
  ir::InputMode input = ir::InputMode::kPlain;
  // true: kept in the service's kernel cache for its lifetime (encoders, verify,
  // signatures). false: compiled for the caller alone, freed with its last Kernel copy
  // (per-erasure-set kernels that a codec's bounded LRU owns).
  bool shared = true;
  // Non-temporal output stores (ir::KernelDesc::streaming_stores; never tuned).
  bool streaming = false;
  // A strategy to use instead of the service's (kAuto: the service's, tuned or static).
  ir::Strategy strategy = ir::Strategy::kAuto;
  // kOverwrite: the caller sends calls shorter than Kernel::min_len elsewhere
  // (ir::KernelDesc::whole_vectors; promoted decoders, whose shape kernel takes them).
  bool whole_vectors = false;
};

// One per Jit (and one in the ISA-L drop-in's JIT plugin): the LLJIT session, the disk
// cache, the shared kernels by key (compiled once, kept for the service's lifetime), the
// tuned kernels' slots, the background thread (tunings, promoted decoders, disk pruning) and
// the compile statistics. Thread-safe. No LLVM type crosses this header.
class KernelService {
 public:
  // Validates and resolves options.target ("host" or "host-<features>"; others are
  // kUnsupportedTarget), options.strategy, options.opt_level (kInvalidArgument), and uses
  // disk_cache / cache_dir (ECJIT_DISK_CACHE=0 turns the disk cache off), tune and
  // tune_in_background. Errors: those, kJitFailure (LLVM could not start).
  static Result<std::unique_ptr<KernelService>> make(const ServiceOptions &options);
  ~KernelService();
  KernelService(const KernelService &) = delete;
  KernelService &operator=(const KernelService &) = delete;

  // The kernel computing out = coeffs * in over `field`, compiled once per cache key (when
  // mode.shared). `code` names the code ("rs-vand:k=10,m=4"), `what` the operation
  // ("encode", jit::decoder_op: "decode_t0_3_s1_2_4"); both go into the symbol and the key.
  // `pre` (empty: none): a first stage, ir::KernelDesc::pre (coeffs then applies to
  // [in; pre * in]). Plain encode/decode kernels under "auto" are tuned (in the background
  // when tune_in_background: the static choice serves until the winner is swapped into
  // Kernel::slot). Errors: kJitFailure.
  Result<Kernel> kernel(const std::string &code, const std::string &what, const codes::Field &field,
                        const codes::Matrix &coeffs, const KernelMode &mode = KernelMode(),
                        const codes::Matrix &pre = codes::Matrix());

  // The shape kernel out = C * in for any C of `outputs` x `inputs` over `field`, with C
  // prepared as codes::prepare_matrix(ir::runtime_layout(info.strategy), field, C): one per
  // (field, target, strategy, inputs, outputs) for the service's lifetime, on disk like any
  // kernel. `strategy` (nullopt: shape_strategy(field)) picks another shape strategy;
  // `accumulate`: out ^= C * in (ir::OutputMode::kAccumulate). Errors: kJitFailure (also
  // when there is no shape strategy, or `strategy` has no shape kernel for the field here).
  Result<Kernel> shape_kernel(const codes::Field &field, unsigned inputs, unsigned outputs,
                              std::optional<ir::Strategy> strategy = std::nullopt,
                              bool accumulate = false);
  // Ok under "auto" (it falls back to what the target has) and when the forced strategy
  // (ServiceOptions::strategy) has a lowering for `field` on this target; otherwise
  // kUnsupportedTarget naming the strategy, the field, the target and what it lacks - so a
  // codec never quietly runs another strategy than the one asked for.
  Status check_strategy(const codes::Field &field) const;
  // The strategy of the field's shape kernels on this target: a forced ServiceOptions::strategy's
  // run-time form (clmul-mixed: clmul-insn; none for clmul-shift); under "auto" the first of
  // gfni, split-table and clmul-insn that the target has; nullopt when none.
  std::optional<ir::Strategy> shape_strategy(unsigned field_bits) const {
    return shape_strategy_[__builtin_ctz(field_bits) - 3];
  }

  // A bit-matrix kernel (ir::build_xor_kernel, strategy "xor"). shared: kept by symbol for
  // the service's lifetime (encoders); else compiled for the caller alone (decoders per
  // erasure set, owned by a codec's LRU). Errors: kJitFailure.
  Result<Kernel> xor_kernel(const ir::XorKernelDesc &desc, bool shared);
  // Whether xor_kernel(desc, true) would answer without compiling: the kernel is in memory,
  // or an object for it is in the disk cache (it is still checked when loaded).
  bool xor_kernel_ready(const ir::XorKernelDesc &desc) const;
  // A shared bit-matrix kernel whose schedule is chosen by timing (jit/xor_tuner.h: smart,
  // uniform and weighted matching compiled and timed, the fastest kept and recorded on
  // disk) when ServiceOptions::tune is on; else xor_kernel(plan.desc, true). Runs on the
  // caller's thread (codecs call it from the background thread). Kernel::info.why names the
  // decision. Errors: kJitFailure.
  Result<Kernel> tuned_xor_kernel(const XorPlan &plan);
  // Whether tuned_xor_kernel(plan) would answer without compiling or timing: in memory, or
  // (tuning on) a schedule record and its object in the disk cache; else xor_kernel_ready.
  bool tuned_xor_kernel_ready(const XorPlan &plan) const;
  // packet=auto (jit/xor_packet_tuner.h): the packet of `spec`'s layout on this target, timed
  // once per service whatever ServiceOptions::tune says (it was asked for) and recorded in the
  // disk cache; on the caller's thread - a codec's layout cannot wait for the background.
  // Errors: kInvalidSpec, kJitFailure.
  Result<XorPacketChoice> xor_packet(const CodeSpec &spec);

  // An rs-fft kernel (ir::build_fft_kernel: encode, or the decode core of every erasure
  // pattern), compiled once per service. Kernel::address has the kind's signature (fn is
  // set for encode only). Errors: kUnsupported (no byte shuffle on the target, or more than
  // kMaxFftKernelSlots work slots: too large to unroll), kJitFailure.
  Result<Kernel> fft_kernel(const ir::FftKernelDesc &desc);

  // Runs `task` on the background thread (one at a time, with the tunings). false when
  // refused: optional and 8 jobs wait already, or the service is stopping.
  // still_wanted (may be null) is checked just before the task would start.
  bool submit_background(std::function<void()> task, std::function<bool()> still_wanted,
                         bool optional);
  // Stops the background thread for good (queued work dropped, the running job finished or
  // cancelled); later background work is refused. For a service that lives until exit
  // (the ISA-L drop-in): LLVM's static state must not be torn down under a running compile.
  void stop_background();
  // Waits until the background thread is idle and starts every deferred tuning
  // (KernelSlot::defer), repeated until nothing is queued or running and nothing was left
  // to start (background jobs may make new slots).
  void wait_for_tuning();

  // The compile, cache, disk and tuning counters (JitStats).
  JitStats stats() const;

  const ir::TargetInfo &target_info() const { return target_; }
  // The target as resolved ("host-avx2" stays that; "host" stays "host").
  const std::string &target_name() const { return target_name_; }
  // The strategy kernels of a field start with (ServiceOptions::strategy resolved for the
  // target; the tuner may replace it later).
  ir::Strategy resolved(unsigned field_bits) const { return resolved_[__builtin_ctz(field_bits) - 3]; }

 private:
  struct State;  // LLVM session, caches, tuner (kernel_service.cpp)
  KernelService() = default;
  // The memory-cache key of a shared xor kernel (xor_kernel, xor_kernel_ready).
  std::string xor_memory_key(const ir::XorKernelDesc &desc) const { return desc.symbol + "|xor|" + opt_name_; }
  bool xor_object_on_disk(const ir::XorKernelDesc &desc) const;  // desc's object in the disk cache
  // Registers this service for the process's exit handler (stops its background thread
  // before LLVM's statics go), warming the code generator up before the first one.
  void guard_exit();
  // Registers the exit handler that stops every live service's background thread (once per
  // process, before the first background job is queued).
  static void register_exit_handler();
  // The Kernel for `code`, described by the service.
  Kernel describe(std::shared_ptr<const CompiledKernel> code, const std::string &symbol,
                  const std::string &strategy) const;

  ir::TargetInfo target_;
  std::string target_name_;
  ir::Strategy strategy_ = ir::Strategy::kAuto;
  bool strategy_auto_ = true;   // ServiceOptions::strategy was "auto"
  bool tune_ = true;            // ServiceOptions::tune
  bool background_tuning_ = false;
  uint64_t tune_after_bytes_ = 0;  // ServiceOptions::tune_after_bytes
  std::string opt_name_;        // "O3"
  unsigned tunable_fields_ = 0; // fields (bits) with more than one candidate strategy here
  ir::Strategy resolved_[4] = {};
  std::optional<ir::Strategy> shape_strategy_[4];
  std::unique_ptr<State> state_;
};

}  // namespace ecjit::jit
