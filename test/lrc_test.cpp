// lrc:k=,l=,r=: spec rules, maximal recoverability against Huang et al. 2012's rule, local repair reading only the group, minimum_to_decode against brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/ceph_lrc.h"
#include "codes/linear_code.h"
#include "codes/locality.h"
#include "codes/lrc.h"
#include "codes/recoverability.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"

namespace ecjit {
namespace {

std::shared_ptr<Jit> make_jit() {
  JitOptions o;
  o.disk_cache = false;
  o.tune = false;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

// Each spec is refused with kInvalidSpec and a message naming its rule.
template <size_t N>
void expect_refused(const std::pair<const char *, const char *> (&cases)[N]) {
  for (const auto &[text, rule] : cases) {
    auto s = CodeSpec::parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidSpec) << text;
    EXPECT_NE(s.status().message().find(rule), std::string::npos) << text << ": " << s.status().to_string();
  }
}

TEST(LrcSpec, ParsesPrintsAndRoundTrips) {
  auto s = CodeSpec::parse("lrc:k=12,l=2,r=2");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->family, CodeFamily::kLrc);
  EXPECT_EQ(s->k, 12u);
  EXPECT_EQ(s->m, 4u);
  EXPECT_EQ(s->l, 2u);
  EXPECT_EQ(s->r, 2u);
  EXPECT_EQ(s->gf, 8u);
  EXPECT_EQ(s->to_string(), "lrc:k=12,l=2,r=2,gf=8");
  auto again = CodeSpec::parse(s->to_string());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *s);
  auto wide = CodeSpec::parse("lrc:k=24,l=4,r=3,gf=16");
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_EQ(wide->to_string(), "lrc:k=24,l=4,r=3,gf=16");
  EXPECT_NE(*CodeSpec::parse("lrc:k=12,l=3,r=1"), *CodeSpec::parse("lrc:k=12,l=2,r=2"));
}

TEST(LrcSpec, BadParametersNameTheRule) {
  const std::pair<const char *, const char *> cases[] = {
      {"lrc:k=12,l=5,r=2", "l must divide k"},
      {"lrc:k=12,l=2,r=0", "r must be at least 1"},
      {"lrc:k=12,l=0,r=2", "l must be at least 1"},
      {"lrc:k=12,l=2", "missing r="},
      {"lrc:k=12,r=2", "missing l="},
      {"lrc:k=12,m=4,l=2,r=2", "unknown key 'm'"},
      {"lrc:k=250,l=2,r=4", "at most 255"},
      {"lrc:k=12,l=2,r=2,gf=32", "gf=8 or 16"},
      {"lrc:k=12,l=2,r=2,poly=0x11d", "unknown key 'poly'"},
      {"lrc:k=12,l=x,r=2", "not a decimal number"},
  };
  expect_refused(cases);
  EXPECT_TRUE(CodeSpec::parse("lrc:k=250,l=2,r=4,gf=16").ok());
}

// Huang et al. 2012: LRC(12,2,2) decodes every 3 losses and 86% of the 4-loss patterns.
TEST(LrcLayout, AzureTwelveTwoTwoDecodesEveryThreeAndEightySixPercentOfFour) {
  const codes::LrcLayout layout{12, 2, 2};
  std::vector<bool> lost(16, false);
  unsigned three = 0, three_ok = 0, four = 0, four_ok = 0;
  for (uint32_t mask = 0; mask < (1u << 16); ++mask) {
    const int e = __builtin_popcount(mask);
    if (e != 3 && e != 4) continue;
    for (unsigned s = 0; s < 16; ++s) lost[s] = (mask >> s) & 1;
    const bool ok = layout.decodable(lost);
    (e == 3 ? three : four) += 1;
    (e == 3 ? three_ok : four_ok) += ok;
  }
  EXPECT_EQ(three, 560u);
  EXPECT_EQ(three_ok, three);
  EXPECT_EQ(four, 1820u);
  EXPECT_EQ(unsigned(100.0 * four_ok / four + 0.5), 86u) << four_ok << " of " << four;
}

// The built code decodes exactly what the layout's rule admits, over every pattern.
TEST(LrcCode, MaximallyRecoverableOverEveryPattern) {
  for (const char *text : {"lrc:k=4,l=2,r=1", "lrc:k=6,l=2,r=2", "lrc:k=6,l=3,r=2", "lrc:k=12,l=2,r=2",
                           "lrc:k=12,l=3,r=2", "lrc:k=8,l=2,r=3,gf=16", "lrc:k=12,l=1,r=3"}) {
    auto code = codes::build_code(text);
    ASSERT_TRUE(code.ok()) << text << ": " << code.status().to_string();
    const codes::LrcLayout layout = codes::lrc_layout(code->spec);
    EXPECT_EQ(codes::lrc_verified_losses(layout), layout.l + layout.r) << text;
    EXPECT_TRUE(codes::lrc_recovers_all(code->field, layout, code->parity, layout.l + layout.r)) << text;
    // The local rows are the XOR of their group, the global rows full.
    for (unsigned g = 0; g < layout.l; ++g)
      for (unsigned d = 0; d < layout.k; ++d)
        EXPECT_EQ(code->parity.at(g, d), uint64_t(d / layout.group_size() == g)) << text;
    for (unsigned j = 0; j < layout.r; ++j)
      for (unsigned d = 0; d < layout.k; ++d) EXPECT_NE(code->parity.at(layout.l + j, d), 0u) << text;
  }
}

// A stripe encoded by the reference codec, with a check that the local parities are the
// XOR of their groups (independent of the parity matrix).
struct Stripe {
  codes::LinearCode code;
  size_t len;
  std::vector<std::vector<uint8_t>> orig, work;
  std::vector<uint8_t *> ptrs;
  Stripe(const codes::LinearCode &c, size_t l, uint64_t seed) : code(c), len(l) {
    std::mt19937_64 rng(seed);
    const unsigned n = code.n();
    orig.assign(n, std::vector<uint8_t>(len));
    for (unsigned i = 0; i < code.k; ++i)
      for (auto &b : orig[i]) b = uint8_t(rng());
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned i = 0; i < code.k; ++i) d.push_back(orig[i].data());
    for (unsigned i = code.k; i < n; ++i) p.push_back(orig[i].data());
    EXPECT_TRUE(codes::ref_encode(code, d.data(), p.data(), len).ok());
    const unsigned g = code.k / code.spec.l;
    for (unsigned grp = 0; grp < code.spec.l; ++grp)
      for (size_t b = 0; b < len; ++b) {
        uint8_t x = 0;
        for (unsigned i = grp * g; i < (grp + 1) * g; ++i) x ^= orig[i][b];
        EXPECT_EQ(x, orig[code.k + grp][b]);
      }
    work = orig;
    for (auto &w : work) ptrs.push_back(w.data());
  }
};

// Every pattern through the C++ API: decodable ones rebuilt exactly, the others refused
// (kSingular, or kTooManyErasures past m) with nothing written.
TEST(LrcCodec, EveryPatternRebuiltOrRefusedAgainstTheLayoutRule) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  for (const char *text : {"lrc:k=4,l=2,r=1", "lrc:k=6,l=2,r=2", "lrc:k=6,l=3,r=2,gf=16"}) {
    auto code = codes::build_code(text);
    ASSERT_TRUE(code.ok());
    auto codec = jit->codec(text);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const codes::LrcLayout layout = codes::lrc_layout(code->spec);
    const unsigned n = code->n();
    for (size_t len : {size_t(64), size_t(4096 + 32)}) {
      Stripe st(*code, len, n * 131 + len);
      for (uint32_t mask = 1; mask < (1u << n); ++mask) {
        std::vector<bool> present(n), lost(n);
        for (unsigned s = 0; s < n; ++s) {
          lost[s] = (mask >> s) & 1;
          present[s] = !lost[s];
          if (lost[s]) std::memset(st.work[s].data(), 0xEE, len);
        }
        const Status rc = (*codec)->reconstruct(st.ptrs, present, len);
        if (layout.decodable(lost)) {
          ASSERT_TRUE(rc.ok()) << text << " mask " << mask << ": " << rc.to_string();
          for (unsigned s = 0; s < n; ++s) ASSERT_EQ(st.work[s], st.orig[s]) << text << " mask " << mask << " shard " << s;
        } else {
          ASSERT_FALSE(rc.ok()) << text << " mask " << mask;
          EXPECT_TRUE(rc.code() == StatusCode::kSingular || rc.code() == StatusCode::kTooManyErasures)
              << rc.to_string();
          for (unsigned s = 0; s < n; ++s)
            if (lost[s]) ASSERT_TRUE(std::all_of(st.work[s].begin(), st.work[s].end(), [](uint8_t b) { return b == 0xEE; }));
        }
        for (unsigned s = 0; s < n; ++s) st.work[s] = st.orig[s];
      }
    }
  }
}

// One lost shard of lrc:k=12,l=2,r=2 reads its 6 group shards: the others may be absent
// (null), and the decoder says so.
TEST(LrcCodec, OneLossReadsOnlyItsGroup) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  auto code = codes::build_code("lrc:k=12,l=2,r=2");
  ASSERT_TRUE(code.ok());
  auto codec = jit->codec("lrc:k=12,l=2,r=2");
  ASSERT_TRUE(codec.ok());
  const size_t len = 65536;
  Stripe st(*code, len, 7);
  for (unsigned lostshard = 0; lostshard < 14; ++lostshard) {  // data and local parities
    const unsigned grp = lostshard < 12 ? lostshard / 6 : lostshard - 12;
    std::vector<bool> present(16, false);
    std::vector<uint8_t *> ptrs(16, nullptr);
    for (unsigned s = 0; s < 16; ++s) {
      const bool in_group = (s < 12 && s / 6 == grp) || s == 12 + grp;
      if (in_group && s != lostshard) {
        present[s] = true;
        ptrs[s] = st.work[s].data();
      }
    }
    std::vector<uint8_t> out(len, 0xEE);
    ptrs[lostshard] = out.data();
    ShardSet want;
    want.insert(lostshard);
    const Status rc = (*codec)->reconstruct_some(want, ptrs, present, len);
    ASSERT_TRUE(rc.ok()) << lostshard << ": " << rc.to_string();
    EXPECT_EQ(out, st.orig[lostshard]) << lostshard;
    // Every other shard present: reconstruct() still reads the six, and says so.
    std::vector<bool> others(16, true);
    others[lostshard] = false;
    std::fill(out.begin(), out.end(), 0xEE);
    std::vector<uint8_t *> all_ptrs = st.ptrs;
    all_ptrs[lostshard] = out.data();
    ASSERT_TRUE((*codec)->reconstruct(all_ptrs, others, len).ok());
    EXPECT_EQ(out, st.orig[lostshard]) << lostshard;
    const KernelInfo info = (*codec)->decoder_info(others);
    EXPECT_EQ(info.decision.tier, KernelTier::kLocalXor) << info.why;
    EXPECT_EQ(info.decision.local_reads, 6u);
    // minimum_to_decode asks for the same six.
    ShardSet all;
    for (unsigned s = 0; s < 16; ++s)
      if (s != lostshard) all.insert(s);
    auto need = (*codec)->minimum_to_decode(want, all);
    ASSERT_TRUE(need.ok());
    EXPECT_EQ(need->to_vector(), ShardSet::from_mask(present).to_vector()) << lostshard;
  }
  // A global parity reads the data: k shards, by a kernel.
  std::vector<bool> present(16, true);
  present[14] = false;
  EXPECT_NE((*codec)->decoder_info(present).decision.tier, KernelTier::kLocalXor);
}

// Brute force: the fewest available shards whose generator rows span the wanted one's.
size_t fewest_reads(const codes::LinearCode &code, const std::vector<unsigned> &lost) {
  const unsigned n = code.n();
  std::vector<unsigned> avail;
  for (unsigned s = 0; s < n; ++s)
    if (std::find(lost.begin(), lost.end(), s) == lost.end()) avail.push_back(s);
  size_t best = SIZE_MAX;
  for (uint32_t sub = 0; sub < (1u << avail.size()); ++sub) {
    const size_t c = size_t(__builtin_popcount(sub));
    if (c >= best) continue;
    // rank of the chosen rows, and of the chosen rows plus the lost ones
    auto rank = [&](bool with_lost) {
      std::vector<std::vector<uint64_t>> rows;
      for (unsigned i = 0; i < avail.size(); ++i)
        if ((sub >> i) & 1) rows.push_back(code.generator_row(avail[i]));
      if (with_lost)
        for (unsigned t : lost) rows.push_back(code.generator_row(t));
      size_t r = 0;
      for (unsigned col = 0; col < code.k && r < rows.size(); ++col) {
        size_t p = r;
        while (p < rows.size() && rows[p][col] == 0) ++p;
        if (p == rows.size()) continue;
        std::swap(rows[p], rows[r]);
        const uint64_t inv = code.field.inv(rows[r][col]);
        for (size_t i = 0; i < rows.size(); ++i) {
          if (i == r || !rows[i][col]) continue;
          const uint64_t e = code.field.mul(rows[i][col], inv);
          for (unsigned t = 0; t < code.k; ++t) rows[i][t] ^= code.field.mul(e, rows[r][t]);
        }
        ++r;
      }
      return r;
    };
    if (rank(false) == rank(true)) best = c;
  }
  return best;
}

TEST(LrcCodec, MinimumToDecodeIsTheFewestForEverySingleAndDoubleLoss) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  for (const char *text : {"lrc:k=4,l=2,r=1", "lrc:k=6,l=2,r=2", "lrc:k=6,l=3,r=1"}) {
    auto code = codes::build_code(text);
    ASSERT_TRUE(code.ok());
    auto codec = jit->codec(text);
    ASSERT_TRUE(codec.ok());
    const unsigned n = code->n();
    for (unsigned a = 0; a < n; ++a)
      for (unsigned b = a; b < n; ++b) {
        std::vector<unsigned> lost = {a};
        if (b != a) lost.push_back(b);
        ShardSet avail, want;
        for (unsigned s = 0; s < n; ++s)
          if (s != a && s != b) avail.insert(s);
        for (unsigned t : lost) want.insert(t);
        auto need = (*codec)->minimum_to_decode(want, avail);
        const size_t fewest = fewest_reads(*code, lost);
        if (fewest == SIZE_MAX) {
          EXPECT_FALSE(need.ok()) << text << " lost " << a << "," << b;
          continue;
        }
        ASSERT_TRUE(need.ok()) << text << " lost " << a << "," << b << ": " << need.status().to_string();
        EXPECT_EQ(need->size(), fewest) << text << " lost " << a << "," << b;
        // and those shards rebuild the lost ones
        Stripe st(*code, 256, a * 31 + b);
        std::vector<bool> present(n, false);
        std::vector<uint8_t *> ptrs(n, nullptr);
        for (unsigned s : need->to_vector()) {
          present[s] = true;
          ptrs[s] = st.work[s].data();
        }
        std::vector<std::vector<uint8_t>> outs(lost.size(), std::vector<uint8_t>(256, 0));
        for (size_t i = 0; i < lost.size(); ++i) ptrs[lost[i]] = outs[i].data();
        ASSERT_TRUE((*codec)->reconstruct_some(want, ptrs, present, 256).ok()) << text << " lost " << a << "," << b;
        for (size_t i = 0; i < lost.size(); ++i) EXPECT_EQ(outs[i], st.orig[lost[i]]) << text;
      }
  }
}

// ceph-lrc: Ceph's layout strings (ErasureCodeLrc::parse_kml) give the chunk of each shard.
TEST(CephLrc, ShardsSitWhereCephsMappingPutsThem) {
  struct Case {
    const char *spec, *mapping, *global;  // Ceph's "mapping" and global layer
  };
  for (const Case &c : {Case{"ceph-lrc:k=4,m=2,l=3", "DD__DD__", "DDc_DDc_"},
                        Case{"ceph-lrc:k=8,m=4,l=3", "DD__DD__DD__DD__", "DDc_DDc_DDc_DDc_"},
                        Case{"ceph-lrc:k=8,m=4,l=6", "DDDD___DDDD___", "DDDDcc_DDDDcc_"}}) {
    auto spec = CodeSpec::parse(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status().to_string();
    const std::string mapping = c.mapping, global = c.global;
    const unsigned n = unsigned(mapping.size());
    ASSERT_EQ(spec->k + spec->m, n) << c.spec;
    std::vector<unsigned> data_at, global_at, local_at;
    for (unsigned i = 0; i < n; ++i) {
      if (mapping[i] == 'D') data_at.push_back(i);
      else if (global[i] == 'c') global_at.push_back(i);
      else local_at.push_back(i);
    }
    std::vector<bool> used(n, false);
    for (unsigned s = 0; s < n; ++s) {
      const unsigned chunk = codes::ceph_lrc_chunk(*spec, s);
      ASSERT_LT(chunk, n);
      EXPECT_FALSE(used[chunk]) << c.spec << " shard " << s;
      used[chunk] = true;
      if (s < spec->k) EXPECT_EQ(chunk, data_at[s]) << c.spec << " data shard " << s;
    }
    // The global parities' rows are jerasure-vand's (Ceph's global layer), in chunk order.
    auto code = codes::build_code(*spec);
    auto vand = codes::build_code("jerasure-vand:k=" + std::to_string(spec->k) + ",m=" + std::to_string(spec->r));
    ASSERT_TRUE(code.ok() && vand.ok());
    unsigned g = 0;
    for (unsigned p = 0; p < code->m; ++p) {
      const unsigned chunk = codes::ceph_lrc_chunk(*spec, spec->k + p);
      if (global[chunk] != 'c') continue;
      EXPECT_EQ(chunk, global_at[g]) << c.spec;
      for (unsigned d = 0; d < spec->k; ++d) EXPECT_EQ(code->parity.at(p, d), vand->parity.at(g, d)) << c.spec;
      ++g;
    }
    EXPECT_EQ(g, spec->r);
  }
}

TEST(CephLrc, RulesAreCephs) {
  const std::pair<const char *, const char *> cases[] = {
      {"ceph-lrc:k=8,m=4,l=4", "k must be a multiple of (k + m) / l"},
      {"ceph-lrc:k=4,m=2,l=4", "k + m must be a multiple of l"},
      {"ceph-lrc:k=4,m=2,l=0", "k + m must be a multiple of l"},
      {"ceph-lrc:k=250,m=10,l=26", "k + m <= 255"},
      {"ceph-lrc:k=4,m=2,l=3,gf=16", "gf=8 only"},
      {"ceph-lrc:k=4,l=3", "missing m="},
      {"ceph-lrc:k=4,m=2", "missing l="},
  };
  expect_refused(cases);
  auto s = CodeSpec::parse("ceph-lrc:k=4,m=2,l=3");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->m, 4u);  // 2 global + 2 local parities
  EXPECT_EQ(s->to_string(), "ceph-lrc:k=4,m=2,l=3,gf=8");
}

// Every pattern of ceph-lrc:k=4,m=2,l=3 through the C++ API against the rank of the surviving
// rows (an independent check of what decodes); one lost chunk reads its group's three.
TEST(CephLrc, EveryPatternAndLocalRepair) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  auto code = codes::build_code("ceph-lrc:k=4,m=2,l=3");
  ASSERT_TRUE(code.ok());
  auto codec = jit->codec("ceph-lrc:k=4,m=2,l=3");
  ASSERT_TRUE(codec.ok());
  const unsigned n = code->n();
  std::mt19937_64 rng(5);
  const size_t len = 1024;
  std::vector<std::vector<uint8_t>> orig(n, std::vector<uint8_t>(len));
  for (unsigned i = 0; i < code->k; ++i)
    for (auto &b : orig[i]) b = uint8_t(rng());
  std::vector<const uint8_t *> d;
  std::vector<uint8_t *> p;
  for (unsigned i = 0; i < code->k; ++i) d.push_back(orig[i].data());
  for (unsigned i = code->k; i < n; ++i) p.push_back(orig[i].data());
  ASSERT_TRUE(codes::ref_encode(*code, d.data(), p.data(), len).ok());
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    std::vector<bool> present(n), lost(n);
    auto work = orig;
    std::vector<uint8_t *> ptrs;
    for (unsigned s = 0; s < n; ++s) {
      lost[s] = (mask >> s) & 1;
      present[s] = !lost[s];
      if (lost[s]) std::fill(work[s].begin(), work[s].end(), 0xEE);
      ptrs.push_back(work[s].data());
    }
    const Status rc = (*codec)->reconstruct(ptrs, present, len);
    if (codes::decodes_loss(code->field, code->parity, code->k, lost)) {
      ASSERT_TRUE(rc.ok()) << mask << ": " << rc.to_string();
      ASSERT_EQ(work, orig) << mask;
    } else {
      ASSERT_FALSE(rc.ok()) << mask;
    }
  }
  for (unsigned s = 0; s < n; ++s) {  // every single loss, globals included, reads 3
    std::vector<bool> present(n, true);
    present[s] = false;
    const KernelInfo info = (*codec)->decoder_info(present);
    EXPECT_EQ(info.decision.tier, KernelTier::kLocalXor) << s << ": " << info.why;
    EXPECT_EQ(info.decision.local_reads, 3u) << s;
  }
}

}  // namespace
}  // namespace ecjit
