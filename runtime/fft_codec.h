// FftCodec: rs-fft (reed-solomon-simd's additive-FFT Reed-Solomon over GF(2^16)) behind the Codec interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codes/rs_fft.h"
#include "ecjit/codec.h"
#include "jit/once_cache.h"
#include "runtime/fft_blocks.h"
#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// ---- The seam between FftCodec and its kernels (runtime/fft_engine.h) ----
// Shards are in the crate's layout (codes/rs_fft.h): 64-byte chunks of 32 low then 32 high
// bytes of 32 elements. Kernels work on whole chunks only (len a multiple of 64); FftCodec
// runs a final partial chunk on the scalar path.

// in: the k originals, out: the m recovery shards.
using FftEncodeRun = std::function<void(const uint8_t *const *in, uint8_t *const *out, size_t len)>;
// One erasure set's decode by point (n = geometry.decode_work): in_at[x] the shard read at
// point x where plan.holds[x]; out_at[x] where to write point x, nullptr = not wanted;
// plan.tables: 2 n multipliers, the pre-multiplier of each point (zero where nothing is
// read), then the post-multiplier (kModulus - log where a shard is restored; zero elsewhere);
// with FftKernels::decode_reads_matrices_only, the matrices of the nonzero ones alone.
// false: nothing written (a kernel it needs could not be compiled); the scalar path runs it.
using FftDecodeRun = std::function<bool(const FftDecodePlan &plan, const uint8_t *const *in_at,
                                        uint8_t *const *out_at, size_t len)>;

// Multiplier tables (FftDecodePlan::tables) are sched::fft_mul_tables' layout, sched::kFftMulTableBytes each.

// The kernels of one (k, m): empty entries run the scalar reference (runtime/fft_blocks.h).
struct FftKernels {
  FftEncodeRun encode;
  FftDecodeRun decode;
  KernelInfo encode_info, decode_info;
  // Optional: what encodes now, where a better encoder is swapped in later (FftEngine's
  // unrolled one); else encode_info.
  std::function<KernelInfo()> encode_info_now;
  // Optional: how `decode` runs one plan for these targets, into decode_info's decision
  // (FftEngine::decide); decoder_info appends it as a sentence (fft_decode_why).
  std::function<void(const FftDecodePlan &, const std::vector<unsigned> &, KernelDecision *)> decide;
  // Bytes `decode` may keep per plan and target set (FftTargetDecode), for the plan budget.
  size_t decode_entry_bytes = 0;
  // `decode` reads only the GFNI bit-matrices of the plan's tables (sched::fft_mul_tables'
  // matrices_only): a new erasure set's plan makes nothing else.
  bool decode_reads_matrices_only = false;
  // Optional: the most missing shards an inverted-encoder decode may restore first before
  // `decode` would rather run its other decodes whatever the targets
  // (FftEngine::inverse_first_most, asked for by the first rebuild: it needs the decode core):
  // the sources of a rebuild are not chosen for an inverse beyond it. Empty: no bound.
  std::function<size_t()> inverse_first_most;
  size_t inverse_bound() const { return inverse_first_most ? inverse_first_most() : SIZE_MAX; }
};

// rs-fft:k=,m= (CodeFamily::kRsFft), byte-identical to codes::fft::encode_bytes /
// decode_bytes and so to reed-solomon-simd 3.x (gf=8: Leopard-RS / klauspost's leopard8).
// Immutable and thread-safe like every Codec; the Codec contracts hold with these differences:
//  - len (bytes per shard) must be nonzero, and even over GF(2^16)
//    (codes::fft::check_shard_bytes): kShardSize otherwise, also for len == 0, which other
//    codecs accept as a no-op.
//  - Whole 64-byte chunks run on the JIT kernels of FftKernels when the Jit has them, else
//    on the scalar reference in column blocks (at most ~kFftScratchBytes of scratch per
//    thread, which the thread keeps for later calls); a final partial chunk always runs on
//    the scalar path. Calls allocate (pointer tables, scratch); none of them compiles.
//  - Every rebuild reads the first k present shards in index order (originals first) and
//    decodes all the wanted missing shards at once. The erasure-locator logs are computed
//    once per set of shards read and kept in a bounded LRU (JitOptions::max_cached_kernels
//    sets, fewer when a plan is large); prepare_reconstruct plans a set ahead.
//  - update() and encode_partial() use linearity: parity ^= encode(delta) with the unchanged
//    originals taken as zero. Each costs a full encode of len bytes per shard (plus XORs),
//    however few shards changed: the transform touches every chunk of k inputs.
//  - verify() re-encodes into scratch (runs of at most 64 KiB per shard) and compares;
//    mismatch_offset is the first differing byte of any parity shard.
//  - signature() and verify_by_signatures(): kUnsupported (the symbols are Cantor-basis
//    elements split over two byte halves, not little-endian GF(2^l) words).
//  - parity_matrix(): the m x k generator in the crate's representation (column j = encode
//    of the unit vector e_j; element 1 = value 0x0001), built on first use when
//    k * m <= kMaxMatrixEntries, else empty.
//  - ShardSet arguments (reconstruct_some, minimum_to_decode, update) name shards below
//    kMaxShards only (ShardSet's range): for n > kMaxShards use reconstruct / reconstruct_data.
class FftCodec final : public Codec {
 public:
  static constexpr size_t kMaxMatrixEntries = 65536;

  // Validates spec (an rs-fft spec: kInvalidSpec otherwise), takes the Jit's rs-fft kernels
  // when it has them. Errors: kInvalidSpec.
  static Result<std::shared_ptr<FftCodec>> make(std::shared_ptr<JitImpl> jit, const CodeSpec &spec);
  // The same with `kernels` instead of the Jit's (null entries: the scalar path), e.g. plain
  // twins of the kernel ABI in tests.
  static Result<std::shared_ptr<FftCodec>> make(std::shared_ptr<JitImpl> jit, const CodeSpec &spec,
                                                FftKernels kernels);

  const CodeSpec &spec() const override { return spec_; }
  const std::vector<uint64_t> &parity_matrix() const override;
  KernelInfo encoder_info() const override;

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

  const codes::fft::Geometry &geometry() const { return geometry_; }

 private:
  // Key of a decode plan: the set of shards read, as bits.
  struct SetKey {
    std::vector<uint64_t> bits;
    bool operator==(const SetKey &o) const { return bits == o.bits; }
  };
  struct SetKeyHash {
    size_t operator()(const SetKey &k) const;
  };

  FftCodec(std::shared_ptr<JitImpl> jit, const CodeSpec &spec, const codes::fft::Geometry &g, size_t plans);

  // kShardSize unless len is nonzero and even; `what` names the operation.
  Status check_len(const char *what, size_t len) const;

  // A run over shards: encode (plan == nullptr; in: the k originals, out: the m recovery
  // shards) or a decode (in: plan->sources' shards, out: the shards `targets`).
  struct Job {
    const FftDecodePlan *plan = nullptr;
    const unsigned *targets = nullptr;
    size_t n_targets = 0;
  };
  // [0, len) of every shard: whole chunks through run_chunks (split over the Jit's threads),
  // the final partial chunk on the scalar path.
  void run(const Job &job, const uint8_t *const *in, size_t n_in, uint8_t *const *out, size_t n_out,
           size_t len) const;
  // The seam for JIT kernels: whole 64-byte chunks (len a multiple of 64) through
  // kernels_.encode / kernels_.decode when present, else the scalar reference.
  void run_chunks(const Job &job, const uint8_t *const *in, uint8_t *const *out, size_t len) const;
  // The scalar reference on [0, len) (runtime/fft_blocks.h's range rules).
  void run_scalar(const Job &job, const uint8_t *const *in, uint8_t *const *out, size_t len) const;

  // The plan of reading `sources` (k shards, ascending), made once per set (LRU).
  Result<std::shared_ptr<const FftDecodePlan>> plan(const std::vector<unsigned> &sources) const;

  enum class Rebuild { kRun, kPrepare, kPlan };
  // Checks the arguments of a rebuild (counts, pointers, aliasing, len, enough shards) and
  // runs it: targets are the missing shards in `wanted`, or all missing ones (data_only:
  // the missing originals). kPrepare / kPlan only plan the set (shards unused); kPlan
  // returns the plan through `out`.
  Status rebuild(const char *what, Span<uint8_t *const> shards, const std::vector<bool> &present,
                 const ShardSet *wanted, bool data_only, size_t len, Rebuild mode,
                 std::shared_ptr<const FftDecodePlan> *out = nullptr) const;

  // acc[r] ^= encode(x)[r] on [0, len), x the originals with x[idx[i]] = a[i] ^ b[i] (b null:
  // a[i]) and every other original zero (update, encode_partial). Arguments checked.
  void add_encoded(const unsigned *idx, size_t count, const uint8_t *const *a, const uint8_t *const *b,
                   uint8_t *const *acc, size_t len) const;

  KernelInfo scalar_info(const char *op) const;

  std::shared_ptr<JitImpl> jit_;
  CodeSpec spec_;
  codes::fft::Geometry geometry_;
  FftKernels kernels_;
  mutable jit::OnceCache<SetKey, FftDecodePlan, SetKeyHash> plans_;
  mutable std::once_flag matrix_once_;
  mutable std::vector<uint64_t> matrix_;
};

}  // namespace ecjit::runtime
