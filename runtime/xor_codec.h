// XorCodec: a bit-matrix (XOR) code with its JIT-compiled schedules: encoder, decoders per erasure set, updates.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/xor_schedule.h"
#include "jit/xor_planner.h"
#include "ecjit/codec.h"
#include "runtime/jit_impl.h"
#include "jit/once_cache.h"
#include "runtime/op_key.h"
#include "runtime/promotion.h"
#include "runtime/xor_runner.h"

namespace ecjit::runtime {

// Shards are blocks of w packets (Jerasure's layout, codes/bitmatrix_code.h); every len is a
// multiple of spec().block_bytes(). The encoder is a schedule (the fewest XORs of smart and
// weighted matching, checked symbolically) compiled by the xor lowering: in make() when its
// object is in memory or in the disk cache, else on the Jit's background thread while
// XorRunner serves the first encodes (no cold compile on the thread that asked for the codec).
// Decoders, delta updates and partial encodes are planned per shard set on first use
// (a GF(2) inversion and a smart schedule, microseconds) and served at once by XorRunner,
// which interprets the schedule: no compile on a caller's thread. A set that has moved
// JitOptions::promote_after_bytes (or given to prepare_reconstruct) gets its unrolled kernel
// (the better of smart and matching schedules) compiled on the Jit's background thread and
// swapped in. Signatures are not offered (the code is not linear over a field of the
// shard's symbols): kUnsupported.
class XorCodec final : public Codec {
 public:
  // Schedules with more XORs per block position are never compiled (LLVM takes seconds:
  // RS(32,8) w=8, 2,612 XORs: 1.6 s; RS(64,16), 9,778: 9.8 s): the runner serves them.
  static constexpr size_t kMaxUnrolledXors = 2048;
  // layout_why: how the packet was chosen (packet=auto), appended to the encoder's info;
  // packets: the packet sizes timed for it (KernelDecision::packets).
  static Result<std::shared_ptr<XorCodec>> make(std::shared_ptr<JitImpl> jit, codes::BitMatrixCode code,
                                                std::string layout_why = "",
                                                std::vector<MeasuredCandidate> packets = {});

  const CodeSpec &spec() const override { return code_.spec; }
  // The (m w) x (k w) parity bit-matrix as 0 / 1 entries, row-major.
  const std::vector<uint64_t> &parity_matrix() const override { return bits_; }
  KernelInfo encoder_info() const override {
    KernelInfo i = info(*encoder_);
    i.decision.packets = packets_;
    return i;
  }

  Status encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity, size_t len) const override;
  Status reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present, size_t len) const override;
  Status prepare_reconstruct(const std::vector<bool> &present) const override;
  KernelInfo decoder_info(const std::vector<bool> &present) const override;
  Status reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present,
                          size_t len) const override;
  Status reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                          const std::vector<bool> &present, size_t len) const override;
  Result<ShardSet> minimum_to_decode(const ShardSet &wanted, const ShardSet &available) const override;
  Status update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                Span<const uint8_t *const> new_data, Span<uint8_t *const> parity,
                size_t len) const override;
  Status encode_partial(unsigned data_index, const uint8_t *shard, Span<uint8_t *const> parity_acc,
                        size_t len) const override;
  Result<bool> verify(Span<const uint8_t *const> shards, size_t len,
                      size_t *mismatch_offset) const override;
  Status signature(const uint8_t *shard, size_t len, Span<uint64_t> sig) const override;
  Result<bool> verify_by_signatures(Span<const uint64_t> sigs, unsigned components) const override;
  KernelCacheStats kernel_cache_stats() const override;

  // The encoder's schedule (for stats and tests).
  const codes::XorProgram &encoder_program() const { return encoder_->plan.desc.program; }

  // One planned kernel beyond the encoder: its program run by `runner` until `compiled`
  // (the unrolled kernel of the best schedule, compiled in the background) is set.
  struct Op {
    explicit Op(jit::XorPlan p) : plan(std::move(p)), runner(plan.desc) {}
    jit::XorPlan plan;
    XorRunner runner;
    mutable std::shared_ptr<const Kernel> compiled;  // std::atomic_load / atomic_store
    mutable std::atomic<uint64_t> bytes{0};
    mutable std::atomic<bool> asked{false};
  };

 private:
  XorCodec(std::shared_ptr<JitImpl> jit, codes::BitMatrixCode code)
      : jit_(std::move(jit)), code_(std::move(code)), ops_(jit_->options().max_cached_kernels) {}
  Status check_len(const char *what, size_t len) const;
  // The encoder (compiled, or its runner until then or past kMaxUnrolledXors) over [0, len), split by blocks.
  void encode_blocks(const uint8_t *const *data, uint8_t *const *parity, size_t len) const;
  enum class Rebuild { kRun, kPrepare, kPlan };
  Status rebuild(const char *what, Span<uint8_t *const> shards, const std::vector<bool> &present,
                 const ShardSet *wanted, bool data_only, size_t len, Rebuild mode,
                 KernelInfo *info = nullptr) const;
  Result<std::shared_ptr<const Op>> decoder(const ShardSet &present, const std::vector<unsigned> &targets) const;
  // Runs op on (in, out): the compiled kernel when there is one, else the runner; counts the
  // bytes and asks for the compile past the threshold (now when `promote`).
  void run(const std::shared_ptr<const Op> &op, const uint8_t *const *in, uint8_t *const *out,
           size_t len, bool promote) const;
  // Queues the unrolled kernel's compile on the Jit's background thread; optional requests
  // (traffic past the threshold) are dropped when 8 wait already and asked again later.
  void promote(const std::shared_ptr<const Op> &op, bool optional) const;
  KernelInfo info(const Op &op) const;

  std::shared_ptr<JitImpl> jit_;
  codes::BitMatrixCode code_;
  std::vector<uint64_t> bits_;
  // The encoder: its runner, and its kernel once compiled (never past kMaxUnrolledXors).
  std::shared_ptr<const Op> encoder_;
  std::vector<MeasuredCandidate> packets_;
  std::string encoder_counts_;  // "schedule weighted-matching: N XORs per block position (dumb: D)"
  mutable jit::OnceCache<OpKey, Op, OpKeyHash> ops_;
  // Shared with background compiles, which may finish after the codec is gone.
  std::shared_ptr<std::atomic<uint64_t>> promotions_ = std::make_shared<std::atomic<uint64_t>>(0);
  mutable std::atomic<uint64_t> runner_calls_{0};
};

// The unrolled kernel a hot XOR program is promoted to (compiled on the Jit's background
// thread): `desc` with best_schedule's program when that has fewer XORs than its own, its
// `why` naming the count per `unit` ("block position", "stripe"); null when the compile fails
// (the runner keeps serving). Shared by XorCodec and ArrayCodecImpl.
std::shared_ptr<const Kernel> promoted_xor_kernel(JitImpl &jit, ir::XorKernelDesc desc, const codes::BitMatrix &map,
                                                  const std::string &unit);

// Compiles (or finds) plan's kernel - its own fewest-XOR program, or with `tuned` the
// schedule KernelService::tuned_xor_kernel picks by timing - and stores it into `compiled`
// (std::atomic_store), its why prefixed by `why`.
Status install_xor_kernel(JitImpl &jit, const jit::XorPlan &plan, bool tuned, const std::string &why,
                          std::shared_ptr<const Kernel> &compiled);

// A bit-matrix encoder's kernel into op->compiled (XorCodec and ArrayCodecImpl): what is
// ready (memory or disk cache) at once on the caller's thread, the rest on the background
// thread - the fewest-XOR schedule first, so the runner serves no longer than before, then
// (JitOptions::tune) the schedule the tuner picks, swapped in when it is timed. Errors: a
// kernel that was ready failed to load.
template <class Op>
Status start_xor_encoder(JitImpl &jit, const std::shared_ptr<const Op> &op, const jit::XorPlan &plan,
                         const std::string &why) {
  const bool tune = jit.options().tune;
  if (jit.tuned_xor_kernel_ready(plan)) return install_xor_kernel(jit, plan, tune, why, op->compiled);
  const bool have = jit.xor_kernel_ready(plan.desc);
  if (have) {
    ECJIT_RETURN_IF_ERROR(install_xor_kernel(jit, plan, false, why, op->compiled));
    if (!tune) return Status::Ok();
  }
  JitImpl *self = &jit;  // the task runs on this Jit's own thread, which it outlives
  promote_in_background<Op>(
      jit, op, op->asked, op->bytes,
      [self, plan, why, have, tune](const std::shared_ptr<const Op> &o) {
        // The runner keeps serving if a compile fails.
        if (!have && !install_xor_kernel(*self, plan, false, why, o->compiled).ok()) return;
        if (tune) (void)install_xor_kernel(*self, plan, true, why, o->compiled);
      },
      [] { return true; }, /*optional=*/false);
  return Status::Ok();
}

}  // namespace ecjit::runtime
