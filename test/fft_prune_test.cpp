// prune_fft_steps against the unpruned schedule, run by a scalar interpreter of the step kinds.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "codes/rs_fft.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/fft_prune.h"
#include "ir_builders/fft_step_kernel.h"
#include "fft_step_interpreter.h"

namespace ecjit {
namespace {

namespace fft = codes::fft;
using ir::FftStep;

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
  d.ends.resize(2 * size_t(n) * ir::kFftMulTableBytes);
  for (uint32_t i = 0; i < 2 * n; ++i) ir::fft_mul_tables(uint16_t(rng() % fft::kModulus), &d.ends[i * ir::kFftMulTableBytes]);
  for (uint32_t x = 0; x < n; ++x)
    d.pre.push_back(holds[x] ? FftStep{ir::kFftStepMul, x, n + x, x} : FftStep{ir::kFftStepZero, x, 0, 0});
  d.live.assign(2 * size_t(n), false);
  for (uint32_t x : targets) {
    d.post.push_back({ir::kFftStepMul, x, x, n + x});
    d.live[x] = true;
  }
  return d;
}

size_t multiplies(const std::vector<FftStep> &steps) { return ir::fft_multiplies(steps); }

// Random erasure-like patterns (points held, points wanted) on the decode cores of several
// codes, and the encode schedules too: the pruned steps give every live pointer the value the
// whole schedule gives it, from the same starting memory, and never do more work.
TEST(FftPrune, SameLiveValuesAsTheWholeSchedule) {
  std::mt19937_64 rng(0x9a17);
  for (auto [k, m] : {std::pair{5u, 3u}, std::pair{32u, 32u}, std::pair{6u, 20u}, std::pair{50u, 3u},
                      std::pair{100u, 28u}, std::pair{3u, 1u}}) {
    auto core = ir::fft_decode_core(k, m);
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
      const auto pruned = ir::prune_fft_steps({&d.pre, &core->steps, &d.post}, 2 * size_t(n), d.live);
      ASSERT_EQ(pruned.size(), 3u);
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
    auto enc = ir::fft_encode_schedule(k, m);
    ASSERT_TRUE(enc.ok());
    std::vector<bool> live(enc->slots + k + m, false);
    for (uint32_t x = 0; x < enc->slots; ++x) live[x] = enc->slot_shard[x] >= 0;
    const auto same = ir::prune_fft_steps({&enc->steps}, live.size(), live);
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
  auto core = ir::fft_decode_core(k, m);
  ASSERT_TRUE(core.ok());
  const fft::Geometry g = *fft::geometry(k, m);
  const uint32_t n = core->slots;
  std::vector<bool> holds(n, false);
  std::vector<uint32_t> targets;
  for (unsigned j = 0; j < m; ++j) holds[g.recovery_pos + j] = true;
  for (unsigned i = 0; i < k; ++i) targets.push_back(uint32_t(g.original_pos + i));
  std::mt19937_64 rng(1);
  const Decode d = decode_of(n, holds, targets, rng);
  const auto pruned = ir::prune_fft_steps({&d.pre, &core->steps, &d.post}, 2 * size_t(n), d.live);
  const size_t whole = multiplies(core->steps), cut = multiplies(pruned[1]);
  RecordProperty("multiplies", std::to_string(cut) + " of " + std::to_string(whole));
  EXPECT_LE(cut * 3, whole * 2) << cut << " of " << whole;
  EXPECT_EQ(pruned[0].size(), size_t(m)) << "zero points are not stored";
}

}  // namespace
}  // namespace ecjit
