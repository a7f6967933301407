// FftEngine: the JIT kernels of one rs-fft code and how they run over shards (tiles, scratch, schedules).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codes/rs_fft_program.h"
#include "ecjit/codec.h"
#include "fft/schedule.h"
#include "ir_builders/fft_kernel.h"
#include "runtime/fft_blocks.h"
#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// Codes whose unrolled encoder (ir::build_fft_kernel) codec() compiles; larger ones encode on
// the step kernel. The same bound (work slots) decides which erasure sets' inverted-encoder
// decodes are also compiled unrolled, on the background thread (10:4 losing a chunk of
// originals: 26 GB/s on the step kernel, the unrolled encoder's 83 once compiled). Zen 3, AVX2, 64 KiB shards: 10:4 (12 work slots) 18 GB/s unrolled against
// 9 on steps, compiled in ~40 ms; 16 slots ~140 ms.
constexpr size_t kFftUnrolledEncodeSlots = 16;

// A matrix decode's making on an erasure set's first call, in ns: per coefficient its
// multiplier tables (written, page-faulted), per target a scalar pass of the transposed core
// (codes::fft::decode_matrix) - against the whole transforms' run of that call, per multiply
// and 64-byte column. Zen 5: 1024:1024 losing 16 makes its 16 x 1024 matrix in ~6.8 ms and
// runs the whole core on 4 KiB in ~2.7 ms; 16384:16384 losing 4 makes its matrix in ~15 ms
// against ~88 ms of core. Emerald Rapids Xeon (nibble-table multipliers, the core
// program kept by the engine): 23-74 ns a coefficient and ~3 ns a core multiply per target
// make it cheaper than these say; lowered to that, 1024:1024 losing 16 made its matrix on the
// call and paid its run beside it (first calls 4.6-5.5 -> 6.7-7.3 ms): kept as they were until
// the choice weighs the matrix's run too.
constexpr double kFftMatrixNsPerCoefficient = 300, kFftMatrixNsPerCoreMultiply = 2,
                 kFftCoreNsPerColumnMultiply = 2;

// A decode that needs the decode core's step kernel before its background compile is done
// (FftEngine::core_kernel; ~150 ms on Emerald Rapids, begun by the Jit's first rs-fft codec)
// runs as a matrix instead where making and running that matrix is estimated (the constants
// above) at no more than this, in ns; else it waits for the compile. 32:32 losing 32 at 64 KiB
// shards: ~2.5 ms; 1024:1024 losing 1024: ~0.4 s, past it.
constexpr double kFftInterimMatrixNs = 25e6;

// Decode cores of at most this many steps may be pruned (sched::prune_fft_steps; sizeof(sched::FftStep),
// 56 bytes, a step: the engine keeps the core unfolded beside the folded one, and up to
// kFftPrunedCores pruned ones); larger ones run whole. 16384:16384's ~97,000 steps: ~5 MB each.
constexpr size_t kFftPruneMaxSteps = size_t(1) << 17;

// A decode core is pruned for an erasure set where its aligned blocks of fft_prune_block(n)
// points (or more) read nowhere or restored nowhere hold at least 1/kFftPruneMinShare of its
// multiplies (sched::fft_block_butterflies); else the whole core runs (scattered losses leave
// almost no whole block: pruning each point would remove ~1%, 128:128 losing 128 at random
// 2284 multiplies per element of 2304). A core pruned for blocks serves every set with the
// same blocks (its folded steps take each point's shard or null per call), so it is made once
// and kept (kFftPrunedCores of them, the most recently used): losing m of 1024:1024 at random
// and restoring the originals, every set leaves the recovery points' half unrestored and no
// other block, and its first call runs a core pruned before (Emerald Rapids, 4 KiB shards:
// pruning and folding per set cost each first call ~0.5 ms of ~4.7). A new one is made on the
// asking call where what it removes over the call's columns (kFftCoreNsPerColumnMultiply a
// multiply and column) outweighs making it (kFftPruneNsPerStep a step and point), else on the
// Jit's background thread, once a second set asks for the same blocks, while the whole core
// serves (16384:16384 with 64-byte shards: a call of ~1.5 ms against ~6 ms of pruning).
constexpr size_t kFftPruneMinShare = 32;
constexpr double kFftPruneNsPerStep = 50;
constexpr size_t kFftPrunedCores = 4;
// The blocks pruning looks at on an n-point core: n / 64 points, at least 16 (two three-layer
// steps'; at most n). Coarse enough that losses at random seldom leave one whole, so the sets
// that lose alike share one pruned core: 1024:1024 losing m at random, a block of 32 points
// unread has odds of 2^-32; 128:128 restoring 32 of its 96 last originals, a block of them all
// read has ~0.15% (blocks of 8: ~4%, and four sets in ten made a core of their own).
inline uint32_t fft_prune_block(uint32_t points) {
  return points / 64 > 16 ? points / 64 : points < 16 ? points : 16;
}

// Runs rs-fft (k, m) on whole 64-byte columns with JIT code: the encoder unrolled for small
// codes, otherwise - and for every decode - the step kernel (one per Jit, shared by every
// code) on schedules built here: the encode schedule and the decode core once per code, the
// per-erasure-set multiplications from an FftDecodePlan's tables per call. Work runs in tiles
// of every shard sized so the work slots of a tile stay within ~2 MiB; scratch tiles are per
// thread, kept for later calls. Immutable after make; thread-safe.
class FftEngine : public std::enable_shared_from_this<FftEngine> {
 public:
  // Compiles or fetches the kernels (codec() time). Errors: kUnsupported (no byte shuffle on
  // the target), kJitFailure, kInvalidSpec.
  // gf: the code's field (its own step kernel: one per field and Jit).
  static Result<std::shared_ptr<const FftEngine>> make(JitImpl &jit, unsigned k, unsigned m,
                                                       codes::fft::Gf gf = codes::fft::Gf::k16);

  // in: the k originals, out: the m recovery shards, len a multiple of 64.
  void encode(const uint8_t *const *in, uint8_t *const *out, size_t len) const;
  // The seam of FftCodec's decode (runtime/fft_codec.h, FftDecodeRun): in_at[x] the shard
  // read at point x where plan.holds[x], out_at[x] the shard restored at point x or null,
  // plan.tables its multipliers; len a multiple of 64. false: nothing written - the set runs
  // the decode core and its step kernel could not be compiled (the caller decodes otherwise).
  bool decode(const FftDecodePlan &plan, const uint8_t *const *in_at, uint8_t *const *out_at, size_t len) const;

  // How a decode of `targets` from plan.sources runs, into d->fft (and d->compiling: what is
  // being made for the set in the background): the route, its cost and the alternatives', in
  // multiplies per element (makes the set's entry).
  void decide(const FftDecodePlan &plan, const std::vector<unsigned> &targets, KernelDecision *d) const;

  // About the bytes one target_decode entry holds at most (its steps: its fills and restores,
  // or the inverted encoder's, whose tables are the encoder's; the folded cores it shares are
  // the engine's), for FftCodec's plan budget.
  size_t decode_entry_bytes() const;

  // What encodes now: the unrolled encoder once it is compiled (small codes; in the
  // background where built-in step kernels serve meanwhile), else the step kernel.
  KernelInfo encode_info() const;
  // The most missing shards a decode by the inverted encoder may restore first (as a matrix,
  // |first| x k multiplies per element) and still cost less than the decode core, for any
  // targets: beyond it decode() never inverts (FftKernels::inverse_first_most).
  size_t inverse_first_most() const;
  // Whether decode() reads only the GFNI matrices of plan.tables (FftKernels::decode_reads_matrices_only).
  bool decode_reads_matrices_only() const { return decode_reads_matrices_only_; }
  const KernelInfo &decode_info() const { return decode_info_; }

 private:
  FftEngine() = default;

  // The decode of `targets` (shard ids) from plan.sources: a matrix when that is no more
  // multiplies than the alternatives (few losses), else the encoder's transforms inverted
  // where the shards read allow it, else the transforms: the whole core, or one pruned for
  // the set's blocks of points read or restored nowhere. Made once per plan and target set.
  // `len`: the bytes of the call that asks (0: none, a description): where making a matrix of
  // many coefficients would cost that call more than the whole transforms, they serve it and
  // the matrix is made in the background (FftTargetDecode::matrix_later).
  std::shared_ptr<const FftTargetDecode> target_decode(const FftDecodePlan &plan,
                                                       const std::vector<unsigned> &targets,
                                                       size_t len = 0) const;
  // Runs a matrix schedule (fft_matrix_schedule's layout) from the plan's sources into
  // target_out (one pointer per target).
  void run_matrix(const sched::FftSchedule &mat, const FftDecodePlan &plan, const uint8_t *const *in_at,
                  uint8_t *const *target_out, size_t len) const;
  // Runs a schedule whose pointers are work slots then shards (fft_encode_schedule's) with the
  // multiplier `tables` its steps index: shard s is read from in(s) + offset (null: not read),
  // an output slot's shard s written at out(s) + offset, scratch tiles for the rest, tile by
  // tile over len bytes. in and out map shard ids to the caller's pointers, so no call builds
  // a k + m table of its own (defined in fft_engine.cpp, its only user). `first` (nullable, a
  // matrix schedule of the same pointer layout with its own tables) runs before it in each
  // tile; the shards it writes go to out(s), or to scratch where that is null, and are read
  // from there.
  template <class In, class Out>
  void run_shard_schedule(const sched::FftSchedule &s, const uint8_t *tables, In in, Out out, size_t len,
                          const sched::FftSchedule *first = nullptr) const;

  // The decode core: its schedule (slots and tables; its steps, unfolded, where it may be
  // pruned - at most kFftPruneMaxSteps - else empty, moved into `whole`), its blocks
  // (l2_block_slots of its 1 KiB tiles, or where those all fit in L2, l1_block_slots), its
  // multiplies and steps, and the whole core folded. Made once (core()): by the first decode
  // that needs it, or on the Jit's background thread right after make - about a third of
  // codec()'s time at 1024:1024, which an encode needs none of.
  struct Core {
    sched::FftSchedule schedule;
    uint32_t block_slots = 0;
    size_t multiplies = 0;  // sched::fft_multiplies of the steps
    size_t steps = 0;
    std::shared_ptr<const FftFoldedCore> whole;
  };
  const Core &core() const;
  // The decode core, its ends folded for every point but those of lost_blocks
  // (FftFoldedCore's; ECJIT_FFT_FOLD=0: not folded): `whole` (moved from; lost_blocks empty),
  // or where that is null, core's steps pruned for those blocks.
  std::shared_ptr<const FftFoldedCore> make_folded_core(const Core &core, std::vector<sched::FftStep> *whole,
                                                        std::vector<uint8_t> lost_blocks) const;
  // The kept core pruned for lost_blocks; where none is, made now (`now`) or on the Jit's
  // background thread (once per blocks, when a second set asks for them; null returned
  // meanwhile).
  std::shared_ptr<const FftFoldedCore> pruned_core(std::vector<uint8_t> lost_blocks, bool now) const;
  void keep_pruned(std::shared_ptr<const FftFoldedCore> c) const;  // the most recently used
  void done_pruning(const std::vector<uint8_t> &lost_blocks) const;  // out of pruning_
  // The decode's pointers: work slots, shards read, shards restored (n each), then the table
  // arrays of the folded ends at kPreTables n (pre's) and kPreTables n + 1 (post's).
  static constexpr uint32_t kPreTables = 3;

  JitImpl *jit_ = nullptr;  // the codec's (it holds the Jit); background compiles of inverses
  unsigned k_ = 0, m_ = 0;
  bool radix8_ = false;  // schedules of three-layer steps (ir::fft_radix8_steps)
  bool decode_reads_matrices_only_ = false;  // the step kernel multiplies by GFNI
  codes::fft::Geometry geometry_;
  // The step kernels (one per field and Jit, shared by every code): transform_steps_ of the
  // transforms' kinds (sched::FftStepKinds::kTransforms), compiled by make - encodes, matrix
  // decodes, the inverted encoder; and the kernel of every kind, for the decode core (its
  // derivative, folded ends and Top passes), which make asks the Jit's background thread for:
  // a codec's encoder waits for half the code (1024:1024 cold, Emerald Rapids: codec() ~110
  // ms against ~220 with the one kernel of every kind), and a core decode that finds it not
  // yet there waits for that compile or makes it (core_kernel).
  // The encoder when the code is small, once compiled (codec() time, or the Jit's background
  // thread behind built-in step kernels): unrolled_fn_ its entry point (acquire; null before),
  // unrolled_ the kernel under unrolled_mutex_, kept for the engine's life.
  mutable std::atomic<KernelFn> unrolled_fn_{nullptr};
  mutable std::mutex unrolled_mutex_;
  mutable Kernel unrolled_;
  mutable bool unrolled_coming_ = false;  // being compiled in the background (under unrolled_mutex_ once shared)
  void set_unrolled(Kernel k) const;
  Kernel transform_steps_;
  ir::FftKernelDesc core_desc_;
  mutable std::shared_ptr<const Kernel> core_kernel_;  // std::atomic_load / store; null until compiled
  // The kernel of every kind: core_kernel_, or compiled (or waited for) now; null where its
  // compile failed (a later call tries again).
  std::shared_ptr<const Kernel> core_kernel() const;
  // Making a matrix decode of matrix_cost coefficients for `targets` shards, in ns (the
  // constants above): target_decode's choice against the transforms, decode's interim matrix.
  double matrix_make_ns(size_t matrix_cost, size_t targets) const;
  sched::FftSchedule encode_schedule_;
  size_t encode_multiplies_ = 0;  // sched::fft_multiplies(encode_schedule_.steps)
  mutable std::once_flag core_once_;
  mutable std::unique_ptr<const Core> core_;  // set once, under core_once_
  // The decode core as a program (codes::fft::decode_core_program), what every matrix decode
  // transposes: built by the first (1024:1024: ~0.6 ms of the ~0.7 a matrix's coefficients
  // took), kept (about 16 bytes per butterfly or XOR: 1024:1024 ~0.6 MB).
  std::shared_ptr<const codes::fft::Program> matrix_core() const;
  mutable std::mutex matrix_core_mutex_;
  mutable std::shared_ptr<const codes::fft::Program> matrix_core_;
  mutable std::mutex pruned_mutex_;
  mutable std::vector<std::shared_ptr<const FftFoldedCore>> pruned_;  // least recently used first
  // The lost_blocks of pruned cores being made in the background, and of the last sets that
  // asked for one in the background (queued when a second set asks).
  mutable std::vector<std::vector<uint8_t>> pruning_, seen_;
  KernelInfo encode_info_, decode_info_;
};

// FftEngine::decide's decision as a sentence, for KernelInfo::why.
std::string fft_decode_why(const KernelDecision &d);

}  // namespace ecjit::runtime
