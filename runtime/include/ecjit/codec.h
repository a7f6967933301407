// Codec: a compiled encoder/decoder for one code on one target; immutable and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ecjit/code_spec.h"
#include "ecjit/kernel_decision.h"
#include "ecjit/kernel_info.h"
#include "ecjit/shard_set.h"
#include "ecjit/span.h"
#include "ecjit/status.h"

namespace ecjit {

class Jit;

// Counters of a codec's cache of specialised kernels (decoders per erasure set, update
// kernels per changed set, encode_partial kernels per data index): a thread-safe LRU of at
// most `capacity` entries (JitOptions::max_cached_kernels). Evicted kernels release their
// JIT memory once no call is running them.
// With shape kernels (JitOptions::shape_kernels) decoders are counted apart: an erasure set
// first gets a plan (prepared coefficients for the codec's shape kernels), and a promoted
// set its specialised decoder, compiled in the background; update and encode_partial sets
// likewise run on shape kernels until promoted.
struct KernelCacheStats {
  uint64_t compiles = 0;   // kernels compiled for this codec (failed ones included)
  uint64_t hits = 0;       // lookups answered from the cache
  uint64_t evictions = 0;  // kernels dropped to stay within capacity
  size_t cached = 0;       // kernels held now
  size_t capacity = 0;
  uint64_t decode_plans = 0;        // erasure-set plans prepared (inversions)
  size_t decode_plans_cached = 0;   // plans held now
  uint64_t promotions = 0;          // specialised decoders (and update / partial encode
                                    // kernels) compiled in the background
  uint64_t demotions = 0;           // promoted sets sent back to the shape kernel (LRU)
  size_t promoted = 0;              // erasure sets running a specialised decoder now
  uint64_t shape_calls = 0;         // decode calls served by a shape kernel
  uint64_t delta_shape_calls = 0;   // update / encode_partial calls served by shape kernels
  uint64_t aot_calls = 0;           // encode / decode / update / encode_partial calls served by
                                    // kernels built ahead of time (JitOptions::aot_kernels)
};

// Largest number of algebraic signature components (the n of an n-symbol base).
constexpr unsigned kMaxSignatureComponents = 16;

// Shards: k data shards (indices 0..k-1) and m parity shards (k..k+m-1), each `len` bytes,
// len a multiple of symbol_bytes() (rs-fft: nonzero, and even over GF(2^16); its differences from the
// contracts below: docs/operations.md). The caller owns every buffer; a Codec never allocates
// shard memory. Obtained from Jit::codec(); safe to share and call from many threads.
// With JitOptions::threads != 1, calls on large shards are split across the Jit's threads
// and return when every piece is done, with byte-identical results.
class Codec {
 public:
  virtual ~Codec() = default;

  virtual const CodeSpec &spec() const = 0;
  unsigned k() const { return spec().k; }
  unsigned m() const { return spec().m; }
  unsigned n() const { return spec().k + spec().m; }
  // The unit of every len: the symbol (gf / 8 bytes), or for a bit-matrix code its block of
  // w x packet bytes (CodeSpec::block_bytes).
  unsigned symbol_bytes() const { return unsigned(spec().block_bytes()); }
  // The m x k parity matrix, row-major (parity i = sum_j a[i*k + j] * data j); for a
  // bit-matrix code (spec().bitmatrix()) the (m w) x (k w) bit-matrix of 0 / 1 entries.
  // rs-fft (CodeFamily::kRsFft): the m x k generator in reed-solomon-simd's representation
  // (Cantor-basis GF(2^16), or Leopard-RS's GF(2^8) with gf=8; column j = encode of the unit
  // vector e_j, element 1 being the value 0x0001), computed once on first call when
  // k * m <= 65536; an empty vector for larger codes. Thread-safe; the reference stays valid as long as the codec.
  virtual const std::vector<uint64_t> &parity_matrix() const = 0;
  // The encoder running now: under strategy "auto" the static choice until the background
  // tuner swaps in its winner (JitOptions::tune_in_background, Jit::wait_for_tuning).
  virtual KernelInfo encoder_info() const = 0;

  // Computes all m parity shards from the k data shards. The parity shards are always
  // overwritten; the data shards are only read. Parity buffers must not overlap data or
  // each other (data pointers may repeat).
  // Errors (nothing is written): kShardCount (data.size != k or parity.size != m),
  // kNullPointer (a null shard pointer), kInvalidArgument (a parity pointer equal to a data
  // pointer or to another parity pointer; partial overlaps are not detected),
  // kShardSize (len not a multiple of symbol_bytes()). Does not allocate.
  virtual Status encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                        size_t len) const = 0;

  // Rebuilds every shard s with present[s] == false, in place, from the present ones.
  // shards has n entries; present has n entries. Present shards are only read; missing
  // shards are overwritten (their pointers must be valid buffers of len bytes that overlap
  // no present shard and no other missing one).
  // The first call of an erasure set plans it (an inversion) and runs a shape kernel
  // compiled with the codec; a set used often gets its own decoder compiled in the
  // background (JitOptions::shape_kernels, promote_after_bytes; without shape kernels the
  // decoder is compiled on first use). Plans and decoders are cached (see
  // prepare_reconstruct). Errors (nothing is written): kShardCount, kNullPointer,
  // kInvalidArgument (a shard to rebuild has the same pointer as a present shard or as
  // another shard to rebuild), kShardSize, kTooManyErasures (more than m missing),
  // kSingular (the code is not MDS for this erasure set), kJitFailure (the decoder could not
  // be compiled). The same for reconstruct_data and reconstruct_some.
  virtual Status reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                             size_t len) const = 0;

  // Plans the erasure set ahead of time and asks for its specialised decoder now: with
  // shape kernels the decoder is compiled in the background (Jit::wait_for_tuning() waits
  // for it) while calls run the shape kernel; without, it is compiled here. Errors as
  // reconstruct().
  virtual Status prepare_reconstruct(const std::vector<bool> &present) const = 0;
  // The decoder for an erasure set (compiled if needed, as prepare_reconstruct), as running
  // now; empty when the set cannot be decoded.
  virtual KernelInfo decoder_info(const std::vector<bool> &present) const = 0;

  // --- Partial reconstruction (Ceph's ErasureCodeInterface) ---
  // In every call below, `shards` has n entries and `present` n entries; present shards are
  // only read; the decoder is specialised per (present set, rebuilt set), compiled on first
  // use and kept in the codec's bounded kernel cache. It reads the first k present shards
  // whose generator rows are independent, in index order (data shards first).

  // Rebuilds only the missing data shards (s < k, present[s] == false) in place. Missing
  // parity shards are neither read nor written and their pointers may be null. Errors
  // (nothing is written): kShardCount, kNullPointer (a present or missing data shard is
  // null), kShardSize, kTooManyErasures (fewer than k present), kSingular, kJitFailure.
  virtual Status reconstruct_data(Span<uint8_t *const> shards, const std::vector<bool> &present,
                                  size_t len) const = 0;

  // Rebuilds exactly the shards of `wanted` that are not present, in place; wanted shards
  // that are present are left as they are, and shards neither present nor wanted are not
  // touched (their pointers may be null). Errors (nothing is written): kShardCount,
  // kInvalidArgument (a wanted index >= n), kNullPointer (a present or a wanted missing
  // shard is null), kShardSize, kTooManyErasures, kSingular, kJitFailure.
  virtual Status reconstruct_some(const ShardSet &wanted, Span<uint8_t *const> shards,
                                  const std::vector<bool> &present, size_t len) const = 0;

  // Which shards to read to obtain `wanted` when the shards in `available` can be read.
  // When every wanted shard is available: exactly `wanted` (Ceph's contract). Otherwise the
  // available wanted shards, then available data shards, then available parity shards, in
  // index order, each taken only if it adds information, until the set determines the data
  // (k shards for an MDS code; reconstruct_some with present = the result reads exactly it).
  // Errors: kInvalidArgument (an index >= n in either set), kTooManyErasures (fewer than k
  // available), kSingular (the available shards do not determine the data).
  virtual Result<ShardSet> minimum_to_decode(const ShardSet &wanted,
                                             const ShardSet &available) const = 0;

  // --- Small writes and distributed encoding ---

  // Parity delta update for a small write (ISA-L ec_encode_data_update, Ceph apply_delta):
  // for the data shards in `changed` (old_data[i] / new_data[i] belong to the i-th member in
  // ascending order), parity[r] ^= sum_j a(r, j) * (old_j ^ new_j). With shape kernels
  // (the default) nothing compiles on this call: a new set runs on an accumulate shape
  // kernel compiled with the codec (a pass over parity per changed shard), and a set that
  // has moved JitOptions::promote_after_bytes gets its own kernel (one fused pass over old,
  // new and parity, constants folded) compiled in the background; without them that kernel
  // is compiled here on the set's first call. Both are cached per set. Afterwards the parity equals
  // encode() of the data with the changed shards replaced by the new contents. old_data and
  // new_data are only read (the caller stores the new data itself); parity is read and
  // written and must not overlap them or each other. Errors (nothing is written):
  // kInvalidArgument (empty set, an index >= k, or a parity pointer equal to an old or new
  // data pointer or to another parity pointer), kShardCount (old_data / new_data sizes != changed.size(), or
  // parity.size != m), kNullPointer, kShardSize, kJitFailure.
  virtual Status update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                        Span<const uint8_t *const> new_data, Span<uint8_t *const> parity,
                        size_t len) const = 0;

  // One data shard's contribution to every parity (Nešković 2018, eq. 2.29): parity_acc[r] ^=
  // a(r, data_index) * shard. Starting from zeroed accumulators, applying each data shard
  // once, in any order or split over nodes whose results are XOR-summed (eq. 2.30), yields
  // encode(). Served like update(): shape kernel first, the index's own kernel when hot.
  // shard is only read; parity_acc (m buffers) is read and written and must not
  // overlap it or each other. Errors (nothing is written): kInvalidArgument (data_index >= k,
  // or an accumulator pointer equal to the shard or to another accumulator),
  // kShardCount (parity_acc.size != m), kNullPointer, kShardSize, kJitFailure.
  virtual Status encode_partial(unsigned data_index, const uint8_t *shard,
                                Span<uint8_t *const> parity_acc, size_t len) const = 0;

  // --- Scrubbing ---

  // Whether the m parity shards equal encode() of the k data shards (shards: n pointers,
  // data then parity). Fused compute-and-compare kernel: nothing is written and no parity
  // copy is allocated. When `mismatch_offset` is set it receives len if all match, else the
  // offset of the first compared vector that differs (every byte before it matched).
  // Errors: kShardCount, kNullPointer, kShardSize, kJitFailure (first call only).
  virtual Result<bool> verify(Span<const uint8_t *const> shards, size_t len,
                              size_t *mismatch_offset = nullptr) const = 0;

  // Algebraic signature of one shard (Nešković 2018, ch. 2.4, eq. 2.33-2.35) over the code's
  // field GF(2^l): sig[i] = sum_j p_j * alpha_i^j over the shard's symbols p_j, for the
  // n = sig.size components (1 .. kMaxSignatureComponents), base alpha_i = alpha^(i+1), alpha
  // = X, the primitive element of the code's field. Two pages collide with probability about
  // 2^(-n l); up to n changed symbols are always detected while the page has fewer than
  // 2^l - 1 symbols. JIT kernel per n (cached). Errors: kInvalidArgument (n out of range),
  // kNullPointer, kShardSize, kJitFailure, kUnsupported (a bit-matrix code: no symbols).
  virtual Status signature(const uint8_t *shard, size_t len, Span<uint64_t> sig) const = 0;

  // Checks a stripe by signatures only (eq. 2.37: RS(sig(d)) = sig(RS(d))): sigs holds
  // n x components values, shard-major (sigs[s * components + i] = signature of shard s),
  // all taken with the same len and component count. True when every parity signature
  // equals the code applied to the data signatures. Errors: kInvalidArgument (components
  // out of range or a value outside the field), kShardCount (sigs.size != n x components).
  virtual Result<bool> verify_by_signatures(Span<const uint64_t> sigs,
                                            unsigned components) const = 0;

  virtual KernelCacheStats kernel_cache_stats() const = 0;
};

}  // namespace ecjit
