// Reference codec: encode equals ISA-L and Jerasure; every erasure set reconstructs exactly.
#include <gtest/gtest.h>

#include <isa-l/erasure_code.h>
#include <jerasure.h>
#include <jerasure/reed_sol.h>

#include <random>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "codes/reference_codec.h"

using namespace ecjit::codes;
using ecjit::StatusCode;

namespace {

struct Stripe {
  std::vector<std::vector<uint8_t>> shards;
  std::vector<uint8_t *> ptrs;
  Stripe(unsigned n, size_t len, uint64_t seed) : shards(n, std::vector<uint8_t>(len)) {
    std::mt19937_64 rng(seed);
    for (auto &s : shards)
      for (auto &b : s) b = uint8_t(rng());
    for (auto &s : shards) ptrs.push_back(s.data());
  }
  Stripe(const Stripe &o) : shards(o.shards) {
    for (auto &s : shards) ptrs.push_back(s.data());
  }
};

LinearCode code(const std::string &spec) {
  auto c = build_code(spec);
  EXPECT_TRUE(c.ok()) << spec << ": " << c.status().to_string();
  return *c;
}

void encode(const LinearCode &c, Stripe &s, size_t len) {
  ASSERT_TRUE(ref_encode(c, s.ptrs.data(), s.ptrs.data() + c.k, len).ok());
}

TEST(ReferenceEncode, EqualsIsalEcEncodeData) {
  for (const char *fam : {"isal-rs", "isal-cauchy"})
    for (unsigned k : {1u, 2u, 5u, 10u, 17u, 32u})
      for (unsigned m : {1u, 2u, 4u, 6u}) {
        const size_t len = 1000 + k;
        LinearCode c = code(std::string(fam) + ":k=" + std::to_string(k) + ",m=" + std::to_string(m));
        Stripe s(k + m, len, k * 100 + m);
        encode(c, s, len);
        std::vector<unsigned char> a((k + m) * k), tbls(32 * k * m);
        if (std::string(fam) == "isal-rs") gf_gen_rs_matrix(a.data(), int(k + m), int(k));
        else gf_gen_cauchy1_matrix(a.data(), int(k + m), int(k));
        ec_init_tables(int(k), int(m), a.data() + k * k, tbls.data());
        std::vector<std::vector<uint8_t>> out(m, std::vector<uint8_t>(len));
        std::vector<uint8_t *> op;
        for (auto &o : out) op.push_back(o.data());
        ec_encode_data(int(len), int(k), int(m), tbls.data(), s.ptrs.data(), op.data());
        for (unsigned i = 0; i < m; ++i) ASSERT_EQ(out[i], s.shards[k + i]) << fam << " k=" << k << " m=" << m;
      }
}

TEST(ReferenceEncode, EqualsJerasureMatrixEncode) {
  for (unsigned w : {8u, 16u, 32u})
    for (unsigned k : {1u, 3u, 6u, 10u})
      for (unsigned m : {1u, 2u, 3u, 4u}) {
        const size_t len = 8 * 131;  // Jerasure wants a multiple of sizeof(long)
        LinearCode c = code("jerasure-vand:k=" + std::to_string(k) + ",m=" + std::to_string(m) +
                            ",gf=" + std::to_string(w));
        Stripe s(k + m, len, w * 1000 + k * 10 + m);
        encode(c, s, len);
        int *jm = reed_sol_vandermonde_coding_matrix(int(k), int(m), int(w));
        std::vector<std::vector<uint8_t>> out(m, std::vector<uint8_t>(len));
        std::vector<char *> dp, cp;
        for (unsigned i = 0; i < k; ++i) dp.push_back(reinterpret_cast<char *>(s.ptrs[i]));
        for (auto &o : out) cp.push_back(reinterpret_cast<char *>(o.data()));
        jerasure_matrix_encode(int(k), int(m), int(w), jm, dp.data(), cp.data(), int(len));
        free(jm);
        for (unsigned i = 0; i < m; ++i) ASSERT_EQ(out[i], s.shards[k + i]) << "w=" << w << " k=" << k << " m=" << m;
      }
}

// Erases every subset of size <= m (or a random sample), reconstructs, compares.
void check_erasures(const LinearCode &c, size_t len, bool exhaustive, int samples = 300) {
  const unsigned n = c.n();
  Stripe orig(n, len, n * 7 + c.field.bits());
  encode(c, orig, len);
  auto run = [&](const std::vector<bool> &present) {
    Stripe work = orig;
    for (unsigned s = 0; s < n; ++s)
      if (!present[s]) std::fill(work.shards[s].begin(), work.shards[s].end(), 0xA5);
    auto st = ref_reconstruct(c, work.ptrs.data(), present, len);
    ASSERT_TRUE(st.ok()) << c.spec.to_string() << ": " << st.to_string();
    for (unsigned s = 0; s < n; ++s) ASSERT_EQ(work.shards[s], orig.shards[s]) << c.spec.to_string() << " shard " << s;
  };
  if (exhaustive) {
    for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
      if (unsigned(__builtin_popcountll(mask)) > c.m) continue;
      std::vector<bool> present(n);
      for (unsigned s = 0; s < n; ++s) present[s] = !((mask >> s) & 1);
      run(present);
      if (::testing::Test::HasFatalFailure()) return;
    }
  } else {
    std::mt19937_64 rng(n);
    for (int i = 0; i < samples; ++i) {
      std::vector<unsigned> idx(n);
      for (unsigned s = 0; s < n; ++s) idx[s] = s;
      std::shuffle(idx.begin(), idx.end(), rng);
      const unsigned e = unsigned(rng() % (c.m + 1));
      std::vector<bool> present(n, true);
      for (unsigned j = 0; j < e; ++j) present[idx[j]] = false;
      run(present);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(ReferenceReconstruct, ExhaustiveSmallCodesGf8) {
  for (unsigned k = 1; k <= 10; ++k)
    for (unsigned m = 1; m <= 4; ++m) {
      check_erasures(code("rs-vand:k=" + std::to_string(k) + ",m=" + std::to_string(m)), 48, true);
      if (HasFatalFailure()) return;
    }
  check_erasures(code("rs-vand:k=6,m=6"), 48, true);
  check_erasures(code("rs-cauchy:k=10,m=4"), 48, true);
  check_erasures(code("isal-cauchy:k=6,m=6"), 48, true);
  check_erasures(code("raidz:k=8,m=3"), 48, true);
  check_erasures(code("jerasure-vand:k=6,m=6"), 48, true);
}

TEST(ReferenceReconstruct, ExhaustiveWideFields) {
  check_erasures(code("rs-vand:k=10,m=4,gf=16"), 64, true);
  check_erasures(code("rs-cauchy:k=6,m=6,gf=32"), 64, true);
  check_erasures(code("rs-vand:k=6,m=4,gf=64"), 64, true);
  check_erasures(code("jerasure-vand:k=5,m=3,gf=32"), 64, true);
}

TEST(ReferenceReconstruct, RandomLargerCodes) {
  check_erasures(code("rs-vand:k=20,m=8"), 40, false);
  check_erasures(code("rs-cauchy:k=48,m=16,gf=16"), 32, false, 60);
  check_erasures(code("isal-cauchy:k=100,m=20"), 16, false, 30);
}

TEST(DecodePlan, PrefersDataShardsAndReportsErrors) {
  LinearCode c = code("rs-vand:k=4,m=2");
  std::vector<bool> present{true, false, true, true, true, true};
  auto p = plan_reconstruct(c, present);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->sources, (std::vector<unsigned>{0, 2, 3, 4}));
  EXPECT_EQ(p->targets, (std::vector<unsigned>{1}));

  std::vector<bool> three_lost{false, false, false, true, true, true};
  auto e = plan_reconstruct(c, three_lost);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kTooManyErasures);

  auto wrong = plan_reconstruct(c, std::vector<bool>(5, true));
  EXPECT_EQ(wrong.status().code(), StatusCode::kShardCount);
  auto dup = plan_decode(c, present, {1, 1});
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
  auto range = plan_decode(c, present, {6});
  EXPECT_EQ(range.status().code(), StatusCode::kInvalidArgument);
}

TEST(DecodePlan, NonMdsCodeFindsAnotherBasisOrSaysSingular) {
  // A code whose two parity rows are equal: losing two data shards is fatal, but losing
  // one data shard and one parity is not.
  LinearCode c = code("matrix:k=2,m=2,a=1.1/1.1");
  auto bad = plan_reconstruct(c, {false, false, true, true});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kSingular);
  auto good = plan_reconstruct(c, {true, false, false, true});
  EXPECT_TRUE(good.ok()) << good.status().to_string();
}

// Wide codes plan in milliseconds (the data + parity block path, O(r k) per target instead of a
// k x k inversion): rs-cauchy k = 4000, 24 lost data and 2 lost parity shards; the plan's
// coefficients applied to the sources give back the originals (reference encoder as oracle).
TEST(DecodePlan, WideCodeRebuildsFromItsSources) {
  auto code = build_code("rs-cauchy:k=4000,m=96,gf=16");
  ASSERT_TRUE(code.ok());
  const unsigned k = code->k, m = code->m, n = k + m;
  const size_t len = 8;
  std::mt19937_64 rng(40);
  std::vector<std::vector<uint8_t>> shards(n, std::vector<uint8_t>(len));
  for (unsigned s = 0; s < k; ++s)
    for (auto &b : shards[s]) b = uint8_t(rng());
  std::vector<const uint8_t *> data;
  std::vector<uint8_t *> parity;
  for (unsigned s = 0; s < k; ++s) data.push_back(shards[s].data());
  for (unsigned s = k; s < n; ++s) parity.push_back(shards[s].data());
  ASSERT_TRUE(ref_encode(*code, data.data(), parity.data(), len).ok());
  std::vector<bool> present(n, true);
  std::vector<unsigned> lost;
  for (unsigned i = 0; i < 24; ++i) lost.push_back(i * 163 % k);
  lost.push_back(k + 5);
  lost.push_back(k + 50);
  for (unsigned s : lost) present[s] = false;
  auto plan = plan_decode(*code, present, lost, CostModel::kNoSearch, /*schedule=*/false);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  std::vector<const uint8_t *> in;
  for (unsigned s : plan->sources) {
    ASSERT_TRUE(present[s]);
    in.push_back(shards[s].data());
  }
  std::vector<std::vector<uint8_t>> got(plan->targets.size(), std::vector<uint8_t>(len));
  std::vector<uint8_t *> out;
  for (auto &g : got) out.push_back(g.data());
  apply_matrix(code->field, plan->coeffs, in.data(), out.data(), len);
  for (size_t t = 0; t < plan->targets.size(); ++t) EXPECT_EQ(got[t], shards[plan->targets[t]]) << plan->targets[t];
}

TEST(ReferenceCodec, BadInput) {
  LinearCode c = code("rs-vand:k=2,m=1,gf=16");
  Stripe s(3, 10, 1);
  EXPECT_EQ(ref_encode(c, s.ptrs.data(), s.ptrs.data() + 2, 9).code(), StatusCode::kShardSize);
  std::vector<uint8_t *> with_null = s.ptrs;
  with_null[1] = nullptr;
  EXPECT_EQ(ref_encode(c, with_null.data(), with_null.data() + 2, 10).code(), StatusCode::kNullPointer);
  EXPECT_EQ(ref_reconstruct(c, s.ptrs.data(), {true, true}, 10).code(), StatusCode::kShardCount);
  EXPECT_EQ(ref_reconstruct(c, s.ptrs.data(), {false, false, true}, 10).code(), StatusCode::kTooManyErasures);
}

TEST(Symbols, LittleEndian) {
  uint8_t b[8];
  store_symbol(b, 4, 0x11223344);
  EXPECT_EQ(b[0], 0x44);
  EXPECT_EQ(b[3], 0x11);
  EXPECT_EQ(load_symbol(b, 4), 0x11223344u);
}

}  // namespace
