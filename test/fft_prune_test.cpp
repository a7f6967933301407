// prune_fft_steps against the unpruned schedule, run by a scalar interpreter of the step kinds.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "codes/rs_fft.h"
#include "fft/mul_tables.h"
#include "fft/prune.h"
#include "fft/schedule.h"
#include "fft_step_interpreter.h"

namespace ecjit {
namespace {

namespace fft = codes::fft;
using sched::FftStep;

using test::fft_run_steps;

// A decode as FftEngine runs it: pre (point x = shard x times a multiplier, or zero), the
// code's decode core, post (targets times a multiplier); pointers [0, n) work, [n, 2n) shards.
struct Decode {
  std::vector<FftStep> pre, post;
  std::vector<uint8_t> ends;  // pre/post multipliers: 2n tables
  std::vector<bool> live;
};

Decode decode_of(uint32_t n, const std::vector<bool> &holds, const std::vector<uint32_t> &targets, std::mt19937_64 &rng) {
  Decode d;
  d.ends.resize(2 * size_t(n) * sched::kFftMulTableBytes);
  for (uint32_t i = 0; i < 2 * n; ++i) sched::fft_mul_tables(uint16_t(rng() % fft::kModulus), &d.ends[i * sched::kFftMulTableBytes]);
  for (uint32_t x = 0; x < n; ++x)
    d.pre.push_back(holds[x] ? FftStep{sched::kFftStepMul, x, n + x, x} : FftStep{sched::kFftStepZero, x, 0, 0});
  d.live.assign(2 * size_t(n), false);
  for (uint32_t x : targets) {
    d.post.push_back({sched::kFftStepMul, x, x, n + x});
    d.live[x] = true;
  }
  return d;
}

size_t multiplies(const std::vector<FftStep> &steps) { return sched::fft_multiplies(steps); }

// Random erasure-like patterns (points held, points wanted) on the decode cores of several
// codes, and the encode schedules too: the pruned steps give every live pointer the value the
// whole schedule gives it, from the same starting memory, and never do more work.
TEST(FftPrune, SameLiveValuesAsTheWholeSchedule) {
  std::mt19937_64 rng(0x9a17);
  for (bool radix8 : {false, true})
  for (auto [k, m] : {std::pair{5u, 3u}, std::pair{32u, 32u}, std::pair{6u, 20u}, std::pair{50u, 3u},
                      std::pair{100u, 28u}, std::pair{3u, 1u}}) {
    auto core = sched::fft_decode_core(k, m, radix8);
    ASSERT_TRUE(core.ok()) << core.status().message();
    const uint32_t n = core->slots;
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<bool> holds(n);
      const unsigned density = unsigned(rng() % 5);  // 0: almost nothing held .. 4: almost all
      for (uint32_t x = 0; x < n; ++x) holds[x] = rng() % 5 < density + (trial == 0 ? 0 : 1);
      std::vector<uint32_t> targets;
      for (uint32_t x = 0; x < n; ++x)
        if (!holds[x] && rng() % 3 != 0) targets.push_back(x);
      if (targets.empty()) targets.push_back(uint32_t(rng() % n));
      const Decode d = decode_of(n, holds, targets, rng);
      const auto pruned = sched::prune_fft_steps({&d.pre, &core->steps, &d.post}, 2 * size_t(n), d.live);
      ASSERT_EQ(pruned.size(), 3u);
      // Again: the split-or-whole choices the first pruning kept give the steps it made.
      const auto again = sched::prune_fft_steps({&d.pre, &core->steps, &d.post}, 2 * size_t(n), d.live);
      for (size_t l = 0; l < 3; ++l) {
        ASSERT_EQ(again[l].size(), pruned[l].size()) << k << ":" << m << " trial " << trial;
        if (!pruned[l].empty())  // (an empty list's data() may be null)
          EXPECT_EQ(0, std::memcmp(again[l].data(), pruned[l].data(), pruned[l].size() * sizeof(FftStep)))
              << k << ":" << m << " trial " << trial;
      }
      std::vector<uint16_t> start(2 * size_t(n));
      for (auto &e : start) e = uint16_t(rng());
      std::vector<uint16_t> whole = start, cut = start;
      fft_run_steps(d.pre, d.ends, whole);
      fft_run_steps(core->steps, core->tables, whole);
      fft_run_steps(d.post, d.ends, whole);
      fft_run_steps(pruned[0], d.ends, cut);
      fft_run_steps(pruned[1], core->tables, cut);
      fft_run_steps(pruned[2], d.ends, cut);
      for (uint32_t x : targets) ASSERT_EQ(cut[x], whole[x]) << k << ":" << m << " trial " << trial << " point " << x;
      for (uint32_t p = n; p < 2 * n; ++p) ASSERT_EQ(cut[p], start[p]) << "a shard pointer was written";
      EXPECT_LE(multiplies(pruned[1]), multiplies(core->steps));
    }
    // The encode schedule with every output live and nothing known zero: all of it stays.
    auto enc = sched::fft_encode_schedule(k, m, true, radix8);
    ASSERT_TRUE(enc.ok());
    std::vector<bool> live(enc->slots + k + m, false);
    for (uint32_t x = 0; x < enc->slots; ++x) live[x] = enc->slot_shard[x] >= 0;
    const auto same = sched::prune_fft_steps({&enc->steps}, live.size(), live);
    std::vector<uint16_t> a(live.size()), b;
    for (auto &e : a) e = uint16_t(rng());
    b = a;
    fft_run_steps(enc->steps, enc->tables, a);
    fft_run_steps(same[0], enc->tables, b);
    for (uint32_t x = 0; x < enc->slots; ++x)
      if (live[x]) ASSERT_EQ(a[x], b[x]) << "encode " << k << ":" << m << " slot " << x;
  }
}

// The case the benchmarks measure: every original of 32:32 lost, read from the recovery
// shards. Half the IFFT's inputs are zero and half the FFT's outputs unused: the pruned core
// does at most two thirds of the whole core's multiplies.
TEST(FftPrune, LosingEveryOriginalHalvesMostOfTheTransforms) {
  const unsigned k = 32, m = 32;
  auto core = sched::fft_decode_core(k, m);
  ASSERT_TRUE(core.ok());
  const fft::Geometry g = *fft::geometry(k, m);
  const uint32_t n = core->slots;
  std::vector<bool> holds(n, false);
  std::vector<uint32_t> targets;
  for (unsigned j = 0; j < m; ++j) holds[g.recovery_pos + j] = true;
  for (unsigned i = 0; i < k; ++i) targets.push_back(uint32_t(g.original_pos + i));
  std::mt19937_64 rng(1);
  const Decode d = decode_of(n, holds, targets, rng);
  const auto pruned = sched::prune_fft_steps({&d.pre, &core->steps, &d.post}, 2 * size_t(n), d.live);
  const size_t whole = multiplies(core->steps), cut = multiplies(pruned[1]);
  RecordProperty("multiplies", std::to_string(cut) + " of " + std::to_string(whole));
  EXPECT_LE(cut * 3, whole * 2) << cut << " of " << whole;
  EXPECT_EQ(pruned[0].size(), size_t(m)) << "zero points are not stored";
}

// fft_block_butterflies counts the butterflies over whole aligned blocks of eight points or
// more: every butterfly of a transform wholly in the set, none of a run not aligned to eight.
TEST(FftPrune, BlockButterfliesCountWholeAlignedBlocks) {
  EXPECT_EQ(sched::fft_block_butterflies(std::vector<bool>(16, true)), 16u / 2 * 4);
  EXPECT_EQ(sched::fft_block_butterflies(std::vector<bool>(256, true)), 256u / 2 * 8);
  EXPECT_EQ(sched::fft_block_butterflies(std::vector<bool>(256, false)), 0u);
  std::vector<bool> v(256, false);
  for (size_t x = 64; x < 128; ++x) v[x] = true;  // one aligned block of 64: its six layers
  EXPECT_EQ(sched::fft_block_butterflies(v), 64u / 2 * 6);
  std::vector<bool> shifted(256, false);
  for (size_t x = 4; x < 12; ++x) shifted[x] = true;  // eight points across two blocks
  EXPECT_EQ(sched::fft_block_butterflies(shifted), 0u);
  std::vector<bool> alternate(256);
  for (size_t x = 0; x < 256; ++x) alternate[x] = x % 2 == 0;  // scattered: no block at all
  EXPECT_EQ(sched::fft_block_butterflies(alternate), 0u);
}

// A scattered erasure set leaves two-layer steps with one or two zero inputs: kept whole on
// their zeros stored (one store each), not split into butterflies that copy and multiply-add
// the missing halves (more loads and stores); with three zeros the butterflies can cost less;
// with four the step vanishes. Values as the whole schedule's for all 16 patterns.
TEST(FftPrune, PartlyZeroTwoLayerStepsStayWhole) {
  std::mt19937_64 rng(0x5ca7);
  const uint32_t n = 4;
  // Pointers 0..3 work, 4..7 shards; one Ifft4 on slots 0..3 (dist 1).
  std::vector<uint8_t> tables(3 * sched::kFftMulTableBytes);
  for (uint32_t t = 0; t < 3; ++t) sched::fft_mul_tables(uint16_t(1 + rng() % 1000), &tables[t * sched::kFftMulTableBytes]);
  FftStep ifft4{sched::kFftStepIfft4, 0, 0, 0};
  ifft4.dist = 1;
  ifft4.table0 = 1;
  ifft4.table1 = 2;
  const std::vector<FftStep> core = {ifft4};
  for (unsigned held = 0; held < 16; ++held) {
    std::vector<FftStep> pre;
    for (uint32_t x = 0; x < n; ++x)
      pre.push_back(held >> x & 1 ? FftStep{sched::kFftStepCopy, x, n + x, 0} : FftStep{sched::kFftStepZero, x, 0, 0});
    std::vector<bool> work_live(2 * n, false);
    for (uint32_t x = 0; x < n; ++x) work_live[x] = true;
    const auto pruned = sched::prune_fft_steps({&pre, &core}, 2 * size_t(n), work_live);
    const auto kind_count = [&](uint32_t kind) {
      size_t c = 0;
      for (const auto &seg : pruned)
        for (const FftStep &st : seg) c += st.kind == kind;
      return c;
    };
    const unsigned zeros = 4 - unsigned(__builtin_popcount(held));
    // One zero, or two but x0 and x1: split, 15.5-20 loads and stores against 11-12. With x0
    // and x1 zero (held 12) the first layer drops a butterfly whole and the others are one
    // multiply each: split, 9.5 against 12.
    if (zeros == 1 || held == 0b0101 || held == 0b1010 || held == 0b0011 || held == 0b1001 || held == 0b0110) {
      EXPECT_EQ(kind_count(sched::kFftStepIfft4), 1u) << "held " << held;
      EXPECT_EQ(kind_count(sched::kFftStepZero), zeros) << "held " << held;
      EXPECT_EQ(kind_count(sched::kFftStepIfft) + kind_count(sched::kFftStepMulAdd), 0u) << "held " << held;
    }
    if (zeros == 4) EXPECT_EQ(kind_count(sched::kFftStepIfft4), 0u);
    std::vector<uint16_t> start(2 * n);
    for (auto &e : start) e = uint16_t(rng());
    std::vector<uint16_t> whole = start, cut = start;
    fft_run_steps(pre, tables, whole);
    fft_run_steps(core, tables, whole);
    fft_run_steps(pruned[0], tables, cut);
    fft_run_steps(pruned[1], tables, cut);
    for (uint32_t x = 0; x < n; ++x) EXPECT_EQ(cut[x], whole[x]) << "held " << held << " slot " << x;
  }
}

}  // namespace
}  // namespace ecjit
