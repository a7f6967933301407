// The step instruction set of rs-fft schedules: what one step does to its tiles, the queries on
// step kinds that the emitter (ir_builders/fft_step_kernel.cpp), the passes and the tests'
// interpreter share, and the passes over a list of steps. No LLVM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ecjit::sched {

// One step on tiles of `bytes` bytes (a multiple of 64) at A = ptr[a], B = ptr[b], with the
// multiplier T = tables + table * kFftMulTableBytes (fft/mul_tables.h):
enum FftStepKind : uint32_t {
  kFftStepFft = 0,   // A ^= B * T; B ^= A
  kFftStepIfft = 1,  // B ^= A; A ^= B * T
  kFftStepXor = 2,   // A ^= B
  kFftStepCopy = 3,  // A = B
  kFftStepZero = 4,  // A = 0
  kFftStepMul = 5,   // A = B * T   (A may be B); dist = 1 + p: ptr[p]'s same column asked
                     // for ahead (prefetch_shard_reads), dist 0: none
  // Two layers on four slots X_j = ptr[a + j dist] (T2 = table, T0 = table0, T1 = table1).
  // In these and the three-layer kinds a nonzero b is where the inputs are read: X_j is
  // loaded from ptr[b + j dist] (shards, read only) and the results stored to ptr[a + j dist],
  // a slot's copy from its shard folded into the first step that reads it (fold_input_copies):
  kFftStepFft4 = 6,   // FFT butterflies (X0,X2) (X1,X3) by T2, then (X0,X1) by T0, (X2,X3) by T1
  kFftStepIfft4 = 7,  // IFFT butterflies (X0,X1) by T0, (X2,X3) by T1, then (X0,X2) (X1,X3) by T2
  kFftStepMulAdd = 8, // A ^= B * T
  // Three sources into one slot (a matrix decode's row: A read and written once per three
  // products instead of once per product), B0 = ptr[b], B1 = ptr[dist], B2 = ptr[b2]:
  kFftStepMul3 = 9,     // A = B0 * T ^ B1 * T0 ^ B2 * T1
  kFftStepMulAdd3 = 10, // A ^= B0 * T ^ B1 * T0 ^ B2 * T1
  // Several XORs into one slot (the formal derivative's: slot t gets up to log n of them),
  // A read and written once: sources B0..B5 = ptr[b], ptr[dist], ptr[b2], ptr[table],
  // ptr[table0], ptr[table1] (these steps multiply nothing; fft_xor_sources lists them).
  kFftStepXor2 = 11,    // A ^= B0 ^ B1
  kFftStepXor3 = 12,    // A ^= B0 ^ B1 ^ B2
  kFftStepXor4 = 13,    // A ^= B0 ^ .. ^ B3
  kFftStepXor5 = 14,    // A ^= B0 ^ .. ^ B4
  kFftStepXor6 = 15,    // A ^= B0 ^ .. ^ B5
  // Three layers on eight slots X_j = ptr[a + j dist] (codes::fft::Order::kRadix8):
  kFftStepFft8 = 16,   // FFT butterflies (X_j, X_j+4) by T, then (X0,X2) (X1,X3) by T0, (X4,X6)
                       // (X5,X7) by T1, then (X0,X1) by T2, (X2,X3) T3, (X4,X5) T4, (X6,X7) T5
  kFftStepIfft8 = 17,  // IFFT butterflies: the three groups of kFftStepFft8 in the reverse order
  // The decode core's formal derivative run inside the FFT's first pass (fold_derivative): on
  // the slots X_j = ptr[a + j dist] of a core of n = slots x dist work slots, a < dist, each X_j
  // first becomes its derivative D(X)_j = X_j ^ XOR of X at every slot index with one more bit
  // set (codes/rs_fft.h: formal_derivative, all sums of values before it): X_{j | 2^c} for the
  // bits c of j that are clear (read in registers), and ptr[a + 2^b + j dist] for the bits b of a
  // below dist that are clear (fft_derivative_groups: other groups of the pass, which must not
  // have run yet); then the butterflies of kFftStepFft4 / kFftStepFft8. No b, no into.
  kFftStepFft4D = 18,
  kFftStepFft8D = 19,
  // A decode core's ends folded into the transform steps beside them (fold_decode_ends): the
  // slots' multipliers M_j are the tables at ptr[b2] + (a + j dist) * kFftMulTableBytes (b2:
  // the pointer of a table array, one table per slot).
  // The IFFT steps of kFftStepIfft4 / Ifft8 on X_j = ptr[b + j dist] * M_j, or 0 where that
  // pointer is null (a point read nowhere); results stored to ptr[a + j dist]; into = 1 + p:
  // the same columns of ptr[p + j dist] asked for ahead (prefetch_shard_reads), 0: none:
  kFftStepIfft4In = 20,
  kFftStepIfft8In = 21,
  // The FFT steps of kFftStepFft4 / Fft8 on X_j = ptr[a + j dist]; then ptr[b + j dist] =
  // X_j * M_j where that pointer is not null; the slots are not written:
  kFftStepFft4Out = 22,
  kFftStepFft8Out = 23,
  // The decode core's IFFT last pass, formal derivative and FFT first pass as one pass
  // (fold_top_passes), where the two transforms group their top layers alike (the same slots,
  // the same twiddles): the X_j = ptr[a + j dist] become what kFftStepIfft4 / Ifft8 and then
  // kFftStepFft4D / Fft8D make of them, with the other groups read before their own step (the
  // derivative's sums across bits below dist commute with these layers' butterflies). The FFT
  // step undoes the IFFT step, so only the derivative's sums across the step's own bits are
  // left, each conjugated by the layers below it: across the lowest bit, X_j ^ X_{j^1}; across
  // a higher one, the other half's values moved over by the difference of the two halves'
  // twiddles, e(x, y) = (x + y) T taking (x, y) to (x + e, y + e), T = table (the sum of the FFT
  // step's table0 and table1 multipliers); the X_j themselves cancel in pairs of bits:
  //   kFftStepTop4D: Y_j = X_j ^ X_{j^1} ^ Q_{j^2}, Q: e on (X0,X1) and (X2,X3);
  //   kFftStepTop8D: t = X after the IFFT butterflies (X0,X1) by T2, (X2,X3) T3, (X4,X5) T4,
  //     (X6,X7) T5; q = t with e on (t_j, t_j+2), j = 0, 1, 4, 5; z_j = t_{j^2} ^ q_{j^4};
  //     r = z after the FFT butterflies (z0,z1) by T2 .. (z6,z7) by T5; Y_j = X_{j^1} ^ r_j
  // (two multiplies for two layers of four slots instead of eight; twelve for three layers of
  // eight instead of twenty-four); then X_j = Y_j ^ XOR of ptr[a + 2^b + j dist] over the
  // clear bits b of a, 2^b < dist (fft_derivative_groups). In place, in rising a; no into.
  // b: 0, or only one half of the slots written - 1: j below slots / 2, 2: the others - the
  // other half left as it was (a pruned core's, where nothing reads that half later: its
  // other groups not read, its multiplies not made).
  kFftStepTop4D = 24,
  kFftStepTop8D = 25,
};
constexpr unsigned kFftMaxXorSources = 6;
struct FftStep {
  uint32_t kind;
  uint32_t a;
  uint32_t b;
  uint32_t table;
  uint32_t dist = 0;    // kFftStepFft4 / kFftStepIfft4; kFftStepMul3 / MulAdd3 / XorN: B1's pointer
  uint32_t table0 = 0;
  uint32_t table1 = 0;
  uint32_t b2 = 0;      // kFftStepMul3 / MulAdd3 / XorN (N >= 3): B2's pointer
  // kFftStepFft8 / Ifft8: the multipliers of the lowest layer's four blocks (T2 .. T5).
  uint32_t table2 = 0, table3 = 0, table4 = 0, table5 = 0;
  // Two- and three-layer kinds: 0, or 1 + the first of the slots the results are XORed into
  // (ptr[into - 1 + j dist] ^= X_j; ptr[a + j dist] keep their inputs), an IFFT's XOR into an
  // accumulator folded into it (fold_xor_into).
  uint32_t into = 0;
};

// The sources of an XOR step (kFftStepXor, Xor2 .. Xor6) in order; 0 for other kinds.
unsigned fft_xor_sources(const FftStep &step, uint32_t out[kFftMaxXorSources]);

// The butterflies of a two- or three-layer step (kFftStepFft4 / Ifft4 / Fft8 / Ifft8) in the
// order they run: slots a + u dist and a + v dist, multiplied by the step's multiplier
// `multiplier` (0: table, 1: table0, 2: table1, 3 .. 6: table2 .. table5; see
// fft_step_multiplier). The one definition the kernel, the pruner and the tests' interpreter
// share. Returns the count (4, 12; 0 for other kinds).
// The slots of a two- or three-layer step, ptr[a + j dist] for j below it: 4 (Fft4 / Ifft4 and
// their D, In, Out kinds, Top4D), 8 (the eight-slot kinds); 0 for other kinds. It has slots / 2
// butterflies in each of log2(slots) layers and slots - 1 multipliers (Top4D / Top8D: none
// of fft_step_butterflies' and the multipliers of their own formula).
unsigned fft_step_slots(uint32_t kind);
// Whether a two- or three-layer kind runs IFFT butterflies (Ifft4 / Ifft8 and their In kinds).
bool fft_step_inverse(uint32_t kind);
struct FftStepButterfly {
  uint8_t u, v, multiplier;
};
unsigned fft_step_butterflies(uint32_t kind, FftStepButterfly out[12]);
uint32_t fft_step_multiplier(const FftStep &step, unsigned multiplier);
uint32_t &fft_step_multiplier(FftStep &step, unsigned multiplier);

// Whether a kind reads other groups besides its slots (kFftStepFft4D / Fft8D / Top4D / Top8D).
bool fft_step_reads_groups(uint32_t kind);
// Whether a Top step (kFftStepTop4D / Top8D) writes its slot j (its b: every slot, or a half).
bool fft_top_writes(const FftStep &step, unsigned j);
// The first slots of the other groups a derivative-fused step (kFftStepFft4D .. Top8D) reads:
// a + 2^b for each bit b of a that is clear, 2^b < dist, rising (at most 14: dist <= 2^14).
// Their slots are those plus j dist, j below the step's slot count. 0 for other kinds.
constexpr unsigned kFftMaxDerivativeGroups = 14;
unsigned fft_derivative_groups(const FftStep &step, uint32_t out[kFftMaxDerivativeGroups]);

// The multiplies of `steps` that read a shard (kFftStepMul with b >= first_shard, the pointer
// layout's first shard) ask for the shard the `ahead`-th such step after them reads (their
// dist), in the order they run (ahead 1 .. 8); the last `ahead` ask for nothing. Likewise each
// folded IFFT step (kFftStepIfft4In / Ifft8In) asks for the shards the `ahead`-th In step after
// it reads (its into: 1 + that step's b) where that one is of its kind and distance. A decode's first multiplies
// read 1 KiB of each shard, a new stream each, from L3 or memory: asked for two steps ahead,
// Emerald Rapids decodes 1024:1024 +2% at 4 KiB and +5% at 64 KiB, 128:128 +0.5-1.5%, against
// no prefetch there (and the next tile's, which only paid where the core fits L2: 1024:1024 at 4
// KiB -3%, at 64 KiB +2%).
constexpr unsigned kFftShardPrefetchAhead = 2;
void prefetch_shard_reads(std::vector<FftStep> &steps, uint32_t first_shard, unsigned ahead = kFftShardPrefetchAhead);

// The steps not marked in `drop` (one flag per step), in order; in place.
void erase_marked_steps(std::vector<FftStep> &steps, const std::vector<bool> &drop);

// Runs of consecutive kFftStepXor steps into one slot (from other slots) become kFftStepXor2
// .. Xor6 steps, as few as take the run, of near-equal sizes (so no single XOR is left beside
// them): the same values with the slot loaded and stored once per step instead of once per
// source. In place; other steps unchanged.
void fuse_xor_steps(std::vector<FftStep> &steps);

// The kinds a step kernel runs: all of them, or the transforms' alone - every kind but the
// decode core's fused ones (kFftStepFft4D .. Top8D: the derivative in the FFT's first pass, the
// folded ends, the Top passes) - which is what encodes, matrix decodes and the inverted
// encoder's decodes run: about half the code of the whole kernel, compiled in about half the
// time, so a codec's encoder waits for no decode's kinds (runtime/fft_engine.h).
enum class FftStepKinds : uint8_t { kAll, kTransforms };
// Whether a step of `kind` needs a kernel of FftStepKinds::kAll.
bool fft_step_kind_is_core_only(uint32_t kind);
// Whether a kernel of FftStepKinds::kTransforms runs every one of `steps`.
bool fft_steps_are_transforms(const std::vector<FftStep> &steps);

// Constant multiplies a schedule performs per element (a two-layer step: four; three-layer:
// twelve; XORs, copies and zeros: none), to choose between the transforms and a matrix.
size_t fft_multiplies(const std::vector<FftStep> &steps);

}  // namespace ecjit::sched
