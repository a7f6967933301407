// rs-fft (LCH additive FFT over GF(2^16)): field, transforms, every erasure set of small codes, the matrix form, and reed-solomon-simd's known answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codes/gf.h"
#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "known_answers.h"

namespace fft = ecjit::codes::fft;
using ecjit::StatusCode;
using Bytes = std::vector<uint8_t>;

namespace {

// The independent twin: the same field through codes/gf.h's polynomial-basis arithmetic and
// the change of basis phi (rs_fft_field.h).
struct Twin {
  ecjit::codes::Field f = *ecjit::codes::Field::make(16, fft::kPolynomial);
  std::vector<uint16_t> phi, phi_inv;
  Twin() : phi(fft::kOrder), phi_inv(fft::kOrder) {
    for (uint32_t e = 1; e < fft::kOrder; ++e)
      phi[e] = uint16_t(phi[e & (e - 1)] ^ fft::kCantorBasis[__builtin_ctz(e)]);
    for (uint32_t e = 0; e < fft::kOrder; ++e) phi_inv[phi[e]] = uint16_t(e);
  }
  uint16_t mul(uint16_t a, uint16_t b) const { return phi_inv[f.mul(phi[a], phi[b])]; }
  uint16_t div(uint16_t a, uint16_t b) const { return phi_inv[f.div(phi[a], phi[b])]; }
  // shat_j by the recursion shat_{j+1}(x) = q(x) / q(v_{j+1}), q(y) = shat_j(y)(shat_j(y) + 1).
  uint16_t shat(unsigned j, uint16_t x) const {
    if (j == 0) return x;
    const uint16_t y = shat(j - 1, x), v = shat(j - 1, uint16_t(1u << j));
    return div(mul(y, y ^ 1), mul(v, v ^ 1));
  }
};

const Twin &twin() {
  static const Twin t;
  return t;
}

Bytes random_bytes(std::mt19937_64 &rng, size_t n) {
  Bytes b(n);
  for (auto &x : b) x = uint8_t(rng());
  return b;
}

std::vector<const uint8_t *> cptrs(const std::vector<Bytes> &v) {
  std::vector<const uint8_t *> p;
  for (auto &b : v) p.push_back(b.data());
  return p;
}

std::vector<uint8_t *> ptrs(std::vector<Bytes> &v) {
  std::vector<uint8_t *> p;
  for (auto &b : v) p.push_back(b.data());
  return p;
}

std::vector<Bytes> encode(unsigned k, unsigned m, const std::vector<Bytes> &orig, fft::Gf gf = fft::Gf::k16) {
  const size_t bytes = orig[0].size();
  std::vector<Bytes> rec(m, Bytes(bytes));
  auto op = ptrs(rec);
  auto st = fft::encode_bytes(k, m, bytes, cptrs(orig).data(), op.data(), gf);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return rec;
}

// Decodes with the shards where keep[s] is set; checks every original and recovery shard.
void check_decode(unsigned k, unsigned m, const std::vector<Bytes> &orig,
                  const std::vector<Bytes> &rec, const std::vector<bool> &keep,
                  const std::string &what, fft::Gf gf = fft::Gf::k16) {
  const size_t bytes = orig[0].size();
  std::vector<const uint8_t *> in(k + m, nullptr);
  std::vector<Bytes> out_o(k, Bytes(bytes, 0xEE)), out_r(m, Bytes(bytes, 0xEE));
  for (unsigned s = 0; s < k + m; ++s)
    if (keep[s]) in[s] = s < k ? orig[s].data() : rec[s - k].data();
  auto oo = ptrs(out_o), orr = ptrs(out_r);
  auto st = fft::decode_bytes(k, m, bytes, in.data(), oo.data(), orr.data(), gf);
  ASSERT_TRUE(st.ok()) << what << ": " << st.to_string();
  for (unsigned s = 0; s < k + m; ++s) {
    if (keep[s]) continue;
    if (s < k)
      ASSERT_EQ(out_o[s], orig[s]) << what << ": original " << s;
    else
      ASSERT_EQ(out_r[s - k], rec[s - k]) << what << ": recovery " << s - k;
  }
}

using ecjit::test::fnv1a64;

// ---------------------------------------------------------------- field

TEST(RsFftField, CantorBasisAndLogTables) {
  const Twin &tw = twin();
  EXPECT_EQ(fft::kCantorBasis[0], 1);
  for (unsigned i = 1; i < fft::kBits; ++i) {
    const uint64_t v = fft::kCantorBasis[i];
    EXPECT_EQ(tw.f.mul(v, v) ^ v, fft::kCantorBasis[i - 1]) << i;
  }
  EXPECT_EQ(fft::log_of(0), fft::kModulus);
  EXPECT_EQ(fft::log_of(1), 0);
  EXPECT_EQ(fft::exp_of(fft::kModulus), 1);
  // The log base is the element that is X in the polynomial basis.
  EXPECT_EQ(tw.phi[fft::exp_of(1)], 2);
  for (uint32_t a = 1; a < fft::kOrder; ++a) {
    ASSERT_LT(fft::log_of(uint16_t(a)), fft::kModulus);
    ASSERT_EQ(fft::exp_of(fft::log_of(uint16_t(a))), a);
  }
}

TEST(RsFftField, MultiplyMatchesTwinAndAxioms) {
  const Twin &tw = twin();
  std::mt19937_64 rng(1);
  for (uint32_t a = 0; a < fft::kOrder; ++a)
    for (int r = 0; r < 4; ++r) {
      const uint16_t b = uint16_t(rng()), c = uint16_t(rng());
      const uint16_t ab = fft::mul(uint16_t(a), b);
      ASSERT_EQ(ab, tw.mul(uint16_t(a), b)) << a << "*" << b;
      ASSERT_EQ(ab, fft::mul(b, uint16_t(a)));
      ASSERT_EQ(fft::mul(uint16_t(a), b ^ c), ab ^ fft::mul(uint16_t(a), c));
      ASSERT_EQ(fft::mul(ab, c), fft::mul(uint16_t(a), fft::mul(b, c)));
      if (b) ASSERT_EQ(fft::mul_log(uint16_t(a), fft::log_of(b)), ab);
    }
  for (uint32_t a = 0; a < fft::kOrder; ++a) {
    ASSERT_EQ(fft::mul(uint16_t(a), 1), a);
    ASSERT_EQ(fft::mul_log(uint16_t(a), 0), a);
    ASSERT_EQ(fft::mul_log(uint16_t(a), fft::kModulus), a) << "kModulus is a log of 1";
    if (a) ASSERT_EQ(fft::mul(uint16_t(a), fft::inv(uint16_t(a))), 1) << a;
  }
  for (int r = 0; r < 2000; ++r) {
    const uint16_t c = uint16_t(rng()), x = uint16_t(rng());
    const auto cols = fft::mul_columns(c);
    uint16_t y = 0;
    for (unsigned j = 0; j < 16; ++j)
      if (x >> j & 1) y ^= cols[j];
    ASSERT_EQ(y, fft::mul(c, x)) << c << "*" << x;
  }
}

TEST(RsFftField, SkewTableIsNormalisedSubspacePolynomials) {
  const Twin &tw = twin();
  std::mt19937_64 rng(2);
  for (unsigned j = 0; j < fft::kBits; ++j) {
    EXPECT_EQ(fft::subspace_poly(j, uint16_t(1u << j)), 1) << j;
    for (int r = 0; r < 64; ++r) {
      const uint16_t x = uint16_t(rng()), y = uint16_t(rng());
      ASSERT_EQ(fft::subspace_poly(j, x) ^ fft::subspace_poly(j, y), fft::subspace_poly(j, x ^ y));
      ASSERT_EQ(fft::subspace_poly(j, uint16_t(x & ((1u << j) - 1))), 0);
    }
  }
  const uint16_t *skew = fft::skew_logs();
  for (size_t i = 0; i < fft::kSkewCount; ++i) {
    const unsigned j = __builtin_ctzll(i + 1);
    const uint16_t x = uint16_t(i + 1 - (size_t(1) << j));
    ASSERT_EQ(skew[i], fft::log_of(tw.shat(j, x))) << "index " << i;
  }
}

// ---------------------------------------------------------------- transforms

fft::Shards random_shards(std::mt19937_64 &rng, size_t count, size_t len, fft::Gf gf = fft::Gf::k16) {
  fft::Shards s(count, len);
  const uint16_t mask = gf == fft::Gf::k8 ? 0xFF : 0xFFFF;
  for (size_t i = 0; i < count; ++i)
    for (size_t t = 0; t < len; ++t) s[i][t] = uint16_t(rng()) & mask;
  return s;
}

// Random originals of (k, m) and their recovery: all[s] points at shard s (k + m of them).
struct EncodedCode {
  fft::Shards orig, rec;
  std::vector<const uint16_t *> all;
  EncodedCode(std::mt19937_64 &rng, unsigned k, unsigned m, size_t len)
      : orig(random_shards(rng, k, len)), rec(m, len), all(k + m) {
    std::vector<uint16_t *> rp(m);
    for (unsigned i = 0; i < k; ++i) all[i] = orig[i];
    for (unsigned j = 0; j < m; ++j) all[k + j] = rp[j] = rec[j];
    EXPECT_TRUE(fft::encode(k, m, len, all.data(), rp.data()).ok());
  }
};

bool same(const fft::Shards &a, const fft::Shards &b, size_t first, size_t last) {
  for (size_t i = first; i < last; ++i)
    if (!std::equal(a[i], a[i] + a.len(), b[i])) return false;
  return true;
}

TEST(RsFftTransform, FftEvaluatesTheNovelBasisPolynomial) {
  const Twin &tw = twin();
  std::mt19937_64 rng(3);
  for (size_t size : {1, 2, 4, 8, 32})
    for (size_t offset : {size_t(0), size, 4 * size, 65536 - size}) {
      fft::Shards d = random_shards(rng, size, 1), e = d;
      fft::fft(e, 0, size, size, offset);
      for (size_t i = 0; i < size; ++i) {
        const uint16_t x = uint16_t(offset + i);
        uint16_t sum = 0;
        for (size_t l = 0; l < size; ++l) {
          uint16_t basis = 1;  // X_l(x) = prod over set bits t of l of shat_t(x)
          for (unsigned t = 0; t < 16; ++t)
            if (l >> t & 1) basis = tw.mul(basis, tw.shat(t, x));
          sum ^= tw.mul(d[l][0], basis);
        }
        ASSERT_EQ(e[i][0], sum) << "size " << size << " offset " << offset << " point " << i;
      }
    }
}

TEST(RsFftTransform, InverseAndTruncation) {
  std::mt19937_64 rng(4);
  for (size_t size : {1, 2, 16, 256, 4096})
    for (size_t offset : {size_t(0), size, 65536 - size}) {
      fft::Shards d = random_shards(rng, size + 3, 5), e = d;
      fft::fft(e, 3, size, size, offset);
      EXPECT_FALSE(size > 1 && same(d, e, 3, size + 3));
      fft::ifft(e, 3, size, size, offset);
      ASSERT_TRUE(same(d, e, 0, size + 3)) << size << " " << offset;
      for (size_t trunc : {size_t(1), size / 2 + 1, size - 1}) {
        if (trunc == 0 || trunc > size) continue;
        fft::Shards z = d;
        z.zero(3 + trunc, 3 + size);
        fft::Shards full = z, cut = z;
        fft::ifft(full, 3, size, size, offset);
        fft::ifft(cut, 3, size, trunc, offset);
        ASSERT_TRUE(same(full, cut, 0, size + 3)) << "ifft truncated " << trunc;
        full = d, cut = d;
        fft::fft(full, 3, size, size, offset);
        fft::fft(cut, 3, size, trunc, offset);
        ASSERT_TRUE(same(full, cut, 0, 3 + trunc)) << "fft truncated " << trunc;
      }
    }
}

TEST(RsFftTransform, ErasureLogsAreLocatorValues) {
  std::mt19937_64 rng(5);
  for (size_t n : {1, 2, 8, 64, 1024}) {
    std::vector<bool> erased(n);
    for (size_t i = 0; i < n; ++i) erased[i] = rng() % 3 == 0;
    const auto lg = fft::erasure_logs(erased);
    for (size_t i = 0; i < n; ++i) {
      uint16_t prod = 1;  // prod over erased e != i of (i + e)
      for (size_t e = 0; e < n; ++e)
        if (erased[e] && e != i) prod = fft::mul(prod, uint16_t(i ^ e));
      ASSERT_EQ(fft::exp_of(lg[i]), prod) << "n " << n << " point " << i;
    }
  }
}

TEST(RsFftProgram, TransformsMatchDirect) {
  std::mt19937_64 rng(6);
  for (size_t size : {2, 64, 1024})
    for (size_t trunc : {size, size / 2 + 1}) {
      fft::Shards d = random_shards(rng, size, 7);
      d.zero(trunc, size);
      fft::Program p;
      p.work_count = uint32_t(size);
      for (uint32_t i = 0; i < size; ++i) {
        p.inputs.push_back({i, i});
        p.outputs.push_back({i, i});
      }
      for (int inverse = 0; inverse < 2; ++inverse) {
        fft::Program q = p;
        fft::Shards direct = d, ran(size, 7);
        if (inverse) {
          fft::append_ifft(q, 0, size, trunc, size);
          fft::ifft(direct, 0, size, trunc, size);
        } else {
          fft::append_fft(q, 0, size, trunc, size);
          fft::fft(direct, 0, size, trunc, size);
        }
        std::vector<const uint16_t *> in;
        std::vector<uint16_t *> out;
        for (size_t i = 0; i < size; ++i) in.push_back(d[i]), out.push_back(ran[i]);
        fft::run_program(q, 7, in.data(), out.data());
        ASSERT_TRUE(same(direct, ran, 0, inverse ? size : trunc)) << size << " " << inverse;
      }
    }
}

// ---------------------------------------------------------------- parameters and layout

TEST(RsFftParams, DefaultRateRuleAndLimits) {
  struct Case { unsigned k, m; bool ok; fft::Rate rate; };
  const Case cases[] = {
      {1, 1, true, fft::Rate::kHigh},       {4, 2, true, fft::Rate::kHigh},
      {3, 5, true, fft::Rate::kLow},        {5, 6, true, fft::Rate::kHigh},
      {6, 5, true, fft::Rate::kLow},        {100, 120, true, fft::Rate::kHigh},
      {120, 100, true, fft::Rate::kLow},    {32768, 32768, true, fft::Rate::kHigh},
      {65535, 1, true, fft::Rate::kHigh},   {1, 65535, true, fft::Rate::kLow},
      {61440, 4096, true, fft::Rate::kHigh}, {32769, 32768, false, {}},
      {65536, 1, false, {}},                {61441, 4096, false, {}},
      {0, 1, false, {}},                    {1, 0, false, {}},
      {4000000000u, 1, false, {}},
  };
  for (const Case &c : cases) {
    auto g = fft::geometry(c.k, c.m);
    ASSERT_EQ(g.ok(), c.ok) << c.k << ":" << c.m;
    if (c.ok)
      EXPECT_EQ(g->rate, c.rate) << c.k << ":" << c.m;
    else
      EXPECT_EQ(g.status().code(), StatusCode::kInvalidSpec);
  }
}

TEST(RsFftParams, BadArgumentsRejected) {
  Bytes a(64), b(64), c(64);
  const uint8_t *in[2] = {a.data(), b.data()};
  uint8_t *out[2] = {c.data(), c.data()};
  EXPECT_EQ(fft::encode_bytes(0, 1, 64, in, out).code(), StatusCode::kInvalidSpec);
  EXPECT_EQ(fft::encode_bytes(1, 0, 64, in, out).code(), StatusCode::kInvalidSpec);
  EXPECT_EQ(fft::encode_bytes(32769, 32768, 64, in, out).code(), StatusCode::kInvalidSpec);
  for (size_t bad : {0, 1, 63, 65}) {
    auto st = fft::encode_bytes(1, 1, bad, in, out);
    EXPECT_EQ(st.code(), StatusCode::kShardSize) << bad;
    EXPECT_NE(st.message().find("nonzero and even"), std::string::npos) << st.message();
  }
  EXPECT_EQ(fft::encode_bytes(1, 1, 64, nullptr, out).code(), StatusCode::kNullPointer);
  const uint8_t *in_null[2] = {a.data(), nullptr};
  EXPECT_EQ(fft::encode_bytes(2, 1, 64, in_null, out).code(), StatusCode::kNullPointer);
  // Decode 2:2 with only one shard: too many erasures; a missing original without output.
  const uint8_t *one[4] = {a.data(), nullptr, nullptr, nullptr};
  uint8_t *outs[2] = {c.data(), c.data()};
  EXPECT_EQ(fft::decode_bytes(2, 2, 64, one, outs).code(), StatusCode::kTooManyErasures);
  const uint8_t *two[4] = {a.data(), nullptr, b.data(), nullptr};
  uint8_t *no_out[2] = {c.data(), nullptr};
  EXPECT_EQ(fft::decode_bytes(2, 2, 64, two, no_out).code(), StatusCode::kNullPointer);
  EXPECT_EQ(fft::decode_bytes(2, 2, 62, two, outs).ok(), true);
  EXPECT_EQ(fft::decode_bytes(2, 2, 61, two, outs).code(), StatusCode::kShardSize);
  EXPECT_EQ(fft::decode_program(2, 2, {true, false, false, false}).status().code(),
            StatusCode::kTooManyErasures);
  EXPECT_EQ(fft::decode_program(2, 2, {true, true, true}).status().code(), StatusCode::kShardCount);
  EXPECT_EQ(fft::encode_program(0, 2).status().code(), StatusCode::kInvalidSpec);
}

TEST(RsFftLayout, LowHighBytesPerChunkAndTail) {
  // 98 bytes: one whole chunk (elements 0..31) and a 34-byte tail of 17 elements.
  Bytes b(98);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i);
  std::vector<uint16_t> e(49);
  fft::unpack_shard(b.data(), b.size(), e.data());
  EXPECT_EQ(e[0], 0x2000);   // lo byte 0, hi byte 32
  EXPECT_EQ(e[31], 0x3F1F);  // lo 31, hi 63
  EXPECT_EQ(e[32], 0x5140);  // tail: lo 64, hi 64 + 17
  EXPECT_EQ(e[48], 0x6150);  // lo 80, hi 97
  Bytes back(98);
  fft::pack_shard(e.data(), back.size(), back.data());
  EXPECT_EQ(back, b);
  std::vector<uint16_t> two(1);
  fft::unpack_shard(b.data(), 2, two.data());
  EXPECT_EQ(two[0], 0x0100);
}

// ---------------------------------------------------------------- round trips

TEST(RsFftRoundTrip, EveryErasureSetOfSmallCodes) {
  std::mt19937_64 rng(7);
  for (unsigned k = 1; k <= 8; ++k)
    for (unsigned m = 1; m <= 8; ++m) {
      const size_t bytes = 66 + 2 * ((k + m) % 3);  // a whole chunk and a tail
      std::vector<Bytes> orig;
      for (unsigned i = 0; i < k; ++i) orig.push_back(random_bytes(rng, bytes));
      const auto rec = encode(k, m, orig);
      const unsigned n = k + m;
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        const unsigned lost = __builtin_popcount(mask);
        std::vector<bool> keep(n);
        for (unsigned s = 0; s < n; ++s) keep[s] = !(mask >> s & 1);
        if (lost > m) {
          if (lost == m + 1) {
            std::vector<const uint8_t *> in(n, nullptr);
            std::vector<Bytes> o(k, Bytes(bytes));
            auto op = ptrs(o);
            for (unsigned s = 0; s < n; ++s)
              if (keep[s]) in[s] = s < k ? orig[s].data() : rec[s - k].data();
            ASSERT_EQ(fft::decode_bytes(k, m, bytes, in.data(), op.data()).code(),
                      StatusCode::kTooManyErasures);
          }
          continue;
        }
        check_decode(k, m, orig, rec, keep,
                     std::to_string(k) + ":" + std::to_string(m) + " lost mask " +
                         std::to_string(mask));
        if (HasFatalFailure()) return;
      }
    }
}

void random_round_trips(unsigned k, unsigned m, size_t bytes, int trials, uint64_t seed, fft::Gf gf = fft::Gf::k16) {
  std::mt19937_64 rng(seed);
  std::vector<Bytes> orig;
  for (unsigned i = 0; i < k; ++i) orig.push_back(random_bytes(rng, bytes));
  const auto rec = encode(k, m, orig, gf);
  std::vector<unsigned> ids(k + m);
  for (unsigned s = 0; s < k + m; ++s) ids[s] = s;
  for (int t = 0; t < trials; ++t) {
    std::shuffle(ids.begin(), ids.end(), rng);
    const unsigned lost = t == 0 ? m : unsigned(rng() % (m + 1));
    std::vector<bool> keep(k + m, true);
    for (unsigned i = 0; i < lost; ++i) keep[ids[i]] = false;
    check_decode(k, m, orig, rec, keep,
                 std::to_string(k) + ":" + std::to_string(m) + " trial " + std::to_string(t), gf);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(RsFftRoundTrip, RandomErasuresLargeCodes) {
  random_round_trips(1000, 1000, 64, 3, 10);
  random_round_trips(200, 3000, 64, 3, 11);
  random_round_trips(3000, 200, 98, 3, 12);
  random_round_trips(65000, 500, 2, 1, 13);   // 127 high-rate chunks, decode on all 2^16 points
  random_round_trips(3, 65000, 2, 1, 14);     // 16250 low-rate chunks
}

TEST(RsFftRoundTrip, OneOriginalIsRepeated) {
  // k = 1: the polynomial is a constant, so every recovery shard equals the original.
  std::mt19937_64 rng(15);
  for (unsigned m : {1u, 7u, 65535u}) {
    const std::vector<Bytes> orig = {random_bytes(rng, 6)};
    for (const Bytes &r : encode(1, m, orig)) ASSERT_EQ(r, orig[0]) << m;
  }
}

// ---------------------------------------------------------------- program view

void check_programs(unsigned k, unsigned m, size_t len, uint64_t seed, fft::Gf gf = fft::Gf::k16) {
  std::mt19937_64 rng(seed);
  fft::Shards orig = random_shards(rng, k, len, gf), rec(m, len), ran(k + m, len);
  std::vector<const uint16_t *> in(k + m, nullptr);
  std::vector<uint16_t *> out(k + m), rp(m);
  for (unsigned s = 0; s < k + m; ++s) out[s] = ran[s];
  for (unsigned i = 0; i < k; ++i) in[i] = orig[i];
  for (unsigned j = 0; j < m; ++j) rp[j] = rec[j];
  ASSERT_TRUE(fft::encode(k, m, len, in.data(), rp.data(), gf).ok());
  for (fft::Order order : {fft::Order::kLayers, fft::Order::kDepthFirst, fft::Order::kRadix4, fft::Order::kRadix8}) {
    auto ep = fft::encode_program(k, m, order, gf);
    ASSERT_TRUE(ep.ok());
    fft::run_program(*ep, len, in.data(), out.data());
    for (unsigned j = 0; j < m; ++j)
      ASSERT_TRUE(std::equal(rec[j], rec[j] + len, ran[k + j]))
          << k << ":" << m << " rec " << j << " order " << int(order);
  }
  {  // the two orders hold the same butterflies
    auto a = fft::encode_program(k, m, fft::Order::kLayers), b = fft::encode_program(k, m, fft::Order::kDepthFirst),
         c = fft::encode_program(k, m, fft::Order::kRadix4);
    ASSERT_EQ(a->ops.size(), b->ops.size());
    ASSERT_EQ(a->ops.size(), c->ops.size());
  }
  for (unsigned j = 0; j < m; ++j) in[k + j] = rec[j];
  for (int t = 0; t < 4; ++t) {
    std::vector<bool> present(k + m, true);
    for (unsigned e = 0; e < m; ++e) present[rng() % (k + m)] = false;
    auto dp = fft::decode_program(k, m, present, true, gf);
    ASSERT_TRUE(dp.ok()) << dp.status().to_string();
    std::vector<const uint16_t *> din(k + m, nullptr);
    for (unsigned s = 0; s < k + m; ++s)
      if (present[s]) din[s] = in[s];
    fft::run_program(*dp, len, din.data(), out.data());
    for (unsigned s = 0; s < k + m; ++s)
      if (!present[s])
        ASSERT_TRUE(std::equal(in[s], in[s] + len, ran[s])) << k << ":" << m << " shard " << s;
  }
}

TEST(RsFftProgram, EncodeAndDecodeMatchDirect) {
  const unsigned sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {5, 3}, {6, 5}, {5, 6}, {9, 2},
                               {2, 9}, {100, 20}, {20, 100}, {300, 50}, {50, 300}};
  uint64_t seed = 100;
  for (auto &km : sizes) check_programs(km[0], km[1], 9, seed++);
}

// The encoder's transforms inverted (inverse_decode_program) where the shards read allow it:
// every shape it takes restores the encoded shards, in every order; every other shape is
// refused. Chunks: high rate 10:4 (C = 4: originals 0-3, 4-7, 8-9), 32:32 and 9:8; low rate
// 4:10 (C = 4, recovery chunks 0-3, 4-7, 8-9) and 3:9 (C = 4 > k: only from the originals).
struct InverseCase {
  unsigned k, m;
  std::vector<unsigned> sources, targets;
  bool takes;
};

std::vector<unsigned> range_of(unsigned first, unsigned last) {
  std::vector<unsigned> v;
  for (unsigned s = first; s < last; ++s) v.push_back(s);
  return v;
}

std::vector<unsigned> joined(std::vector<unsigned> a, const std::vector<unsigned> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(RsFftProgram, InverseDecodeRestoresWhatItTakes) {
  const std::vector<InverseCase> cases = {
      // high rate: every recovery + the originals outside one chunk
      {10, 4, joined(range_of(4, 10), range_of(10, 14)), {0, 1, 2, 3}, true},
      {10, 4, joined(range_of(4, 10), range_of(10, 14)), {1, 3}, true},
      {10, 4, joined(joined(range_of(0, 4), range_of(8, 10)), range_of(10, 14)), {5, 6}, true},
      {10, 4, joined(range_of(0, 8), range_of(10, 14)), {8, 9}, true},
      {10, 4, joined(range_of(0, 8), range_of(10, 14)), {9}, true},
      {32, 32, range_of(32, 64), range_of(0, 32), true},
      {32, 32, joined(range_of(5, 32), range_of(32, 64)), {0, 3}, true},
      {9, 8, joined(range_of(8, 9), range_of(9, 17)), range_of(0, 8), true},
      {9, 8, joined(range_of(0, 8), range_of(9, 17)), {8}, true},
      // low rate: from every original, or from one whole recovery chunk
      {4, 10, range_of(0, 4), {4, 9, 13}, true},
      {4, 10, range_of(8, 12), {0, 1, 2, 3, 4, 5, 13}, true},
      {4, 10, range_of(4, 8), {2, 12}, true},
      {3, 9, range_of(0, 3), {3, 11}, true},
      // chunk L's own originals read as well: taken, not used
      {10, 4, joined(range_of(2, 10), range_of(10, 14)), {0, 1}, true},
      // refused: a recovery shard missing, targets in two chunks, a recovery target at the
      // high rate, m not a power of two, a partial recovery chunk, k < C without the originals
      {10, 4, joined(range_of(3, 10), range_of(10, 13)), {0, 1, 2}, false},
      {10, 4, joined(range_of(4, 10), range_of(10, 14)), {0, 4}, false},
      {10, 4, range_of(0, 10), {12}, false},
      {10, 3, joined(range_of(3, 10), range_of(10, 13)), {0, 1, 2}, false},
      {4, 10, joined(range_of(12, 14), {4, 5}), {0}, false},
      {3, 9, range_of(3, 6), {0}, false},
  };
  std::mt19937_64 rng(77);
  const size_t len = 11;
  for (const InverseCase &c : cases) {
    const unsigned k = c.k, m = c.m;
    const EncodedCode code(rng, k, m, len);
    const std::vector<const uint16_t *> &all = code.all;
    fft::Shards got(k + m, len);
    std::vector<const uint16_t *> in(k + m, nullptr);
    std::vector<uint16_t *> out(k + m);
    for (unsigned s : c.sources) in[s] = all[s];
    for (unsigned s = 0; s < k + m; ++s) out[s] = got[s];
    for (fft::Order order : {fft::Order::kLayers, fft::Order::kRadix4, fft::Order::kRadix8}) {
      auto p = fft::inverse_decode_program(k, m, c.sources, c.targets, order);
      const std::string what = std::to_string(k) + ":" + std::to_string(m) + " targets " +
                               std::to_string(c.targets.front()) + ".. (" + std::to_string(c.targets.size()) + ")";
      ASSERT_EQ(p.has_value(), c.takes) << what;
      if (!p) continue;
      fft::run_program(*p, len, in.data(), out.data());
      for (unsigned t : c.targets) ASSERT_TRUE(std::equal(all[t], all[t] + len, got[t])) << what << " shard " << t;
      // About one encode's butterflies: never more than the encoder's plus one chunk's.
      auto ep = fft::encode_program(k, m, order);
      EXPECT_LE(p->ops.size(), ep->ops.size() + 2 * fft::geometry(k, m)->chunk * 8) << what;
    }
  }
}

// inverse_decode_sources: where it answers, k present shards the inverted encoder takes and
// restores the targets from; random patterns of both rates, including those it must refuse.
TEST(RsFftProgram, InverseDecodeSourcesAreTakenAndRestore) {
  std::mt19937_64 rng(78);
  const size_t len = 5;
  size_t answered = 0, refused = 0;
  for (auto [k, m] : {std::pair{10u, 4u}, {32u, 32u}, {64u, 16u}, {4u, 10u}, {8u, 20u}, {3u, 9u}}) {
    const EncodedCode code(rng, k, m, len);
    const std::vector<const uint16_t *> &all = code.all;
    fft::Shards got(k + m, len);
    std::vector<const uint16_t *> in(k + m);
    std::vector<uint16_t *> out(k + m);
    for (unsigned s = 0; s < k + m; ++s) out[s] = got[s];
    const size_t C = fft::geometry(k, m)->chunk;
    for (int t = 0; t < 40; ++t) {
      // Lose a run of shards inside one chunk of originals (high rate) or of the originals and
      // recovery (low rate), sometimes one more anywhere.
      std::vector<bool> present(k + m, true);
      const unsigned first = unsigned(rng() % (k + m)), run = 1 + unsigned(rng() % C);
      for (unsigned s = first; s < std::min<unsigned>(k + m, first + run); ++s) present[s] = false;
      if (t % 4 == 3) present[rng() % (k + m)] = false;
      std::vector<unsigned> targets;
      for (unsigned s = 0; s < k + m; ++s)
        if (!present[s]) targets.push_back(s);
      if (k + m - targets.size() < k) continue;
      const auto sources = fft::inverse_decode_sources(k, m, present, targets);
      if (!sources) {
        ++refused;
        continue;
      }
      ++answered;
      ASSERT_EQ(sources->size(), k);
      ASSERT_TRUE(std::is_sorted(sources->begin(), sources->end()));
      std::fill(in.begin(), in.end(), nullptr);
      for (unsigned s : *sources) {
        ASSERT_TRUE(present[s]) << s;
        in[s] = all[s];
      }
      auto p = fft::inverse_decode_program(k, m, *sources, targets);
      ASSERT_TRUE(p) << k << ":" << m << " first lost " << targets.front();
      fft::run_program(*p, len, in.data(), out.data());
      for (unsigned s : targets) ASSERT_TRUE(std::equal(all[s], all[s] + len, got[s])) << k << ":" << m << " " << s;
    }
  }
  EXPECT_GT(answered, 20u);
  EXPECT_GT(refused, 20u);
}

// inverse_decode_reads: where the inverse reads missing shards too, those restored first from
// the sources by decode_matrix, then the inverse restores the rest - every answer checked
// byte for byte; patterns that lose recovery shards (high rate) or originals (low rate) as
// well as a run the inverse takes.
TEST(RsFftProgram, InverseDecodeReadsRestoreAfterFirst) {
  std::mt19937_64 rng(79);
  const size_t len = 5;
  size_t with_first = 0;
  for (auto [k, m] : {std::pair{10u, 4u}, {32u, 32u}, {64u, 16u}, {4u, 10u}, {8u, 20u}, {16u, 16u}}) {
    const EncodedCode code(rng, k, m, len);
    const std::vector<const uint16_t *> &all = code.all;
    fft::Shards got(k + m, len);
    std::vector<const uint16_t *> in(k + m);
    std::vector<uint16_t *> out(k + m);
    const fft::Geometry g = *fft::geometry(k, m);
    for (int t = 0; t < 40; ++t) {
      std::vector<bool> present(k + m, true);
      // A run inside one chunk of originals (high) or of recovery shards (low), then a few
      // shards of the other kind.
      const size_t C = g.chunk;
      if (g.rate == fft::Rate::kHigh) {
        const size_t c0 = rng() % ((k + C - 1) / C) * C;
        for (size_t s = c0; s < std::min<size_t>(k, c0 + C); ++s) present[s] = rng() % 3 != 0;
        present[c0] = false;
        for (unsigned r = unsigned(rng() % 3); r-- > 0;) present[k + rng() % m] = false;
        if (t % 3 == 2) present[rng() % k] = false;  // perhaps in another chunk
      } else {
        for (unsigned s = k; s < k + m; ++s) present[s] = rng() % 3 != 0;
        for (unsigned r = 1 + unsigned(rng() % 2); r-- > 0;) present[rng() % k] = false;
      }
      std::vector<unsigned> targets;
      for (unsigned s = 0; s < k + m; ++s)
        if (!present[s]) targets.push_back(s);
      if (k + m - targets.size() < k) continue;
      const auto reads = fft::inverse_decode_reads(k, m, present, targets);
      if (!reads) continue;
      const std::string what = std::to_string(k) + ":" + std::to_string(m) + " trial " + std::to_string(t);
      ASSERT_EQ(reads->sources.size(), k) << what;
      ASSERT_TRUE(std::is_sorted(reads->sources.begin(), reads->sources.end())) << what;
      for (unsigned s : reads->sources) ASSERT_TRUE(present[s]) << what << " source " << s;
      // first and the inverse's targets split the targets the inverse does not read.
      std::vector<unsigned> both = reads->first;
      for (unsigned s : reads->first) ASSERT_FALSE(present[s]) << what;
      for (unsigned s : reads->targets) ASSERT_FALSE(present[s]) << what;
      for (unsigned s : reads->targets)
        ASSERT_TRUE(std::find(reads->first.begin(), reads->first.end(), s) == reads->first.end()) << what;
      // Restore `first` from the sources as a matrix (of the sources alone: present = them).
      std::vector<bool> from(k + m, false);
      for (unsigned s : reads->sources) from[s] = true;
      std::vector<std::vector<uint16_t>> firsts(reads->first.size(), std::vector<uint16_t>(len));
      if (!reads->first.empty()) {
        ++with_first;
        auto coeffs = fft::decode_matrix(k, m, from, reads->sources, reads->first);
        ASSERT_TRUE(coeffs.ok()) << what;
        for (size_t f = 0; f < reads->first.size(); ++f)
          for (size_t e = 0; e < len; ++e) {
            uint16_t v = 0;
            for (size_t i = 0; i < k; ++i)
              v ^= fft::mul((*coeffs)[f * k + i], all[reads->sources[i]][e]);
            firsts[f][e] = v;
          }
      }
      std::fill(in.begin(), in.end(), nullptr);
      std::vector<unsigned> read = reads->sources;
      for (unsigned s : reads->sources) in[s] = all[s];
      for (size_t f = 0; f < reads->first.size(); ++f) {
        in[reads->first[f]] = firsts[f].data();
        read.push_back(reads->first[f]);
      }
      auto p = fft::inverse_decode_program(k, m, read, reads->targets);
      ASSERT_TRUE(p) << what;
      for (unsigned s = 0; s < k + m; ++s) out[s] = got[s];
      fft::run_program(*p, len, in.data(), out.data());
      for (size_t f = 0; f < reads->first.size(); ++f)
        ASSERT_TRUE(std::equal(firsts[f].begin(), firsts[f].end(), all[reads->first[f]])) << what;
      for (unsigned s : reads->targets) ASSERT_TRUE(std::equal(all[s], all[s] + len, got[s])) << what << " " << s;
    }
  }
  EXPECT_GT(with_first, 30u);
}

// Chunk L is chosen among the chunks holding a target: restoring two originals of chunk 0
// while chunk 1 misses five others (not asked for) inverts chunk 0 and restores chunk 1's
// five first.
TEST(RsFftProgram, InverseDecodeReadsPicksAChunkHoldingTargets) {
  const unsigned k = 64, m = 16;  // high rate, C = 16: four chunks of originals
  std::vector<bool> present(k + m, true);
  for (unsigned s : {3u, 9u, 16u, 17u, 20u, 25u, 31u, 64u + 5u}) present[s] = false;
  const auto reads = fft::inverse_decode_reads(k, m, present, {3u, 9u});
  ASSERT_TRUE(reads);
  EXPECT_EQ(reads->targets, (std::vector<unsigned>{3u, 9u}));
  EXPECT_EQ(reads->first, (std::vector<unsigned>{16u, 17u, 20u, 25u, 31u, 69u}));
  EXPECT_EQ(reads->sources.size(), k);
  // A caller's bound on first: the same answer up to its size, none below it.
  const auto bounded = fft::inverse_decode_reads(k, m, present, {3u, 9u}, fft::Gf::k16, 6);
  ASSERT_TRUE(bounded);
  EXPECT_EQ(bounded->first, reads->first);
  EXPECT_EQ(bounded->sources, reads->sources);
  EXPECT_FALSE(fft::inverse_decode_reads(k, m, present, {3u, 9u}, fft::Gf::k16, 5));
  // A bound does not refuse an inverse that restores nothing first.
  std::vector<bool> direct(k + m, true);
  direct[3] = direct[9] = false;
  const auto none_first = fft::inverse_decode_reads(k, m, direct, {3u, 9u}, fft::Gf::k16, 0);
  ASSERT_TRUE(none_first);
  EXPECT_TRUE(none_first->first.empty());
}

// ---------------------------------------------------------------- matrix form

// G (m x k): column i is the encoding of the unit vector e_i (one element per shard).
std::vector<std::vector<uint16_t>> generator(unsigned k, unsigned m) {
  std::vector<std::vector<uint16_t>> g(m, std::vector<uint16_t>(k));
  for (unsigned i = 0; i < k; ++i) {
    fft::Shards o(k, 1), r(m, 1);
    o[i][0] = 1;
    std::vector<const uint16_t *> in;
    std::vector<uint16_t *> out;
    for (unsigned t = 0; t < k; ++t) in.push_back(o[t]);
    for (unsigned j = 0; j < m; ++j) out.push_back(r[j]);
    EXPECT_TRUE(fft::encode(k, m, 1, in.data(), out.data()).ok());
    for (unsigned j = 0; j < m; ++j) g[j][i] = r[j][0];
  }
  return g;
}

bool invertible(std::vector<std::vector<uint16_t>> a) {
  const size_t n = a.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    while (p < n && !a[p][c]) ++p;
    if (p == n) return false;
    std::swap(a[p], a[c]);
    const uint16_t iv = fft::inv(a[c][c]);
    for (size_t r = c + 1; r < n; ++r) {
      const uint16_t f = fft::mul(a[r][c], iv);
      for (size_t t = c; t < n; ++t) a[r][t] ^= fft::mul(f, a[c][t]);
    }
  }
  return true;
}

TEST(RsFftMatrix, LinearAndMds) {
  std::mt19937_64 rng(16);
  for (unsigned k = 1; k <= 7; ++k)
    for (unsigned m = 1; m <= 7; ++m) {
      const auto g = generator(k, m);
      // (b) encode of random data = G x data, on 40 element positions.
      const size_t len = 40;
      fft::Shards o = random_shards(rng, k, len), r(m, len);
      std::vector<const uint16_t *> in;
      std::vector<uint16_t *> out;
      for (unsigned i = 0; i < k; ++i) in.push_back(o[i]);
      for (unsigned j = 0; j < m; ++j) out.push_back(r[j]);
      ASSERT_TRUE(fft::encode(k, m, len, in.data(), out.data()).ok());
      for (unsigned j = 0; j < m; ++j)
        for (size_t t = 0; t < len; ++t) {
          uint16_t y = 0;
          for (unsigned i = 0; i < k; ++i) y ^= fft::mul(g[j][i], o[i][t]);
          ASSERT_EQ(r[j][t], y) << k << ":" << m << " row " << j;
        }
      // (a) every k x k submatrix of [I; G] is invertible.
      const unsigned n = k + m;
      for (uint32_t rows = 0; rows < (1u << n); ++rows) {
        if (unsigned(__builtin_popcount(rows)) != k) continue;
        std::vector<std::vector<uint16_t>> a;
        for (unsigned s = 0; s < n; ++s) {
          if (!(rows >> s & 1)) continue;
          if (s < k) {
            std::vector<uint16_t> unit(k, 0);
            unit[s] = 1;
            a.push_back(unit);
          } else {
            a.push_back(g[s - k]);
          }
        }
        ASSERT_TRUE(invertible(a)) << k << ":" << m << " rows " << rows;
      }
    }
}

// ---------------------------------------------------------------- GF(2^8) (Leopard-RS)

TEST(RsFft8, FieldIsLeopardsCantorBasisAndTables) {
  const fft::LchField &f = fft::lch_field(fft::Gf::k8);
  ASSERT_EQ(f.bits, 8u);
  ASSERT_EQ(f.modulus, 255u);
  // An independent GF(2^8) over 0x11D (codes/gf.h) and the basis change of Leopard's ff8.
  const ecjit::codes::Field g = *ecjit::codes::Field::make(8, 0x11D);
  const uint16_t basis[8] = {1, 214, 152, 146, 86, 200, 88, 230};
  for (unsigned i = 1; i < 8; ++i) EXPECT_EQ(g.mul(basis[i], basis[i]) ^ basis[i], basis[i - 1]) << i;
  std::vector<uint16_t> phi(256, 0), phi_inv(256, 0);
  for (unsigned e = 1; e < 256; ++e) phi[e] = uint16_t(phi[e & (e - 1)] ^ basis[__builtin_ctz(e)]);
  for (unsigned e = 0; e < 256; ++e) phi_inv[phi[e]] = uint16_t(e);
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0; b < 256; b += 7)
      ASSERT_EQ(f.mul(uint16_t(a), uint16_t(b)), phi_inv[g.mul(phi[a], phi[b])]) << a << " " << b;
  // Logs to the base phi^-1(X): exp(1) is the element X.
  EXPECT_EQ(phi[f.exp[1]], 2u);
  for (unsigned a = 1; a < 256; ++a) ASSERT_EQ(f.exp[f.log[a]], a);
  // add_mod keeps logs below 2^8 and mod 255.
  for (unsigned a = 0; a <= 255; ++a)
    for (unsigned b = 0; b <= 255; b += 5) ASSERT_EQ(f.add_mod(uint16_t(a), uint16_t(b)) % 255, (a + b) % 255);
  // Twiddles: log of shat_j(x) at x = i + 1 - 2^j, by the definition over this field.
  for (unsigned i = 0; i < 255; ++i) {
    const unsigned j = unsigned(__builtin_ctz(i + 1)), x = i + 1 - (1u << j);
    auto s = [&](unsigned y) {  // s_j(y) = prod over w < 2^j of (y + w)
      uint16_t p = 1;
      for (unsigned w = 0; w < (1u << j); ++w) p = f.mul(p, uint16_t(y ^ w));
      return p;
    };
    const uint16_t v = s(x), norm = s(1u << j);
    const uint16_t want = v ? f.log[f.mul(v, f.exp[255 - f.log[norm]])] : uint16_t(255);
    ASSERT_EQ(f.skew[i], want) << i;
  }
}

TEST(RsFft8, GeometryIsTheHighRateWithinTheField) {
  struct Case { unsigned k, m; bool ok; };
  const Case cases[] = {{1, 1, true},   {3, 5, true},   {10, 4, true},   {128, 128, true}, {192, 64, true},
                        {255, 1, true}, {1, 128, true}, {190, 50, true}, {6, 250, false},  {200, 57, false},
                        {129, 128, false}, {256, 1, false}, {0, 1, false}, {1, 0, false}};
  for (const Case &c : cases) {
    auto g = fft::geometry(c.k, c.m, fft::Gf::k8);
    ASSERT_EQ(g.ok(), c.ok) << c.k << ":" << c.m;
    if (!c.ok) {
      EXPECT_EQ(g.status().code(), StatusCode::kInvalidSpec);
      EXPECT_NE(g.status().message().find("next_pow2(m) + k <= 256"), std::string::npos) << g.status().message();
      continue;
    }
    EXPECT_EQ(g->rate, fft::Rate::kHigh) << c.k << ":" << c.m;
    EXPECT_EQ(g->gf, fft::Gf::k8);
    EXPECT_LE(g->decode_work, 256u);
  }
  // Any nonzero length; elements are the bytes in order.
  EXPECT_TRUE(fft::check_shard_bytes(1, fft::Gf::k8).ok());
  EXPECT_TRUE(fft::check_shard_bytes(63, fft::Gf::k8).ok());
  EXPECT_EQ(fft::check_shard_bytes(0, fft::Gf::k8).code(), StatusCode::kShardSize);
  Bytes b = {1, 2, 250};
  std::vector<uint16_t> e(3);
  fft::unpack_shard(b.data(), 3, e.data(), fft::Gf::k8);
  EXPECT_EQ(e, (std::vector<uint16_t>{1, 2, 250}));
}

TEST(RsFft8, EveryErasureSetOfSmallCodes) {
  std::mt19937_64 rng(8);
  for (unsigned k = 1; k <= 7; ++k)
    for (unsigned m = 1; m <= 7; ++m) {
      const size_t bytes = 61 + (k + m) % 5;
      std::vector<Bytes> orig;
      for (unsigned i = 0; i < k; ++i) orig.push_back(random_bytes(rng, bytes));
      const auto rec = encode(k, m, orig, fft::Gf::k8);
      const unsigned n = k + m;
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        if (unsigned(__builtin_popcount(mask)) > m) continue;
        std::vector<bool> keep(n);
        for (unsigned s = 0; s < n; ++s) keep[s] = !(mask >> s & 1);
        check_decode(k, m, orig, rec, keep, std::to_string(k) + ":" + std::to_string(m) + " gf=8 lost mask " +
                                                std::to_string(mask), fft::Gf::k8);
        if (HasFatalFailure()) return;
      }
    }
}

TEST(RsFft8, RandomErasuresWideCodesAndPrograms) {
  random_round_trips(128, 128, 64, 4, 20, fft::Gf::k8);
  random_round_trips(190, 50, 70, 4, 21, fft::Gf::k8);
  random_round_trips(1, 128, 64, 3, 22, fft::Gf::k8);
  random_round_trips(250, 4, 65, 4, 23, fft::Gf::k8);
  random_round_trips(20, 100, 64, 4, 24, fft::Gf::k8);
  uint64_t seed = 300;
  for (auto km : {std::array<unsigned, 2>{1, 1}, {3, 5}, {5, 3}, {10, 4}, {100, 20}, {20, 100}, {128, 128}})
    check_programs(km[0], km[1], 7, seed++, fft::Gf::k8);
}

// decode_matrix over GF(2^8): the rows times the shards read give the lost shards.
TEST(RsFft8, DecodeMatrixEqualsTheTransforms) {
  const fft::LchField &f = fft::lch_field(fft::Gf::k8);
  std::mt19937_64 rng(78);
  for (auto km : {std::array<unsigned, 2>{2, 2}, {10, 4}, {32, 32}, {100, 20}}) {
    const unsigned k = km[0], m = km[1], n = k + m;
    const size_t len = 5;
    fft::Shards orig = random_shards(rng, k, len, fft::Gf::k8), rec(m, len);
    std::vector<const uint16_t *> in(n);
    std::vector<uint16_t *> rp(m);
    for (unsigned i = 0; i < k; ++i) in[i] = orig[i];
    for (unsigned j = 0; j < m; ++j) rp[j] = rec[j], in[k + j] = rec[j];
    ASSERT_TRUE(fft::encode(k, m, len, in.data(), rp.data(), fft::Gf::k8).ok());
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<bool> present(n, true);
      for (unsigned e = 0; e < 1 + rng() % m; ++e) present[rng() % n] = false;
      std::vector<unsigned> sources, targets;
      for (unsigned s = 0; s < n; ++s) (present[s] ? sources : targets).push_back(s);
      auto mat = fft::decode_matrix(k, m, present, sources, targets, fft::Gf::k8);
      ASSERT_TRUE(mat.ok()) << mat.status().to_string();
      for (size_t t = 0; t < targets.size(); ++t)
        for (size_t e = 0; e < len; ++e) {
          uint16_t acc = 0;
          for (size_t i = 0; i < sources.size(); ++i) acc ^= f.mul((*mat)[t * sources.size() + i], in[sources[i]][e]);
          ASSERT_EQ(acc, in[targets[t]][e]) << k << ":" << m << " target " << targets[t];
        }
    }
  }
}

// ---------------------------------------------------------------- reed-solomon-simd

// A known-answer file (format in its header): our recovery shards equal the other codec's,
// and its shards (printed in full for small cases) decode with us.
void check_known_answers(const char *path, fft::Gf gf, unsigned min_cases, unsigned min_full) {
  unsigned cases = 0, full = 0;
  for (const ecjit::test::KatCase &c : ecjit::test::read_known_answers(path)) {
    ++cases;
    const auto ours = encode(c.k, c.m, c.orig, gf);
    for (unsigned j = 0; j < c.m; ++j) {
      EXPECT_EQ(c.rec_hash[j], fnv1a64(ours[j].data(), c.bytes)) << "recovery " << j << " of case " << c.name();
      if (!c.rec[j].empty()) EXPECT_EQ(c.rec[j], ours[j]) << "recovery " << j << " of case " << c.name();
    }
    // Decode from the other codec's recovery shards (ours where only a hash was stored) with
    // as many originals lost as possible, lowest indices first.
    std::vector<Bytes> rec = ours;
    if (c.full()) rec = c.rec, ++full;
    std::vector<bool> keep(c.k + c.m, true);
    for (unsigned i = 0; i < std::min(c.k, c.m); ++i) keep[i] = false;
    check_decode(c.k, c.m, c.orig, rec, keep, "KAT case " + c.name(), gf);
  }
  EXPECT_GE(cases, min_cases);
  EXPECT_GE(full, min_full);
}

// test/data/rs_fft_kat.txt: reed-solomon-simd's GF(2^16) code.
TEST(RsFftCompat, KnownAnswersOfReedSolomonSimd) { check_known_answers(ECJIT_RS_FFT_KAT, fft::Gf::k16, 50, 10); }

// test/data/rs_fft8_kat.txt: klauspost/reedsolomon's Leopard GF(2^8) code (bench/leopard8).
TEST(RsFftCompat, KnownAnswersOfKlauspostLeopard8) { check_known_answers(ECJIT_RS_FFT8_KAT, fft::Gf::k8, 45, 12); }

// Live differential run against bench/rs_simd (see bench/rs_simd/README.md): runs an oracle
// binary (rs_simd or leopard8, the same protocol) on `input`.
std::string rs_simd_run(const std::string &bin, const std::string &args, const Bytes &input) {
  const std::string dir = testing::TempDir();
  const std::string in = dir + "rs_fft_in.bin", out = dir + "rs_fft_out.bin";
  std::ofstream(in, std::ios::binary).write((const char *)input.data(), std::streamsize(input.size()));
  const std::string cmd = "'" + bin + "' " + args + " < '" + in + "' > '" + out + "'";
  if (std::system(cmd.c_str()) != 0) return std::string("\x01") + cmd;
  std::ifstream f(out, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Each case (k, m, shard bytes): random originals encoded by us and by the oracle `bin` (the
// same recovery shards), min(k, m) random shards lost, we decode the oracle's shards and the
// oracle decodes ours.
void check_live_differential(const std::string &bin, const std::vector<std::array<unsigned, 3>> &cases,
                             std::mt19937_64 &rng, fft::Gf gf) {
  for (auto [k, m, bytes] : cases) {
    const std::string what = std::to_string(k) + ":" + std::to_string(m) + " x " + std::to_string(bytes) +
                             (gf == fft::Gf::k8 ? " gf=8" : "");
    std::vector<Bytes> orig;
    Bytes all;
    for (unsigned i = 0; i < k; ++i) {
      orig.push_back(random_bytes(rng, bytes));
      all.insert(all.end(), orig.back().begin(), orig.back().end());
    }
    const auto ours = encode(k, m, orig, gf);
    const std::string dims = std::to_string(k) + " " + std::to_string(m) + " " + std::to_string(bytes);
    const std::string got = rs_simd_run(bin, "encode " + dims, all);
    ASSERT_EQ(got.size(), size_t(m) * bytes) << what << ": " << got.substr(0, 200);
    std::vector<Bytes> theirs;
    for (unsigned j = 0; j < m; ++j) {
      theirs.emplace_back(got.begin() + j * bytes, got.begin() + (j + 1) * bytes);
      ASSERT_EQ(theirs[j], ours[j]) << what << ": recovery " << j;
    }
    std::vector<unsigned> ids(k + m);
    for (unsigned s = 0; s < k + m; ++s) ids[s] = s;
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<bool> keep(k + m, true);
    for (unsigned i = 0; i < std::min(k, m); ++i) keep[ids[i]] = false;
    check_decode(k, m, orig, theirs, keep, what, gf);
    Bytes input;
    for (unsigned s = 0; s < k + m; ++s) input.push_back(keep[s] ? 1 : 0);
    Bytes expect;
    for (unsigned s = 0; s < k + m; ++s) {
      const Bytes &b = s < k ? orig[s] : ours[s - k];
      if (keep[s]) input.insert(input.end(), b.begin(), b.end());
      else if (s < k) expect.insert(expect.end(), b.begin(), b.end());
    }
    const std::string restored = rs_simd_run(bin, "decode " + dims, input);
    ASSERT_EQ(restored, std::string(expect.begin(), expect.end())) << what << ": the oracle's decode";
  }
}

TEST(RsFftCompat, LiveDifferentialAgainstReedSolomonSimd) {
  const char *bin = std::getenv("ECJIT_RS_SIMD_BIN");
  if (!bin || !*bin)
    GTEST_SKIP() << "set ECJIT_RS_SIMD_BIN to the binary that bench/rs_simd/build.sh prints "
                    "(bench/rs_simd/target/release/rs_simd) to run the live differential test";
  std::mt19937_64 rng(17);
  std::vector<std::array<unsigned, 3>> cases = {{1024, 1024, 64}, {16384, 16384, 64},
                                                {1, 1, 2},        {65535, 1, 2},
                                                {1, 65535, 2},    {32768, 32768, 2}};
  for (int t = 0; t < 12; ++t) {
    unsigned k = 1 + unsigned(rng() % 3000), m = 1 + unsigned(rng() % 3000);
    cases.push_back({k, m, 2 * (1 + unsigned(rng() % 100))});
  }
  check_live_differential(bin, cases, rng, fft::Gf::k16);
}

// Live differential run against bench/leopard8 (klauspost/reedsolomon's Leopard GF(2^8)).
TEST(RsFftCompat, LiveDifferentialAgainstKlauspostLeopard8) {
  const char *bin = std::getenv("ECJIT_LEOPARD8_BIN");
  if (!bin || !*bin)
    GTEST_SKIP() << "set ECJIT_LEOPARD8_BIN to the binary that bench/leopard8/build.sh prints "
                    "(bench/leopard8/leopard8) to run the live differential test";
  std::mt19937_64 rng(18);
  std::vector<std::array<unsigned, 3>> cases = {{128, 128, 64}, {255, 1, 64}, {1, 128, 128}, {190, 50, 192}};
  for (int t = 0; t < 16; ++t) {
    const unsigned m = 1 + unsigned(rng() % 128);
    unsigned C = 1;
    while (C < m) C <<= 1;
    const unsigned k = 1 + unsigned(rng() % (256 - C));
    cases.push_back({k, m, 64 * (1 + unsigned(rng() % 4))});
  }
  check_live_differential(bin, cases, rng, fft::Gf::k8);
}

}  // namespace

// decode_matrix: the decode as |targets| x |sources| coefficients equals the transforms.
TEST(RsFftProgram, DecodeMatrixEqualsTheTransforms) {
  const unsigned sizes[][2] = {{1, 1}, {3, 5}, {5, 3}, {10, 4}, {32, 32}, {100, 20}, {20, 100}};
  std::mt19937_64 rng(77);
  for (auto &sz : sizes) {
    const unsigned k = sz[0], m = sz[1], n = k + m;
    const size_t len = 5;
    fft::Shards orig = random_shards(rng, k, len), rec(m, len);
    std::vector<const uint16_t *> in(n);
    std::vector<uint16_t *> rp(m);
    for (unsigned i = 0; i < k; ++i) in[i] = orig[i];
    for (unsigned j = 0; j < m; ++j) rp[j] = rec[j], in[k + j] = rec[j];
    ASSERT_TRUE(fft::encode(k, m, len, in.data(), rp.data()).ok());
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<bool> present(n, true);
      for (unsigned e = 0; e < 1 + rng() % m; ++e) present[rng() % n] = false;
      std::vector<unsigned> sources, targets;
      for (unsigned s = 0; s < n; ++s) (present[s] ? sources : targets).push_back(s);
      auto mat = fft::decode_matrix(k, m, present, sources, targets);
      ASSERT_TRUE(mat.ok()) << mat.status().to_string();
      // The same matrix from a core program made once (what FftEngine keeps for every set).
      auto core = fft::decode_core_program(k, m);
      ASSERT_TRUE(core.ok());
      auto again = fft::decode_matrix(k, m, present, sources, targets, fft::Gf::k16, &*core);
      ASSERT_TRUE(again.ok()) << again.status().to_string();
      EXPECT_EQ(*again, *mat) << k << ":" << m;
      for (size_t t = 0; t < targets.size(); ++t)
        for (size_t e = 0; e < len; ++e) {
          uint16_t acc = 0;
          for (size_t i = 0; i < sources.size(); ++i) acc ^= fft::mul((*mat)[t * sources.size() + i], in[sources[i]][e]);
          ASSERT_EQ(acc, in[targets[t]][e]) << k << ":" << m << " target " << targets[t] << " element " << e;
        }
    }
  }
  std::vector<bool> present(6, true);
  present[2] = false;
  EXPECT_EQ(fft::decode_matrix(4, 2, present, {0, 1, 2}, {3}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fft::decode_matrix(4, 2, present, {0, 1}, {1}).status().code(), StatusCode::kInvalidArgument);
  // A core of another size is refused, naming the sizes.
  auto other = fft::decode_core_program(32, 32);
  ASSERT_TRUE(other.ok());
  auto wrong = fft::decode_matrix(4, 2, present, {0, 1, 3, 4}, {2}, fft::Gf::k16, &*other);
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("not this code's"), std::string::npos) << wrong.status().to_string();
}
