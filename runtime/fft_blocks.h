// rs-fft's scalar path on byte ranges of shards in column blocks of bounded memory; one erasure set's decode plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "codes/rs_fft.h"
#include "fft/order.h"
#include "fft/schedule.h"
#include "jit/kernel_service.h"

namespace ecjit::runtime {

// Scratch of the scalar path per thread and block shape: a block holds this many bytes of
// unpacked work shards at most (and at least 32 elements per work shard), so memory stays
// bounded whatever the shard length (rs-fft:k=16384,m=16384: 32768 work shards of 32
// elements). A thread keeps the scratch of its last few block shapes for later calls.
constexpr size_t kFftScratchBytes = size_t(2) << 20;
// Largest block: 4 KiB of every shard (2048 elements).
constexpr size_t kFftMaxBlockBytes = 4096;

// An allocator whose resize() leaves new bytes as they are (no zeroing): a new erasure set's
// plan writes the multiplier tables its kernel reads and nothing else (FftDecodePlan::tables).
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U> &) noexcept {}
  template <class U>
  void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <class U, class... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

// Point of shard s (originals 0 .. k-1, then recovery) in the transforms of g.
inline size_t fft_point(const codes::fft::Geometry &g, unsigned s) {
  return s < g.k ? g.original_pos + s : g.recovery_pos + (s - g.k);
}

// Bytes of every shard one scalar block covers when `work_slots` work shards are held: a
// multiple of 64 in [64, kFftMaxBlockBytes].
size_t fft_block_bytes(size_t work_slots);

// A decode core with its ends folded (sched::fold_decode_ends) for every point it may read or
// restore, shared by every erasure set it serves (FftEngine): the code's whole core, or the
// core pruned (sched::prune_fft_steps) for aligned blocks of points read nowhere and restored
// nowhere (lost_blocks) - the sets with exactly those blocks. The fills and
// restores that did not fold stay as templates on the pointer layout of sched::fold_decode_ends:
// per set, a fill of a point not read becomes its Zero step and a restore of a point not
// restored is left out.
struct FftFoldedCore {
  // Per block of fft_prune_block(n) points, 1 where none is read, then per block 1 where none
  // is restored; empty: none (the whole core).
  std::vector<uint8_t> lost_blocks;
  std::vector<sched::FftStep> pre, core, post;
  std::vector<uint32_t> blocks;  // sched::fft_step_blocks(core) where the engine runs blocks, else empty
  size_t multiplies = 0;         // sched::fft_multiplies of the three lists before the fold
  bool ends_folded = false;      // the fold moved fills or restores into the core
};

// How one set of shards read restores one set of targets (runtime/fft_engine.h): as a
// matrix (few targets), by the encoder's transforms inverted (sched::fft_inverse_decode_schedule:
// about an encode's work, where the shards read allow it), or through a folded core (the
// whole one, or one pruned for the set's blocks of points read or restored nowhere) with the
// set's own fills and restores (pre and post index the plan's tables, the core the code's).
struct FftTargetDecode {
  std::shared_ptr<const sched::FftSchedule> matrix;   // set: the matrix decode
  std::shared_ptr<const sched::FftSchedule> inverse;  // set: the encoder's transforms inverted
  // With `inverse`: the missing shards it reads (codes::fft::inverse_decode_reads's first),
  // restored before it as a matrix from the plan's sources; null when it reads none.
  std::shared_ptr<const sched::FftSchedule> first;
  // Else the transforms: the folded core (shared) between the set's fills and restores.
  std::shared_ptr<const FftFoldedCore> folded;
  std::vector<sched::FftStep> pre, post;
  // The folded core is the code's whole one, not pruned for the set: too large to prune, a
  // matrix being made meanwhile (matrix_asked), prune_skipped, or prune_later.
  bool whole_core = false;
  // Set with whole_core where pruning would remove too little (scattered losses:
  // FftEngine::target_decode); block_multiplies says how little (sched::fft_block_butterflies
  // of the blocks of points not read and not restored).
  bool prune_skipped = false;
  // Set with whole_core where the core pruned for the set's blocks is being made on the
  // background thread (making it would have cost the asking call more than it saves): later
  // sets that lose the same blocks run it; this one keeps the whole core.
  bool prune_later = false;
  size_t block_multiplies = 0;
  // Whether the core it runs reads the shards and writes the restored ones in its own first
  // and last steps (sched::fold_decode_ends), so that pre and post hold only what did not fold.
  bool ends_folded = false;
  // The order the transforms run in (sched::order_fft_ends_by_block): pieces of pre, the core
  // (or the code's whole core) and post, block by block at the ends.
  std::vector<sched::FftSegment> segments;
  // The inverse unrolled for this set (ir::FftKernelDesc::Kind::kInverse; small codes only),
  // compiled on the Jit's background thread while the step kernel serves; null until then.
  // std::atomic_load / atomic_store only.
  mutable std::shared_ptr<const jit::Kernel> unrolled;
  bool unrolled_asked = false;  // its compile was queued (the inverse is small enough)
  // The matrix when making it on the first call would cost more than running the whole
  // transforms (FftEngine: many coefficients, a short call): made on the Jit's background
  // thread while the transforms (whole core, nothing pruned) serve; null until then.
  // std::atomic_load / atomic_store only.
  mutable std::shared_ptr<const sched::FftSchedule> matrix_later;
  bool matrix_asked = false;  // its making was queued
  // Multiplies per element (sched::fft_multiplies): the matrix's targets x sources multiply-adds,
  // the inverted encoder's (0: the shards read do not allow it), and the transforms' - whole
  // when another decode runs (the choice), pruned when they run.
  size_t matrix_cost = 0, inverse_cost = 0, transform_cost = 0;
};

// Those decodes of one plan, per set of targets, made on first use; a few are kept (the usual
// calls restore all missing shards or the missing originals). Thread-safe.
struct FftTargetCache {
  static constexpr size_t kEntries = 4;
  std::mutex mutex;
  std::vector<std::pair<std::vector<unsigned>, std::shared_ptr<const FftTargetDecode>>> entries;
};

// One erasure set's decode, planned once (codes::fft::decode's locator, computed here
// instead of per call): the shards read and the erasure-locator logs on the decode_work
// points. Immutable once made; shared by concurrent calls.
struct FftDecodePlan {
  std::vector<unsigned> sources;  // the k shards read, ascending (originals first)
  std::vector<uint32_t> points;   // points[i] = fft_point(sources[i])
  std::vector<uint8_t> holds;     // decode_work entries: 1 where a source sits
  std::vector<uint16_t> logs;     // decode_work entries (codes::fft::erasure_logs)
  // For a decode kernel (FftDecodeFn, runtime/fft_codec.h): 2 x decode_work multiplier
  // tables, pre then post; empty when no kernel runs. Where the kernel reads only their GFNI
  // matrices (FftKernels::decode_reads_matrices_only), only the matrices of the pre tables of
  // points read and the post tables of the others are written; other bytes are unspecified.
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> tables;
  std::shared_ptr<FftTargetCache> decodes = std::make_shared<FftTargetCache>();
  size_t bytes() const {
    return sources.size() * 8 + holds.size() + logs.size() * 2 + tables.size();
  }
};

// The plan of decoding from `sources` (exactly k shards, ascending): the points that hold
// no source are erased, with the unused recovery points (high rate) and every point past
// decode_end (low rate), as codes::fft::decode has it; points past decode_end at the high
// rate are known zeros. No tables.
FftDecodePlan plan_fft_decode(const codes::fft::Geometry &g, std::vector<unsigned> sources);

// ---- The scalar path (codes/rs_fft.h's transforms on unpacked column blocks) ----
// Every function below works on [0, len) of the shards its pointers name, where pointer p
// of a shard stands for byte `off` of that shard, off a multiple of 64, and the range ends
// at the end of the shards when len % 64 != 0 (the partial chunk's layout depends on it).
// len is even and nonzero. Byte-identical to codes::fft::encode_bytes / decode_bytes on
// the whole shards. Thread-safe; allocates only the calling thread's scratch.

// out[j] (m recovery shards) from in[i] (k originals). out must not overlap in.
void fft_scalar_encode(const codes::fft::Geometry &g, const uint8_t *const *in, uint8_t *const *out,
                       size_t len);

// src[i] holds shard plan.sources[i]; dst[t] receives shard targets[t] (n_targets shards,
// none of them a source). dst must not overlap src or each other.
void fft_scalar_decode(const codes::fft::Geometry &g, const FftDecodePlan &plan, const uint8_t *const *src,
                       const unsigned *targets, uint8_t *const *dst, size_t n_targets, size_t len);

}  // namespace ecjit::runtime
