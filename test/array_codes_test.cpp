// EVENODD, RDP and STAR against element-by-element references written straight from the
// papers' parity chains (not from the bit-matrices): encode through the JIT for every p up
// to 13 and shortened widths, every erasure set up to m, the codec operations, the spec
// rules, and RDP's optimal XOR count (Plank et al. 2009, sec. 2.3).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/mds.h"
#include "codes/xor_orders.h"
#include "codes/xor_schedule.h"
#include "ecjit/ecjit.h"

using namespace ecjit;

namespace {

// One block of a stripe as the papers draw it: element (i, j) = packet i of column j, with
// rows 0..p-2 stored and row p-1 the imaginary zero row. Columns 0..k-1 are data; the rest
// of the code's width (p for EVENODD / STAR, p - 1 for RDP) is zero (shortening).
struct Array {
  unsigned p, packet;
  std::vector<const uint8_t *> data;  // k columns, this block
  const uint8_t *at(unsigned i, unsigned j) const {
    static const std::vector<uint8_t> zero(1 << 20, 0);
    if (i == p - 1 || j >= data.size()) return zero.data();
    return data[j] + size_t(i) * packet;
  }
};

void xor_into(uint8_t *dst, const uint8_t *src, size_t n) {
  for (size_t b = 0; b < n; ++b) dst[b] ^= src[b];
}

// EVENODD / STAR: horizontal parity, then the slope +1 diagonals (and for STAR slope -1)
// each XORed with the adjuster S, the diagonal that runs through the imaginary row.
void ref_evenodd_star(const Array &a, unsigned m, uint8_t *const *parity) {
  const unsigned p = a.p, L = a.packet;
  for (unsigned i = 0; i + 1 < p; ++i) {
    uint8_t *P = parity[0] + size_t(i) * L;
    memset(P, 0, L);
    for (unsigned j = 0; j < p; ++j) xor_into(P, a.at(i, j), L);
  }
  for (unsigned q = 1; q < m; ++q) {
    const int slope = q == 1 ? 1 : -1;
    std::vector<uint8_t> S(L, 0);
    for (unsigned j = 1; j < p; ++j) xor_into(S.data(), a.at(unsigned((int(p) - 1 - slope * int(j) + int(p) * 2) % int(p)), j), L);
    for (unsigned i = 0; i + 1 < p; ++i) {
      uint8_t *Q = parity[q] + size_t(i) * L;
      memcpy(Q, S.data(), L);
      for (unsigned j = 0; j < p; ++j)
        xor_into(Q, a.at(unsigned((int(i) - slope * int(j) + int(p) * 2) % int(p)), j), L);
    }
  }
}

// RDP: row parity over the p - 1 data columns; then diagonal d over the data and the row
// parity column (column p - 1), diagonal p - 1 not stored.
void ref_rdp(const Array &a, uint8_t *const *parity) {
  const unsigned p = a.p, L = a.packet;
  for (unsigned i = 0; i + 1 < p; ++i) {
    uint8_t *P = parity[0] + size_t(i) * L;
    memset(P, 0, L);
    for (unsigned j = 0; j + 1 < p; ++j) xor_into(P, a.at(i, j), L);
  }
  for (unsigned d = 0; d + 1 < p; ++d) {
    uint8_t *Q = parity[1] + size_t(d) * L;
    memset(Q, 0, L);
    for (unsigned j = 0; j < p; ++j) {
      const unsigned i = (d + p - j) % p;
      if (i == p - 1) continue;
      xor_into(Q, j == p - 1 ? parity[0] + size_t(i) * L : a.at(i, j), L);
    }
  }
}

// The reference parity of every block of len bytes.
std::vector<std::vector<uint8_t>> ref_parity(const CodeSpec &s, const std::vector<std::vector<uint8_t>> &data,
                                             size_t len) {
  const unsigned p = s.w + 1;
  const size_t block = s.block_bytes();
  std::vector<std::vector<uint8_t>> parity(s.m, std::vector<uint8_t>(len));
  for (size_t off = 0; off < len; off += block) {
    Array a{p, s.packet, {}};
    for (const auto &d : data) a.data.push_back(d.data() + off);
    std::vector<uint8_t *> out;
    for (auto &v : parity) out.push_back(v.data() + off);
    if (s.family == CodeFamily::kRdp) ref_rdp(a, out.data());
    else ref_evenodd_star(a, s.m, out.data());
  }
  return parity;
}

std::shared_ptr<Jit> make_jit() {
  JitOptions o;
  o.disk_cache = false;
  o.tune = false;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return *j;
}

std::vector<std::vector<uint8_t>> random_data(unsigned k, size_t len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> d(k, std::vector<uint8_t>(len));
  for (auto &v : d)
    for (auto &b : v) b = uint8_t(rng());
  return d;
}

TEST(ArrayCodes, EncodeMatchesTheChainReference) {
  auto jit = make_jit();
  size_t checked = 0;
  for (const char *fam : {"evenodd", "rdp", "star"})
    for (unsigned p : {3u, 5u, 7u, 11u, 13u}) {
      const unsigned width = std::string(fam) == "rdp" ? p - 1 : p;
      for (unsigned k : {width, std::max(1u, width - 2), 1u})
        for (unsigned packet : {8u, 40u}) {
          const std::string text = std::string(fam) + ":k=" + std::to_string(k) + ",p=" + std::to_string(p) +
                                   ",packet=" + std::to_string(packet);
          auto spec = CodeSpec::parse(text);
          ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().to_string();
          auto codec = jit->codec(text);
          ASSERT_TRUE(codec.ok()) << text << ": " << codec.status().to_string();
          const size_t len = 3 * spec->block_bytes();
          auto data = random_data(k, len, p * 100 + k);
          const auto want = ref_parity(*spec, data, len);
          std::vector<const uint8_t *> dp;
          for (auto &v : data) dp.push_back(v.data());
          std::vector<std::vector<uint8_t>> got(spec->m, std::vector<uint8_t>(len, 0xee));
          std::vector<uint8_t *> pp;
          for (auto &v : got) pp.push_back(v.data());
          ASSERT_TRUE((*codec)->encode({dp.data(), dp.size()}, {pp.data(), pp.size()}, len).ok());
          for (unsigned r = 0; r < spec->m; ++r) ASSERT_EQ(got[r], want[r]) << text << " parity " << r;
          ++checked;
        }
    }
  EXPECT_EQ(checked, 3u * 5u * 3u * 2u);
}

// Every erasure set of up to m shards rebuilds the stripe (the JIT's decoders against the
// reference parity); the bit-matrix is MDS by the exhaustive check too.
void every_erasure_set(const std::string &text) {
  auto jit = make_jit();
  auto spec = CodeSpec::parse(text);
  ASSERT_TRUE(spec.ok()) << text;
  auto code = codes::build_bitmatrix_code(*spec);
  ASSERT_TRUE(code.ok());
  const codes::MdsReport mds = codes::check_mds(*code);
  EXPECT_TRUE(mds.mds && mds.exhaustive) << text << ": " << mds.to_string();
  auto codec = jit->codec(text);
  ASSERT_TRUE(codec.ok());
  const unsigned k = spec->k, n = spec->k + spec->m;
  const size_t len = 2 * spec->block_bytes();
  auto data = random_data(k, len, n);
  const auto parity = ref_parity(*spec, data, len);
  std::vector<std::vector<uint8_t>> want = data;
  want.insert(want.end(), parity.begin(), parity.end());
  size_t sets = 0;
  for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask) {
    if (unsigned(__builtin_popcountll(mask)) > spec->m) continue;
    std::vector<bool> present(n);
    std::vector<std::vector<uint8_t>> got = want;
    std::vector<uint8_t *> ptrs;
    for (unsigned s = 0; s < n; ++s) {
      present[s] = !((mask >> s) & 1);
      if (!present[s]) memset(got[s].data(), 0x5a, len);
      ptrs.push_back(got[s].data());
    }
    ASSERT_TRUE((*codec)->reconstruct({ptrs.data(), ptrs.size()}, present, len).ok()) << text << " mask " << mask;
    for (unsigned s = 0; s < n; ++s) ASSERT_EQ(got[s], want[s]) << text << " lost mask " << mask << " shard " << s;
    ++sets;
  }
  EXPECT_GT(sets, size_t(n));
}

TEST(ArrayCodes, EveryErasureSetEvenodd) {
  every_erasure_set("evenodd:k=7,p=7,packet=8");
  every_erasure_set("evenodd:k=3,p=5,packet=16");
}
TEST(ArrayCodes, EveryErasureSetRdp) {
  every_erasure_set("rdp:k=6,p=7,packet=8");
  every_erasure_set("rdp:k=4,p=7,packet=24");
}
TEST(ArrayCodes, EveryErasureSetStar) {
  every_erasure_set("star:k=7,p=7,packet=8");
  every_erasure_set("star:k=4,p=5,packet=8");
}

// update and encode_partial follow the reference parity of the new data.
TEST(ArrayCodes, UpdateAndPartialEncode) {
  auto jit = make_jit();
  for (const char *text : {"evenodd:k=5,p=5", "rdp:k=6,p=7", "star:k=5,p=7"}) {
    auto spec = CodeSpec::parse(text);
    ASSERT_TRUE(spec.ok());
    auto codec = jit->codec(text);
    ASSERT_TRUE(codec.ok());
    const unsigned k = spec->k, m = spec->m;
    const size_t len = 4 * spec->block_bytes();
    auto data = random_data(k, len, 3);
    auto parity = ref_parity(*spec, data, len);
    auto next = data;
    std::mt19937_64 rng(9);
    for (auto &b : next[1]) b = uint8_t(rng());
    for (auto &b : next[k - 1]) b = uint8_t(rng());
    const uint8_t *olds[] = {data[1].data(), data[k - 1].data()}, *news[] = {next[1].data(), next[k - 1].data()};
    std::vector<uint8_t *> pp;
    for (auto &v : parity) pp.push_back(v.data());
    ASSERT_TRUE((*codec)->update(ShardSet{1, k - 1}, {olds, 2}, {news, 2}, {pp.data(), pp.size()}, len).ok());
    EXPECT_EQ(parity, ref_parity(*spec, next, len)) << text << " update";
    std::vector<std::vector<uint8_t>> acc(m, std::vector<uint8_t>(len, 0));
    std::vector<uint8_t *> ap;
    for (auto &v : acc) ap.push_back(v.data());
    for (unsigned d = 0; d < k; ++d) ASSERT_TRUE((*codec)->encode_partial(d, next[d].data(), {ap.data(), m}, len).ok());
    EXPECT_EQ(acc, ref_parity(*spec, next, len)) << text << " encode_partial";
  }
}

TEST(ArrayCodes, SpecRulesAreNamedAndDefaultsRoundTrip) {
  struct Bad {
    const char *text, *says;
  };
  for (const Bad &b : {Bad{"evenodd:k=6,p=5", "k <= p"}, Bad{"rdp:k=5,p=5", "k <= p - 1"},
                       Bad{"star:k=4,p=9", "p prime"}, Bad{"rdp:k=2,p=2", "p prime"},
                       Bad{"evenodd:k=3,m=3", "m = 2"}, Bad{"star:k=3,m=2", "m = 3"},
                       Bad{"rdp:k=3,w=4", "unknown key 'w'"}, Bad{"evenodd:k=3,p=x", "not a decimal"}}) {
    auto s = CodeSpec::parse(b.text);
    ASSERT_FALSE(s.ok()) << b.text;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidSpec) << b.text;
    EXPECT_NE(s.status().message().find(b.says), std::string::npos) << b.text << ": " << s.status().message();
  }
  struct Default {
    const char *text, *canonical;
  };
  for (const Default &d : {Default{"evenodd:k=4", "evenodd:k=4,m=2,p=5,packet=64"},
                           Default{"rdp:k=4", "rdp:k=4,m=2,p=5,packet=64"},
                           Default{"rdp:k=5", "rdp:k=5,m=2,p=7,packet=64"},
                           Default{"star:k=2", "star:k=2,m=3,p=3,packet=64"},
                           Default{"star:k=11,p=13,packet=8", "star:k=11,m=3,p=13,packet=8"}}) {
    auto s = CodeSpec::parse(d.text);
    ASSERT_TRUE(s.ok()) << d.text << ": " << s.status().to_string();
    EXPECT_EQ(s->to_string(), d.canonical);
    auto again = CodeSpec::parse(s->to_string());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *s);
  }
}

// Plank et al. 2009, sec. 2.3: RDP encodes with the optimal k - 1 XORs per coding word when k = p - 1;
// the scheduled bit-matrix reaches it (the diagonal rows reuse the row parity).
TEST(ArrayCodes, RdpEncodesWithTheOptimalXorCount) {
  for (unsigned p : {5u, 7u, 11u, 13u}) {
    auto spec = CodeSpec::parse("rdp:k=" + std::to_string(p - 1) + ",p=" + std::to_string(p));
    ASSERT_TRUE(spec.ok());
    auto code = codes::build_bitmatrix_code(*spec);
    ASSERT_TRUE(code.ok());
    auto best = codes::best_schedule(code->parity);
    ASSERT_TRUE(best.ok());
    const codes::XorProgram &prog = *best;
    ASSERT_TRUE(codes::check_program(prog, code->parity).ok());
    const double per_word = double(prog.xors()) / (2.0 * (p - 1));
    EXPECT_LE(per_word, double(p - 2) + 1e-9) << "p = " << p;
  }
}

// The four loop orders of Luo et al. 2014 compute the bit-matrix reference's parity, any code.
TEST(XorOrders, EveryOrderEncodesLikeTheReference) {
  for (const char *text : {"liberation:k=11,w=11,packet=64", "rdp:k=10,p=11,packet=24", "star:k=11,p=11,packet=8",
                           "cauchy-good:k=6,m=3,w=8,packet=16", "rdp:k=3,p=5,packet=8"}) {
    auto code = codes::build_bitmatrix_code(*CodeSpec::parse(text));
    ASSERT_TRUE(code.ok()) << text;
    const size_t len = 3 * code->block_bytes();
    auto data = random_data(code->k, len, 77);
    std::vector<const uint8_t *> dp;
    for (auto &v : data) dp.push_back(v.data());
    std::vector<std::vector<uint8_t>> want(code->m, std::vector<uint8_t>(len));
    std::vector<uint8_t *> wp;
    for (auto &v : want) wp.push_back(v.data());
    ASSERT_TRUE(codes::ref_bitmatrix_encode(*code, dp.data(),
                                            wp.data(), len)
                    .ok());
    for (codes::XorOrder order : {codes::XorOrder::kPpg, codes::XorOrder::kPwg, codes::XorOrder::kDpg, codes::XorOrder::kDwg}) {
      std::vector<std::vector<uint8_t>> got(code->m, std::vector<uint8_t>(len, 0xcc));
      std::vector<uint8_t *> gp;
      for (auto &v : got) gp.push_back(v.data());
      codes::encode_in_order(code->parity, code->k, code->m, code->w, code->packet, order, dp.data(), gp.data(), len);
      EXPECT_EQ(got, want) << text << " " << codes::xor_order_name(order);
    }
  }
}

}  // namespace
