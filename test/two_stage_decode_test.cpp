// Reconstruct end to end through two-stage decoders (codes/decode_schedule.h): every field,
// strategy and host tier, compared with the original shards, against guard pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "guarded_buffer.h"
#include "ir_builders/strategy.h"
#include "jit/tuner.h"
#include "jit_test_util.h"
#include "strategy_cases.h"

namespace ecjit {
namespace {

using codes::LinearCode;
using test::GuardedBuffer;

// RS(10,4) codes per field whose decoders are factored for most erasure sets: an all-ones
// first parity row makes stage 1 cheaper (ISA-L's RS matrix, Jerasure's Vandermonde; over
// GF(2^64) the same shape as a matrix code, rows 2^(i j), MDS by `ecjit check-mds`).
// This library's rs-vand and the Cauchy codes have dense parity matrices: their two-stage
// form ties with the direct one in products and is planned only when it has fewer set bits
// (clmul-shift's cost), e.g. for rs-vand; run here too, whichever form the plan takes.
std::string factored_code(unsigned l) {
  switch (l) {
    case 8: return "isal-rs:k=10,m=4";
    case 16: return "jerasure-vand:k=10,m=4,gf=16";
    case 32: return "jerasure-vand:k=10,m=4,gf=32";
    default:
      return "matrix:k=10,m=4,gf=64,a=1.1.1.1.1.1.1.1.1.1/1.2.4.8.10.20.40.80.100.200/"
             "1.4.10.40.100.400.1000.4000.10000.40000/"
             "1.8.40.200.1000.8000.40000.200000.1000000.8000000";
  }
}


std::shared_ptr<Jit> make_jit(const std::string &target, const std::string &strategy,
                              unsigned opt) {
  JitOptions o;
  o.target = target;
  o.strategy = strategy;
  o.opt_level = opt;
  o.disk_cache = false;  // every decoder is a real compile
  o.tune = false;
  o.shape_kernels = false;  // each set's own (two-stage) decoder from its first call
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << target << " " << strategy << ": " << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

std::string mask_str(uint32_t mask, unsigned n) {
  std::string s = "{";
  for (unsigned i = 0; i < n; ++i)
    if ((mask >> i) & 1) s += std::to_string(i) + ",";
  return s + "}";
}

// Erasure sets of (10,4) by mask, `lost` shards at most.
std::vector<uint32_t> all_sets(unsigned n, unsigned lost) {
  std::vector<uint32_t> out;
  for (uint32_t mask = 1; mask < (1u << n); ++mask)
    if (unsigned(__builtin_popcount(mask)) <= lost) out.push_back(mask);
  return out;
}

// A fixed choice of (10,4) sets: 1..4 lost data shards, alone and with lost parity (with and
// without the all-ones parity shard 10 among the read ones), and parity alone.
std::vector<uint32_t> sample_sets() {
  const std::vector<std::vector<unsigned>> sets = {
      {0},          {3, 7},        {0, 1, 2, 3}, {2, 5, 8, 9}, {6, 7, 8, 9}, {0, 10},
      {1, 11},      {0, 1, 12},    {4, 10, 13},  {0, 5, 11, 12}, {1, 2, 3, 13}, {1, 2, 3, 10},
      {9, 11, 12, 13}, {11, 13},   {10, 11, 12, 13}};
  std::vector<uint32_t> out;
  for (const auto &s : sets) {
    uint32_t mask = 0;
    for (unsigned i : s) mask |= 1u << i;
    out.push_back(mask);
  }
  return out;
}

// Reconstructs `spec` for each erasure set through `jit` (and reconstruct_data on every
// data_every-th set) into guarded shards and compares with a stripe from ref_encode.
// Returns how many of the sets the planner factors (codes::plan_reconstruct).
size_t check_sets(Jit &jit, const std::string &spec, const std::vector<uint32_t> &masks,
                  const std::vector<size_t> &lens, unsigned data_every, const std::string &what) {
  auto code = codes::build_code(spec);
  EXPECT_TRUE(code.ok()) << spec;
  if (!code.ok()) return 0;
  auto codec = jit.codec(spec);
  EXPECT_TRUE(codec.ok()) << what << " " << spec << ": " << codec.status().to_string();
  if (!codec.ok()) return 0;
  const unsigned n = code->n(), k = code->k, sb = code->field.bytes();
  size_t factored = 0;
  for (size_t raw : lens) {
    const size_t len = raw < sb ? sb : raw / sb * sb;
    std::mt19937_64 rng(n * 1000003 + len);
    std::vector<std::vector<uint8_t>> orig(n, std::vector<uint8_t>(len));
    for (unsigned s = 0; s < k; ++s)
      for (auto &b : orig[s]) b = uint8_t(rng());
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned s = 0; s < n; ++s)
      (s < k ? (void)d.push_back(orig[s].data()) : (void)p.push_back(orig[s].data()));
    EXPECT_TRUE(codes::ref_encode(*code, d.data(), p.data(), len).ok());
    std::vector<std::unique_ptr<GuardedBuffer>> bufs;
    std::vector<uint8_t *> shards;
    for (unsigned s = 0; s < n; ++s) {
      bufs.push_back(std::make_unique<GuardedBuffer>(len));
      shards.push_back(bufs.back()->data());
    }
    for (size_t i = 0; i < masks.size(); ++i) {
      const uint32_t mask = masks[i];
      std::vector<bool> present(n);
      for (unsigned s = 0; s < n; ++s) {
        present[s] = !((mask >> s) & 1);
        if (present[s]) memcpy(shards[s], orig[s].data(), len);
        else memset(shards[s], 0xEE, len);
      }
      if (raw == lens.front()) {
        auto plan = codes::plan_reconstruct(*code, present);
        EXPECT_TRUE(plan.ok()) << spec << " lost " << mask_str(mask, n);
        factored += plan.ok() && plan->factored();
      }
      const std::string where =
          what + " " + spec + " len " + std::to_string(len) + " lost " + mask_str(mask, n);
      Status st = (*codec)->reconstruct(shards, present, len);
      EXPECT_TRUE(st.ok()) << where << ": " << st.to_string();
      if (!st.ok()) return factored;
      for (unsigned s = 0; s < n; ++s)
        if (memcmp(shards[s], orig[s].data(), len) != 0) {
          ADD_FAILURE() << where << ": reconstruct, shard " << s << " differs (decoder "
                        << (*codec)->decoder_info(present).symbol << ")";
          return factored;
        }
      if (i % data_every) continue;
      // reconstruct_data: lost parity neither read nor written (null), only data rebuilt.
      std::vector<uint8_t *> ptrs = shards;
      for (unsigned s = 0; s < n; ++s)
        if (!present[s]) {
          if (s < k) memset(shards[s], 0x5A, len);
          else ptrs[s] = nullptr;
        }
      st = (*codec)->reconstruct_data(ptrs, present, len);
      EXPECT_TRUE(st.ok()) << where << ": " << st.to_string();
      for (unsigned s = 0; s < k; ++s)
        if (memcmp(shards[s], orig[s].data(), len) != 0) {
          ADD_FAILURE() << where << ": reconstruct_data, shard " << s << " differs";
          return factored;
        }
    }
  }
  return factored;
}


using DecodeCase = test::StrategyCase;

class TwoStageDecode : public testing::TestWithParam<DecodeCase> {};

// The sample sets, odd lengths (one symbol, shorter than a vector, several vectors plus a
// remainder), at O1: the factored code (most of its decoders two-stage) and rs-vand and
// rs-cauchy in the same field (two-stage by set bits, or direct).
TEST_P(TwoStageDecode, SampleSetsEveryStrategyFieldTier) {
  const DecodeCase &c = GetParam();
  const std::string what = std::string(ir::strategy_name(c.strategy)) + " " + c.target;
  auto jit = make_jit(c.target, ir::strategy_name(c.strategy), 1);
  ASSERT_TRUE(jit);
  const std::vector<uint32_t> sets = sample_sets();
  const std::vector<size_t> lens = {1, 31, 4651};
  const size_t factored = check_sets(*jit, factored_code(c.l), sets, lens, 2, what);
  std::printf("%s: %zu of %zu sample sets two-stage\n", factored_code(c.l).c_str(), factored,
              sets.size());
  // All but {0} (its direct row, through the all-ones parity, is all ones already) and the
  // two parity-only sets (every data shard is read: nothing to factor).
  EXPECT_EQ(factored, sets.size() - 3) << what;
  const std::string gf = ",gf=" + std::to_string(c.l);
  const std::vector<uint32_t> few = {sets[2], sets[7], sets[10]};
  for (const char *family : {"rs-vand", "rs-cauchy"}) {
    const std::string spec = std::string(family) + ":k=10,m=4" + gf;
    const size_t n = check_sets(*jit, spec, few, {4651}, 1, what);
    std::printf("%s: %zu of %zu sample sets two-stage\n", spec.c_str(), n, few.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Host, TwoStageDecode, testing::ValuesIn(test::strategy_cases()),
                         test::case_name<DecodeCase>);

// Every erasure set of up to m = 4 shards of the factored code of a field (1,470 sets, with
// reconstruct_data on every 4th), on the host at O0 with the field's last candidate strategy
// (the quickest to compile: split-table, clmul-insn; O0 and O3 come from the same builder,
// and the sample sets above run O1 for every strategy). About 40 s for GF(2^8), 6 s per wider
// field here.
class TwoStageDecodeExhaustive : public testing::TestWithParam<unsigned> {};

TEST_P(TwoStageDecodeExhaustive, EverySetOfTheFactoredCode) {
  const unsigned l = GetParam();
  auto info = test::resolve_target("host");
  ASSERT_TRUE(bool(info)) << test::err_text(info.takeError());
  const ir::Strategy s = jit::candidate_strategies(*info, l).back();
  auto jit = make_jit("host", ir::strategy_name(s), 0);
  ASSERT_TRUE(jit);
  const std::vector<uint32_t> every = all_sets(14, 4);
  ASSERT_EQ(every.size(), 1470u);
  // GF(2^8) every set; the wider fields every 7th (210 sets: the schedule's structure is the
  // same in every field, and CI time goes to compiles).
  std::vector<uint32_t> sets;
  for (size_t i = 0; i < every.size(); i += l == 8 ? 1 : 7) sets.push_back(every[i]);
  const std::string spec = factored_code(l);
  const size_t factored = check_sets(*jit, spec, sets, {100}, 4, ir::strategy_name(s));
  std::printf("gf%u %s: %zu of %zu sets two-stage\n", l, ir::strategy_name(s), factored,
              sets.size());
  EXPECT_GT(factored * 100, sets.size() * 95) << spec;
}

INSTANTIATE_TEST_SUITE_P(Fields, TwoStageDecodeExhaustive, testing::Values(8u, 16u, 32u, 64u),
                         [](const testing::TestParamInfo<unsigned> &p) {
                           return "gf" + std::to_string(p.param);
                         });

}  // namespace
}  // namespace ecjit
