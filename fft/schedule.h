// rs-fft schedules (no LLVM): the encode, decode-core, per-pattern and matrix-decode schedules of a
// code, written from the transform programs (codes/rs_fft_program.h) in the step instruction set
// (fft/step.h) with their multipliers' tables (fft/mul_tables.h), and folded by the passes here,
// fft/prune.h, fft/order.h and fft/ends.h before a step kernel (ir_builders/fft_step_kernel.h)
// runs them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "codes/rs_fft_field.h"
#include "ecjit/status.h"
#include "fft/step.h"

namespace ecjit::sched {

// A schedule for one operation of one code, and where its pointers point. Pointer p < slots
// is work slot p: the tile of output shard slot_shard[p] when that is >= 0, else a scratch
// tile; pointer slots + s is the tile of shard s (originals 0 .. k-1, recovery k .. k+m-1),
// read only. The steps never read a work slot before writing it.
struct FftSchedule {
  codes::fft::Gf gf = codes::fft::Gf::k16;  // the field of its multipliers (and its step kernel's)
  std::vector<FftStep> steps;
  std::vector<uint8_t> tables;       // multipliers, kFftMulTableBytes each
  // Per table, the log of its multiplier (codes::fft; kZeroTable: the zero table): lets a
  // schedule of the same twiddles index these tables instead of its own.
  std::vector<uint32_t> table_logs;
  static constexpr uint32_t kZeroTable = 0x10000;
  uint32_t slots = 0;
  std::vector<int32_t> slot_shard;   // per work slot: the output shard it is, or -1 (scratch)
  uint32_t scratch_slots() const;    // work slots with slot_shard -1
};

// Encode of rs-fft (k, m) (codes/rs_fft.h): reads originals, writes the m recovery shards.
// Errors: kInvalidSpec (codes::fft::geometry).
// fused: butterflies in codes::fft::Order::kRadix4 (kRadix8 with radix8) and fused in fours
// (two-layer steps; twelves: three-layer steps); false: one step per butterfly (layer by
// layer), for comparison.
Result<FftSchedule> fft_encode_schedule(unsigned k, unsigned m, bool fused = true, bool radix8 = false,
                                        codes::fft::Gf gf = codes::fft::Gf::k16);

// The part of every decode of (k, m) that no erasure pattern changes: the IFFT, the formal
// derivative and the FFT on the decode_work points (work slots 0 .. n-1, all scratch). Where
// the FFT's first pass is whole steps over every slot and at most n / 8 points lie past
// decode_end, the derivative runs inside them: with the IFFT's last pass where both transforms
// can group their layers alike (kFftStepTop4D / Top8D), else alone (kFftStepFft4D / Fft8D);
// otherwise as XOR steps. A
// decode is: point x = its shard times exp(logs[x]) where a shard is read, else 0; these
// steps; a restored shard = point x times exp(kModulus - logs[x]) (codes::fft::locator_logs).
// Errors: kInvalidSpec.
Result<FftSchedule> fft_decode_core(unsigned k, unsigned m, bool radix8 = false,
                                    codes::fft::Gf gf = codes::fft::Gf::k16);

// Decode of one erasure pattern (present: k + m entries): writes every shard s with
// wanted[s] (k + m entries; each must be missing). Errors: kInvalidSpec, kShardCount,
// kTooManyErasures (codes::fft::locator_logs), kInvalidArgument (a wanted shard present).
Result<FftSchedule> fft_decode_schedule(unsigned k, unsigned m, const std::vector<bool> &present,
                                        const std::vector<bool> &wanted, bool radix8 = false,
                                        codes::fft::Gf gf = codes::fft::Gf::k16);

// The decode of `targets` from `sources` by the encoder's transforms inverted
// (codes::fft::inverse_decode_program, two-layer steps) on the pointers of
// fft_encode_schedule (work slots, then shard s at slots + s; a target's slot is its shard's
// tile); nullopt where the shards read do not allow it. Its twiddles are the encoder's:
// with `encoder` (fft_encode_schedule(k, m)) the steps index encoder.tables and the schedule
// has no tables of its own (an erasure set's entry is its steps alone); nullopt as well if
// a twiddle were missing there.
std::optional<FftSchedule> fft_inverse_decode_schedule(unsigned k, unsigned m, const std::vector<unsigned> &sources,
                                                       const std::vector<unsigned> &targets,
                                                       const FftSchedule *encoder = nullptr, bool radix8 = false,
                                                       codes::fft::Gf gf = codes::fft::Gf::k16);

// A decode as a matrix (codes::fft::decode_matrix: coeffs[t * sources + i], elements of the
// crate's field): work slot t is target t (slot_shard), pointer slots + s shard s; per
// target the sources three to a step (kFftStepMul3, then kFftStepMulAdd3; one or two left
// over as kFftStepMul / MulAdd).
FftSchedule fft_matrix_schedule(const std::vector<uint16_t> &coeffs, const std::vector<unsigned> &sources,
                                const std::vector<unsigned> &targets, codes::fft::Gf gf = codes::fft::Gf::k16);

}  // namespace ecjit::sched
