// fold_decode_ends against the unfolded decode, run by the scalar interpreter of the step kinds.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "codes/rs_fft.h"
#include "fft/ends.h"
#include "fft/mul_tables.h"
#include "fft/prune.h"
#include "fft/schedule.h"
#include "fft_step_interpreter.h"

namespace ecjit {
namespace {

namespace fft = codes::fft;
using sched::FftStep;

// A decode on FftEngine's pointers: [0, n) work slots, [n, 2n) the shards read, [2n, 3n) the
// shards restored, 3n and 3n + 1 the table arrays; the interpreter's tables are the core's,
// then the ends' 2n (pre's, then post's).
struct Decode {
  uint32_t n = 0;
  std::vector<bool> holds, live;  // per point
  std::vector<FftStep> pre, post;
  std::vector<uint8_t> tables;    // the core's, then 2n of the ends
  uint32_t ends = 0;              // the first end table's index in tables
};

Decode decode_of(const sched::FftSchedule &core, std::mt19937_64 &rng, bool every_point = false) {
  Decode d;
  const uint32_t n = d.n = core.slots;
  d.holds.resize(n);
  d.live.resize(n);
  const unsigned density = unsigned(rng() % 5);
  for (uint32_t x = 0; x < n; ++x) {
    d.holds[x] = rng() % 6 < density + 1;
    d.live[x] = !d.holds[x] && rng() % 3 != 0;
  }
  d.tables = core.tables;
  d.ends = uint32_t(core.tables.size() / sched::kFftMulTableBytes);
  d.tables.resize(d.tables.size() + 2 * size_t(n) * sched::kFftMulTableBytes);
  for (uint32_t i = 0; i < 2 * n; ++i)
    sched::fft_mul_tables(uint16_t(rng() % fft::kModulus), &d.tables[(d.ends + i) * sched::kFftMulTableBytes]);
  for (uint32_t x = 0; x < n; ++x)
    d.pre.push_back(d.holds[x] || every_point ? FftStep{sched::kFftStepMul, x, n + x, x} : FftStep{sched::kFftStepZero, x, 0, 0});
  for (uint32_t x = 0; x < n; ++x)
    if (d.live[x] || every_point) d.post.push_back({sched::kFftStepMul, 2 * n + x, x, n + x});
  return d;
}

// The end lists' tables index the ends' arrays: the interpreter's are behind the core's.
std::vector<FftStep> shifted(std::vector<FftStep> steps, uint32_t by) {
  for (FftStep &s : steps)
    if (s.kind == sched::kFftStepMul) s.table += by;
  return steps;
}

// Runs pre, core, post as FftEngine would on one element per pointer; the restored points'
// values. Pointers of points not read, or not restored, are null (absent).
std::vector<uint16_t> run(const Decode &d, const std::vector<FftStep> &pre, const std::vector<FftStep> &core,
                          const std::vector<FftStep> &post, const std::vector<uint16_t> &start) {
  const uint32_t n = d.n;
  std::vector<uint16_t> v = start;
  v[3 * n] = uint16_t(d.ends);
  v[3 * n + 1] = uint16_t(d.ends + n);
  const auto absent = [&](uint32_t p) {
    return (p >= n && p < 2 * n && !d.holds[p - n]) || (p >= 2 * n && p < 3 * n && !d.live[p - 2 * n]);
  };
  test::fft_run_steps(shifted(pre, d.ends), d.tables, v, absent);
  test::fft_run_steps(core, d.tables, v, absent);
  test::fft_run_steps(shifted(post, d.ends), d.tables, v, absent);
  std::vector<uint16_t> out;
  for (uint32_t x = 0; x < n; ++x)
    if (d.live[x]) out.push_back(v[2 * n + x]);
  return out;
}

size_t count_kinds(const std::vector<FftStep> &steps, uint32_t lo, uint32_t hi) {
  size_t c = 0;
  for (const FftStep &s : steps) c += s.kind >= lo && s.kind <= hi;
  return c;
}

// Random erasure-like sets on the decode cores of several codes, two- and three-layer steps:
// the ends folded into the whole core, into the pruned core, and (as FftEngine does) into
// the whole core once with every point listed, the points left unfolded given steps per set:
// every restored shard as the unfolded lists have it.
TEST(FftEnds, FoldedEndsRestoreWhatTheUnfoldedDo) {
  std::mt19937_64 rng(0xe4d5);
  for (bool radix8 : {false, true})
    for (auto [k, m] : {std::pair{5u, 3u}, std::pair{32u, 32u}, std::pair{6u, 20u}, std::pair{50u, 3u},
                        std::pair{100u, 28u}, std::pair{3u, 1u}, std::pair{128u, 128u}}) {
      auto core = sched::fft_decode_core(k, m, radix8);
      ASSERT_TRUE(core.ok()) << core.status().message();
      const uint32_t n = core->slots;
      // Once for every point (the engine's whole core).
      Decode all = decode_of(*core, rng, true);
      std::vector<FftStep> all_pre = all.pre, all_core = core->steps, all_post = all.post;
      sched::fold_decode_ends(&all_pre, &all_core, &all_post, n, 3 * n, 3 * n + 1);
      if (k == m) {  // a core not truncated: the IFFT's first pass and the FFT's last are whole steps
        EXPECT_TRUE(all_pre.empty()) << k << ":" << m;
        EXPECT_TRUE(all_post.empty()) << k << ":" << m;
        EXPECT_EQ(count_kinds(all_core, sched::kFftStepIfft4In, sched::kFftStepIfft8In) * (radix8 ? 8 : 4), n);
      }
      EXPECT_EQ(all_core.size(), core->steps.size());
      for (int trial = 0; trial < 30; ++trial) {
        const Decode d = decode_of(*core, rng);
        std::vector<uint16_t> start(3 * size_t(n) + 2);
        for (auto &e : start) e = uint16_t(rng());
        const std::vector<uint16_t> want = run(d, d.pre, core->steps, d.post, start);
        // Folded into the whole core.
        std::vector<FftStep> pre = d.pre, steps = core->steps, post = d.post;
        sched::fold_decode_ends(&pre, &steps, &post, n, 3 * n, 3 * n + 1);
        ASSERT_EQ(run(d, pre, steps, post, start), want) << k << ":" << m << " trial " << trial << " whole";
        // Pruned, then folded.
        std::vector<bool> live(3 * size_t(n), false);
        for (uint32_t x = 0; x < n; ++x) live[2 * n + x] = d.live[x];
        auto p = sched::prune_fft_steps({&d.pre, &core->steps, &d.post}, 3 * size_t(n), live);
        ASSERT_EQ(run(d, p[0], p[1], p[2], start), want) << k << ":" << m << " trial " << trial << " pruned";
        sched::fold_decode_ends(&p[0], &p[1], &p[2], n, 3 * n, 3 * n + 1);
        ASSERT_EQ(run(d, p[0], p[1], p[2], start), want) << k << ":" << m << " trial " << trial << " pruned, folded";
        // The core folded for every point, the set's steps for the points left.
        std::vector<FftStep> left_pre, left_post;
        for (const FftStep &s : all_pre) left_pre.push_back(d.holds[s.a] ? s : FftStep{sched::kFftStepZero, s.a, 0, 0});
        for (const FftStep &s : all_post)
          if (d.live[s.b]) left_post.push_back(s);
        ASSERT_EQ(run(d, left_pre, all_core, left_post, start), want) << k << ":" << m << " trial " << trial << " shared";
      }
    }
}

// The folded IFFT steps of a core past L2 ask for the shards of the In step two after them
// (prefetch_shard_reads: its into, 1 + that step's b), the last two for nothing; the values
// are unchanged (the interpreter ignores the request, FftSteps.FoldedEndsMatchTheInterpreter
// runs it on the kernel).
TEST(FftEnds, InStepsAskForTheShardsOfTheSecondNext) {
  for (bool radix8 : {false, true}) {
    auto core = sched::fft_decode_core(64, 64, radix8);
    ASSERT_TRUE(core.ok());
    const uint32_t n = core->slots;
    std::vector<FftStep> pre, steps = core->steps, post;
    for (uint32_t x = 0; x < n; ++x) {
      pre.push_back({sched::kFftStepMul, x, n + x, x});
      post.push_back({sched::kFftStepMul, 2 * n + x, x, n + x});
    }
    sched::fold_decode_ends(&pre, &steps, &post, n, 3 * n, 3 * n + 1);
    sched::prefetch_shard_reads(steps, n);
    std::vector<const FftStep *> in;
    for (const FftStep &s : steps)
      if (s.kind == sched::kFftStepIfft4In || s.kind == sched::kFftStepIfft8In) in.push_back(&s);
    ASSERT_EQ(in.size() * (radix8 ? 8 : 4), n);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(in[i]->into, i + 2 < in.size() ? 1 + in[i + 2]->b : 0u) << "In step " << i;
  }
}

}  // namespace
}  // namespace ecjit
