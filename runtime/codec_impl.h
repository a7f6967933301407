// CodecImpl: a LinearCode with its JIT-compiled encoder and per-erasure-set decoders.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "codes/locality.h"
#include "ecjit/codec.h"
#include "runtime/jit_impl.h"
#include "runtime/codec_kernels.h"
#include "runtime/spec_choice.h"
#include "runtime/decode_cache.h"
#include "jit/once_cache.h"
#include "runtime/parity_delta.h"
#include "runtime/op_key.h"

namespace ecjit::runtime {

class CodecImpl final : public Codec {
 public:
  // Compiles the encoder and the shape kernels, or has them compiled in the background while
  // the ahead-of-time kernels serve (CodecKernels). Errors: kJitFailure.
  static Result<std::shared_ptr<CodecImpl>> make(std::shared_ptr<JitImpl> jit, codes::LinearCode code);

  const CodeSpec &spec() const override { return code_.spec; }
  const std::vector<uint64_t> &parity_matrix() const override { return code_.parity.a; }
  KernelInfo encoder_info() const override { return with_spec_choice(kernels_->encoder_info(), code_.spec); }

  Status encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                size_t len) const override;
  Status reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                     size_t len) const override;
  Status prepare_reconstruct(const std::vector<bool> &present) const override;
  KernelInfo decoder_info(const std::vector<bool> &present) const override;

  Status reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present,
                          size_t len) const override;
  Status reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                          const std::vector<bool> &present, size_t len) const override;
  Result<ShardSet> minimum_to_decode(const ShardSet &wanted,
                                     const ShardSet &available) const override;
  Status update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                Span<const uint8_t *const> new_data, Span<uint8_t *const> parity,
                size_t len) const override;
  Status encode_partial(unsigned data_index, const uint8_t *shard,
                        Span<uint8_t *const> parity_acc, size_t len) const override;
  Result<bool> verify(Span<const uint8_t *const> shards, size_t len,
                      size_t *mismatch_offset) const override;
  Status signature(const uint8_t *shard, size_t len, Span<uint64_t> sig) const override;
  Result<bool> verify_by_signatures(Span<const uint64_t> sigs,
                                    unsigned components) const override;
  KernelCacheStats kernel_cache_stats() const override;

 private:
  CodecImpl(std::shared_ptr<JitImpl> jit, codes::LinearCode code)
      : jit_(std::move(jit)), code_(std::move(code)), local_(codes::local_checks(code_)),
        ops_(jit_->options().max_cached_kernels) {}
  // The rebuild of `wanted` (all missing shards in `targets`) from `present`: validates
  // counts, pointers (present and target shards must be set), len and indices, then runs
  // the cached decoder. `what` names the operation in messages.
  // kRun rebuilds; kPrepare plans (and asks for the specialised decoder now); kPlan only
  // plans (decoder_info).
  enum class Rebuild { kRun, kPrepare, kPlan };
  Status rebuild(const char *what, Span<uint8_t *const> shards, const std::vector<bool> &present,
                 const ShardSet *wanted, bool data_only, size_t len, Rebuild mode) const;
  Result<std::shared_ptr<const OpKernel>> decoder(const ShardSet &present,
                                                  const ShardSet &targets) const;
  // Runs a local plan's XOR steps in order on `shards`.
  void run_local(const codes::LocalPlan &plan, Span<uint8_t *const> shards, size_t len) const;
  // A shared (whole-Jit) kernel compiled on first use into `slot` under mutex_; `describe`
  // fills the symbol part and the matrix, and runs only then (no allocation once compiled).
  Result<Kernel> lazy_kernel(Kernel *slot,
                             const std::function<void(std::string *, codes::Matrix *)> &describe,
                             const KernelMode &mode) const;

  std::shared_ptr<JitImpl> jit_;
  codes::LinearCode code_;
  // The parity rows over fewer than k shards (an LRC's local parities; none for MDS codes):
  // a loss one of them repairs by XOR reads only its shards, and runs no kernel.
  std::vector<codes::LocalCheck> local_;
  // The XOR of w shards for local repairs: raidz:k=w,m=1 codecs of this Jit, one per width.
  std::vector<std::pair<unsigned, std::shared_ptr<const Codec>>> local_xor_;
  const Codec *xor_codec(unsigned inputs) const;  // null: xor_regions serves
  // Their plans per (present, targets), XOR-only ones; no steps: none applies (the global plan).
  mutable jit::OnceCache<OpKey, codes::LocalPlan, OpKeyHash> local_plans_{4096};
  // The cached local plan for rebuilding `targets` from `have`, null when none applies.
  std::shared_ptr<const codes::LocalPlan> local_plan(const ShardSet &have, const ShardSet &targets) const;
  std::shared_ptr<CodecKernels> kernels_;  // the encoder and the first calls' shape kernels
  // Decoders from the first call (shape kernels, promotion); null when this codec has no
  // shape kernels: then decoder() compiles one per erasure set on first use.
  std::unique_ptr<DecodeCache> decodes_;
  // update() and encode_partial() from the first call (accumulate shape kernels, promotion);
  // null without shape kernels: then ops_ compiles one kernel per set on first use.
  std::unique_ptr<ParityDelta> deltas_;
  // The encoder with streaming stores (JitOptions::streaming_min_len), compiled on first
  // use with the strategy the compiled encoder has (never while the ahead-of-time kernels serve); fn stays null where it cannot be built.
  mutable std::once_flag streaming_once_;
  mutable Kernel streaming_encoder_;
  const Kernel *streaming_encoder() const;
  mutable jit::OnceCache<OpKey, OpKernel, OpKeyHash> ops_;
  mutable std::mutex mutex_;  // guards the lazily compiled kernels below
  mutable Kernel verifier_;
  mutable Kernel signers_[kMaxSignatureComponents];
  // Log / antilog tables of the field for l <= 16 (finishing signatures), built on first use.
  mutable std::once_flag tables_once_;
  mutable std::vector<uint32_t> log_, exp_;
  // a * b with the tables when l <= 16, else Field::mul.
  uint64_t fast_mul(uint64_t a, uint64_t b) const;
  void build_tables() const;
};

}  // namespace ecjit::runtime
