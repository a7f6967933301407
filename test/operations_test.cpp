// Codec operations against the reference codec: partial reconstruction, minimum_to_decode,
// delta update, encode_partial, fused verify, algebraic signatures, the bounded kernel LRU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "guarded_buffer.h"

using ecjit::Codec;
using ecjit::Jit;
using ecjit::JitOptions;
using ecjit::ShardSet;
using ecjit::StatusCode;
using ecjit::codes::LinearCode;
using ecjit::test::GuardedBuffer;

namespace {

std::shared_ptr<Jit> make_jit(const std::string &target = "host", unsigned opt = 3,
                              size_t max_cached = 256, bool tune = false, bool shapes = true) {
  JitOptions o;
  o.shape_kernels = shapes;  // false: decoders compiled per erasure set on first use
  o.target = target;
  o.opt_level = opt;
  o.max_cached_kernels = max_cached;
  o.disk_cache = false;  // every compile here is a real one
  o.tune = tune;         // the exhaustive runs take the static strategy (one compile per kernel)
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << target << ": " << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

struct Subject {
  LinearCode code;
  std::shared_ptr<const Codec> codec;
};

Subject subject(Jit &jit, const std::string &spec) {
  auto code = ecjit::codes::build_code(spec);
  EXPECT_TRUE(code.ok()) << spec;
  auto codec = jit.codec(spec);
  EXPECT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
  return Subject{*code, codec.ok() ? *codec : nullptr};
}

// n guarded shards holding a random stripe encoded by the reference codec.
struct Stripe {
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<std::vector<uint8_t>> orig;
  std::vector<uint8_t *> ptrs;
  size_t len;

  Stripe(const LinearCode &code, size_t len_, uint64_t seed) : len(len_) {
    std::mt19937_64 rng(seed);
    const unsigned n = code.n();
    orig.assign(n, std::vector<uint8_t>(len));
    for (unsigned s = 0; s < n; ++s) {
      bufs.push_back(std::make_unique<GuardedBuffer>(len));
      ptrs.push_back(bufs.back()->data());
    }
    for (unsigned s = 0; s < code.k; ++s)
      for (auto &b : orig[s]) b = uint8_t(rng());
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned s = 0; s < code.k; ++s) d.push_back(orig[s].data());
    for (unsigned s = code.k; s < n; ++s) p.push_back(orig[s].data());
    EXPECT_TRUE(ecjit::codes::ref_encode(code, d.data(), p.data(), len).ok());
    restore();
  }
  void restore() {
    for (size_t s = 0; s < ptrs.size(); ++s) memcpy(ptrs[s], orig[s].data(), len);
  }
  void scribble(unsigned s, uint8_t v) { memset(ptrs[s], v, len); }
  bool intact(unsigned s) const { return memcmp(ptrs[s], orig[s].data(), len) == 0; }
};

std::string set_str(const ShardSet &s) {
  std::string out = "{";
  for (unsigned i : s.to_vector()) out += std::to_string(i) + ",";
  return out + "}";
}

// Every erasure set of size <= m: reconstruct (all), reconstruct_data (data only, parity
// pointers of lost parity null) and, for each set, reconstruct_some of its first member.
// data_every: run reconstruct_data on every data_every-th set only (compile budget);
// exact_size: only sets of exactly this size (0: all sizes <= m).
void exhaustive(Jit &jit, const std::string &spec, size_t len, unsigned data_every = 1,
                unsigned exact_size = 0) {
  Subject s = subject(jit, spec);
  ASSERT_TRUE(s.codec);
  const unsigned n = s.code.n(), k = s.code.k, m = s.code.m;
  Stripe st(s.code, len, n * 7 + len);
  size_t sets = 0;
  for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask) {
    const unsigned lost = unsigned(__builtin_popcountll(mask));
    if (lost > m || (exact_size && lost != exact_size)) continue;
    ++sets;
    std::vector<bool> present(n);
    for (unsigned i = 0; i < n; ++i) present[i] = !((mask >> i) & 1);
    // reconstruct: every lost shard rebuilt
    for (unsigned i = 0; i < n; ++i)
      if (!present[i]) st.scribble(i, 0xA5);
    auto r = s.codec->reconstruct(st.ptrs, present, len);
    ASSERT_TRUE(r.ok()) << spec << " lost " << mask << ": " << r.to_string();
    for (unsigned i = 0; i < n; ++i)
      ASSERT_TRUE(st.intact(i)) << spec << " reconstruct, lost mask " << mask << ", shard " << i;
    if (sets % data_every) continue;
    // reconstruct_data: lost parity stays untouched (null pointer allowed)
    std::vector<uint8_t *> ptrs = st.ptrs;
    for (unsigned i = 0; i < n; ++i)
      if (!present[i]) {
        st.scribble(i, 0x5A);
        if (i >= k) ptrs[i] = nullptr;
      }
    r = s.codec->reconstruct_data(ptrs, present, len);
    ASSERT_TRUE(r.ok()) << spec << " lost " << mask << ": " << r.to_string();
    for (unsigned i = 0; i < n; ++i) {
      if (i < k || present[i])
        ASSERT_TRUE(st.intact(i)) << spec << " reconstruct_data, lost " << mask << ", shard " << i;
      else
        ASSERT_EQ(st.ptrs[i][0], 0x5A) << "reconstruct_data wrote lost parity " << i;
    }
    st.restore();
  }
  EXPECT_GT(sets, 0u);
}

// Compile budget (~15 ms per O1 kernel on a 2-core Zen 3 EPYC, tuner off): every set of size <= m
// for (6,3), (12,3), (4,4); for (6,6) every set of the full size 6 (924, the largest decode
// matrices); reconstruct_data on a share of the sets. O0 and O3 kernels come from the same
// builder (codec_test compares O0 and O3 on encoders).
TEST(Reconstruct, ExhaustiveGf8) {
  auto jit = make_jit("host", 1);
  ASSERT_TRUE(jit);
  exhaustive(*jit, "rs-vand:k=6,m=3", 4651);
  exhaustive(*jit, "rs-cauchy:k=12,m=3", 100, 4);
  exhaustive(*jit, "isal-cauchy:k=4,m=4", 31, 2);
}

TEST(Reconstruct, ExhaustiveSixSixFullSize) {
  // a bounded cache, so this also runs eviction under a real workload
  auto jit = make_jit("host", 1, 64);
  ASSERT_TRUE(jit);
  exhaustive(*jit, "rs-cauchy:k=6,m=6", 67, 1000, 6);
}

TEST(Reconstruct, ExhaustiveGf16) {
  auto jit = make_jit("host", 1);
  ASSERT_TRUE(jit);
  exhaustive(*jit, "rs-vand:k=5,m=3,gf=16", 1002, 2);
  exhaustive(*jit, "rs-cauchy:k=4,m=4,gf=16", 30, 4);
}

TEST(Reconstruct, RandomSetsWideCodesAndSome) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  for (const char *spec : {"rs-cauchy:k=32,m=8", "rs-vand:k=20,m=6,gf=16", "rs-cauchy:k=10,m=4"}) {
    Subject s = subject(*jit, spec);
    ASSERT_TRUE(s.codec);
    const unsigned n = s.code.n(), m = s.code.m;
    const size_t len = 10001 / s.code.field.bytes() * s.code.field.bytes();
    Stripe st(s.code, len, n);
    std::mt19937_64 rng(n * 3);
    for (int trial = 0; trial < 12; ++trial) {
      std::vector<unsigned> idx(n);
      for (unsigned i = 0; i < n; ++i) idx[i] = i;
      std::shuffle(idx.begin(), idx.end(), rng);
      const unsigned lost = 1 + unsigned(rng() % m);
      std::vector<bool> present(n, true);
      for (unsigned i = 0; i < lost; ++i) present[idx[i]] = false;
      // wanted: a random subset of the lost ones plus one present shard (left alone)
      ShardSet wanted;
      for (unsigned i = 0; i < lost; ++i)
        if (rng() & 1) wanted.insert(idx[i]);
      wanted.insert(idx[lost]);
      std::vector<uint8_t *> ptrs = st.ptrs;
      for (unsigned i = 0; i < n; ++i)
        if (!present[i]) {
          st.scribble(i, 0xEE);
          if (!wanted.contains(i)) ptrs[i] = nullptr;  // not wanted: never touched
        }
      auto r = s.codec->reconstruct_some(wanted, ptrs, present, len);
      ASSERT_TRUE(r.ok()) << spec << ": " << r.to_string();
      for (unsigned i = 0; i < n; ++i) {
        if (present[i] || wanted.contains(i))
          ASSERT_TRUE(st.intact(i)) << spec << " reconstruct_some shard " << i;
        else
          ASSERT_EQ(st.ptrs[i][len - 1], 0xEE) << spec << " unwanted shard " << i << " written";
      }
      st.restore();
    }
  }
}

TEST(MinimumToDecode, CephContractAndDecodable) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=6,m=3");
  const Codec &c = *s.codec;
  const ShardSet all = ShardSet::first(9);
  // All wanted available: exactly the wanted ones.
  auto r = c.minimum_to_decode({1, 7}, all);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ShardSet{1, 7}));
  // Data shard 2 lost: available wanted (0) + data first, then parity, k in all.
  r = c.minimum_to_decode({0, 2}, all - ShardSet{2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ShardSet{0, 1, 3, 4, 5, 6})) << set_str(*r);
  // Wanted parity available but a wanted data shard lost: the parity is in the read set.
  r = c.minimum_to_decode({8, 1}, all - ShardSet{1});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->contains(8));
  EXPECT_EQ(r->size(), 6u) << set_str(*r);
  // Reading exactly the result rebuilds the wanted shards.
  Stripe st(s.code, 333, 4);
  std::vector<bool> present(9);
  for (unsigned i = 0; i < 9; ++i) present[i] = r->contains(i);
  st.scribble(1, 0);
  ASSERT_TRUE(c.reconstruct_some({8, 1}, st.ptrs, present, 333).ok());
  EXPECT_TRUE(st.intact(1));
  // Errors.
  EXPECT_EQ(c.minimum_to_decode({0}, ShardSet{3, 4, 5, 6, 7}).status().code(),
            StatusCode::kTooManyErasures);
  EXPECT_EQ(c.minimum_to_decode({9}, all).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.minimum_to_decode({0}, ShardSet{4096}).status().code(), StatusCode::kInvalidArgument);
}

// Random small writes applied by delta equal a full re-encode (one and several shards).
TEST(Update, DeltaEqualsReencode) {
  for (const char *tier : {"host", "host-sse2"}) {
    auto jit = make_jit(tier);
    ASSERT_TRUE(jit);
    for (const char *spec : {"rs-vand:k=10,m=4", "rs-cauchy:k=6,m=3,gf=16", "rs-vand:k=5,m=2,gf=32"}) {
      Subject s = subject(*jit, spec);
      ASSERT_TRUE(s.codec);
      const unsigned k = s.code.k, m = s.code.m, sb = s.code.field.bytes();
      std::mt19937_64 rng(k * 11 + m);
      for (size_t len0 : {size_t(1), size_t(15), size_t(64), size_t(4096), size_t(4651), size_t(100003)}) {
        const size_t len = std::max<size_t>(sb, len0 / sb * sb);
        Stripe st(s.code, len, len);
        for (int trial = 0; trial < 3; ++trial) {
          ShardSet changed;
          const unsigned count = 1 + unsigned(rng() % 3);
          while (changed.size() < count) changed.insert(unsigned(rng() % k));
          std::vector<std::vector<uint8_t>> fresh;
          std::vector<const uint8_t *> olds, news;
          for (unsigned d : changed.to_vector()) {
            fresh.emplace_back(st.orig[d]);
            for (size_t b = rng() % len, e = std::min(len, b + 1 + rng() % 700); b < e; ++b)
              fresh.back()[b] = uint8_t(rng());
            olds.push_back(st.ptrs[d]);
          }
          for (auto &f : fresh) news.push_back(f.data());
          std::vector<uint8_t *> parity(st.ptrs.begin() + k, st.ptrs.end());
          auto r = s.codec->update(changed, olds, news, parity, len);
          ASSERT_TRUE(r.ok()) << r.to_string();
          // the expected stripe: new data, re-encoded by the reference
          size_t i = 0;
          for (unsigned d : changed.to_vector()) {
            st.orig[d] = fresh[i++];
            memcpy(st.ptrs[d], st.orig[d].data(), len);
          }
          std::vector<const uint8_t *> dp;
          std::vector<uint8_t *> pp;
          for (unsigned d = 0; d < k; ++d) dp.push_back(st.orig[d].data());
          for (unsigned p = k; p < k + m; ++p) pp.push_back(st.orig[p].data());
          ASSERT_TRUE(ecjit::codes::ref_encode(s.code, dp.data(), pp.data(), len).ok());
          for (unsigned p = k; p < k + m; ++p)
            ASSERT_TRUE(st.intact(p)) << spec << " @" << tier << " len " << len << " parity " << p
                                      << " changed " << set_str(changed);
        }
      }
    }
  }
}

// Partial results XOR-summed in random order (and split over two "nodes") equal encode.
TEST(EncodePartial, SumsToEncode) {
  for (const char *tier : {"host", "host-avx2"}) {
    auto jit = make_jit(tier);
    ASSERT_TRUE(jit);
    for (const char *spec : {"rs-vand:k=10,m=4", "rs-cauchy:k=4,m=3,gf=16", "rs-vand:k=3,m=2,gf=64"}) {
      Subject s = subject(*jit, spec);
      ASSERT_TRUE(s.codec);
      const unsigned k = s.code.k, m = s.code.m, sb = s.code.field.bytes();
      std::mt19937_64 rng(k);
      for (size_t len0 : {size_t(8), size_t(31), size_t(4651), size_t(10001)}) {
        const size_t len = std::max<size_t>(sb, len0 / sb * sb);
        Stripe st(s.code, len, len + k);
        std::vector<std::unique_ptr<GuardedBuffer>> acc;
        std::vector<uint8_t> node_b(size_t(m) * len, 0);
        std::vector<uint8_t *> pa, pb;
        for (unsigned r = 0; r < m; ++r) {
          acc.push_back(std::make_unique<GuardedBuffer>(len));
          memset(acc.back()->data(), 0, len);
          pa.push_back(acc.back()->data());
          pb.push_back(node_b.data() + r * len);
        }
        std::vector<unsigned> order(k);
        for (unsigned i = 0; i < k; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        for (unsigned i = 0; i < k; ++i) {
          auto r = s.codec->encode_partial(order[i], st.ptrs[order[i]], i % 2 ? pb : pa, len);
          ASSERT_TRUE(r.ok()) << r.to_string();
        }
        for (unsigned r = 0; r < m; ++r) {
          for (size_t b = 0; b < len; ++b) pa[r][b] ^= pb[r][b];  // eq. 2.30
          ASSERT_EQ(0, memcmp(pa[r], st.orig[k + r].data(), len))
              << spec << " @" << tier << " len " << len << " parity " << r;
        }
      }
    }
  }
}

// update() and encode_partial() of random sets on the accumulate shape kernels: nothing is
// compiled after codec(), and a set past promote_after_bytes gets its own kernel in the
// background with the same results. Specs: GF(2^8); GF(2^32) with 3 outputs (its shape
// kernels take 2: a last chunk of 1); k = 100 with 70 changed (chunks beyond the stack).
TEST(UpdateAndPartial, FromTheFirstCallWithoutCompilingThenPromoted) {
  for (size_t promote_after : {size_t(256) << 20, size_t(1)}) {
    JitOptions o;
    o.target = "host";
    o.disk_cache = false;
    o.tune = false;
    o.promote_after_bytes = promote_after;
    auto jit = Jit::create(o);
    ASSERT_TRUE(jit.ok());
    for (const char *spec : {"rs-vand:k=10,m=4", "rs-vand:k=6,m=3,gf=32", "rs-cauchy:k=100,m=4"}) {
      Subject s = subject(**jit, spec);
      ASSERT_TRUE(s.codec);
      const unsigned k = s.code.k, m = s.code.m;
      // The codec's own kernels in place (compiled in the background behind the ahead-of-time
      // ones, JitOptions::aot_kernels): from here no call may compile.
      (*jit)->wait_for_tuning();
      const uint64_t compiled = (*jit)->stats().kernels_compiled;
      std::mt19937_64 rng(k + m);
      for (size_t len : {size_t(4), size_t(1000), size_t(65540)}) {
        Stripe st(s.code, len, len + k);
        for (int trial = 0; trial < 6; ++trial) {
          if (promote_after == 1 && trial == 3) (*jit)->wait_for_tuning();  // promoted from here
          // encode_partial of one data shard into zeroed accumulators = its share of parity
          const unsigned d = unsigned(rng() % k);
          std::vector<std::vector<uint8_t>> acc(m, std::vector<uint8_t>(len, 0));
          std::vector<uint8_t *> accp;
          for (auto &a : acc) accp.push_back(a.data());
          ASSERT_TRUE(s.codec->encode_partial(d, st.ptrs[d], accp, len).ok());
          std::vector<std::vector<uint8_t>> zero(k, std::vector<uint8_t>(len, 0)), want(m, std::vector<uint8_t>(len));
          zero[d] = st.orig[d];
          std::vector<const uint8_t *> zp;
          std::vector<uint8_t *> wp;
          for (auto &z : zero) zp.push_back(z.data());
          for (auto &w : want) wp.push_back(w.data());
          ASSERT_TRUE(ecjit::codes::ref_encode(s.code, zp.data(), wp.data(), len).ok());
          for (unsigned r = 0; r < m; ++r)
            ASSERT_EQ(acc[r], want[r]) << spec << " partial of " << d << " len " << len << " parity " << r;
          // update of a random set (up to 70 shards)
          ShardSet changed;
          const unsigned count = 1 + unsigned(rng() % std::min(k, 70u));
          while (changed.size() < count) changed.insert(unsigned(rng() % k));
          std::vector<std::vector<uint8_t>> fresh;
          std::vector<const uint8_t *> olds, news;
          for (unsigned c : changed.to_vector()) {
            fresh.emplace_back(len);
            for (auto &b : fresh.back()) b = uint8_t(rng());
            olds.push_back(st.ptrs[c]);
          }
          for (auto &f : fresh) news.push_back(f.data());
          std::vector<uint8_t *> parity(st.ptrs.begin() + k, st.ptrs.end());
          ASSERT_TRUE(s.codec->update(changed, olds, news, parity, len).ok());
          size_t i = 0;
          for (unsigned c : changed.to_vector()) {
            st.orig[c] = fresh[i++];
            memcpy(st.ptrs[c], st.orig[c].data(), len);
          }
          std::vector<const uint8_t *> dp;
          std::vector<uint8_t *> pp;
          for (unsigned c = 0; c < k; ++c) dp.push_back(st.orig[c].data());
          for (unsigned p = k; p < k + m; ++p) pp.push_back(st.orig[p].data());
          ASSERT_TRUE(ecjit::codes::ref_encode(s.code, dp.data(), pp.data(), len).ok());
          for (unsigned p = k; p < k + m; ++p)
            ASSERT_TRUE(st.intact(p)) << spec << " update of " << set_str(changed) << " len " << len
                                      << " parity " << p << " promote_after " << promote_after;
        }
      }
      const ecjit::KernelCacheStats cs = s.codec->kernel_cache_stats();
      EXPECT_EQ(cs.compiles, 0u) << spec;
      EXPECT_GT(cs.delta_shape_calls, 0u) << spec;
      if (promote_after > 1) {
        EXPECT_EQ((*jit)->stats().kernels_compiled, compiled) << spec << ": compiled on a call";
        EXPECT_EQ(cs.promotions, 0u) << spec;
      } else {
        EXPECT_GT(cs.promotions, 0u) << spec;
      }
    }
  }
}

TEST(Verify, DetectsAnyFlippedBitWritesNothing) {
  for (const char *tier : {"host", "host-avx2", "host-sse2"}) {
    auto jit = make_jit(tier);
    ASSERT_TRUE(jit);
    for (const char *spec : {"rs-vand:k=10,m=4", "rs-cauchy:k=6,m=3,gf=16", "rs-vand:k=4,m=2,gf=64"}) {
      Subject s = subject(*jit, spec);
      ASSERT_TRUE(s.codec);
      const unsigned n = s.code.n(), sb = s.code.field.bytes();
      std::mt19937_64 rng(n);
      for (size_t len0 : {size_t(1), size_t(16), size_t(31), size_t(4651), size_t(100003)}) {
        const size_t len = std::max<size_t>(sb, len0 / sb * sb);
        Stripe st(s.code, len, len);
        std::vector<const uint8_t *> cs(st.ptrs.begin(), st.ptrs.end());
        size_t off = 0;
        auto ok = s.codec->verify(cs, len, &off);
        ASSERT_TRUE(ok.ok()) << ok.status().to_string();
        EXPECT_TRUE(*ok) << spec << " @" << tier << " len " << len;
        EXPECT_EQ(off, len);
        for (int t = 0; t < 4; ++t) {
          const unsigned shard = unsigned(rng() % n);
          const size_t pos = (t == 0 ? len - 1 : rng() % len);
          st.ptrs[shard][pos] ^= uint8_t(1u << (rng() % 8));
          ok = s.codec->verify(cs, len, &off);
          ASSERT_TRUE(ok.ok());
          EXPECT_FALSE(*ok) << spec << " @" << tier << " len " << len << " shard " << shard << " pos " << pos;
          EXPECT_LE(off, pos);
          st.restore();
        }
        for (unsigned i = 0; i < n; ++i) ASSERT_TRUE(st.intact(i));  // nothing written
      }
    }
  }
}

// Direct evaluation of eq. 2.34: sig_i = sum_j p_j alpha_i^j, alpha_i = alpha^(i+1).
std::vector<uint64_t> direct_sig(const ecjit::codes::Field &f, const uint8_t *p, size_t len,
                                 unsigned comps) {
  std::vector<uint64_t> sig(comps, 0);
  const unsigned sb = f.bytes();
  for (unsigned i = 0; i < comps; ++i) {
    const uint64_t a = f.pow(2, i + 1);
    uint64_t pw = 1;
    for (size_t j = 0; j + sb <= len; j += sb) {
      sig[i] ^= f.mul(ecjit::codes::load_symbol(p + j, sb), pw);
      pw = f.mul(pw, a);
    }
  }
  return sig;
}

TEST(Signature, EqualsEq234AndChecksStripes) {
  for (const char *tier : {"host", "host-sse2"}) {
    auto jit = make_jit(tier);
    ASSERT_TRUE(jit);
    for (const char *spec : {"rs-vand:k=6,m=3", "rs-cauchy:k=5,m=2,gf=16", "rs-vand:k=3,m=2,gf=32"}) {
      Subject s = subject(*jit, spec);
      ASSERT_TRUE(s.codec);
      const unsigned n = s.code.n(), sb = s.code.field.bytes();
      std::mt19937_64 rng(n);
      for (unsigned comps : {1u, 2u, 4u}) {
        for (size_t len0 : {size_t(2), size_t(15), size_t(64), size_t(4651), size_t(65536)}) {
          const size_t len = std::max<size_t>(sb, len0 / sb * sb);
          Stripe st(s.code, len, len + comps);
          std::vector<uint64_t> sigs(size_t(n) * comps);
          for (unsigned sh = 0; sh < n; ++sh) {
            auto r = s.codec->signature(st.ptrs[sh], len, {sigs.data() + sh * comps, comps});
            ASSERT_TRUE(r.ok()) << r.to_string();
            if (sh < 2) {
              auto want = direct_sig(s.code.field, st.ptrs[sh], len, comps);
              for (unsigned i = 0; i < comps; ++i)
                ASSERT_EQ(sigs[sh * comps + i], want[i])
                    << spec << " @" << tier << " len " << len << " comp " << i;
            }
          }
          auto v = s.codec->verify_by_signatures(sigs, comps);
          ASSERT_TRUE(v.ok());
          EXPECT_TRUE(*v) << spec << " len " << len;
          // a flipped bit in any shard changes its signature and fails the stripe check
          const unsigned bad = unsigned(rng() % n);
          st.ptrs[bad][rng() % len] ^= uint8_t(1u << (rng() % 8));
          auto r = s.codec->signature(st.ptrs[bad], len, {sigs.data() + bad * comps, comps});
          ASSERT_TRUE(r.ok());
          v = s.codec->verify_by_signatures(sigs, comps);
          ASSERT_TRUE(v.ok());
          EXPECT_FALSE(*v) << spec << " len " << len << " corrupted shard " << bad;
        }
      }
    }
  }
}

// n = 1, l = 8: two random pages collide with probability 2^-8.
TEST(Signature, CollisionRateMatchesField) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=2,m=1");
  std::mt19937_64 rng(2024);
  const int pairs = 40000;
  int collisions = 0;
  std::vector<uint8_t> a(200), b(200);
  for (int i = 0; i < pairs; ++i) {
    for (auto &x : a) x = uint8_t(rng());
    for (auto &x : b) x = uint8_t(rng());
    uint64_t sa = 0, sb = 0;
    ASSERT_TRUE(s.codec->signature(a.data(), a.size(), {&sa, 1}).ok());
    ASSERT_TRUE(s.codec->signature(b.data(), b.size(), {&sb, 1}).ok());
    collisions += sa == sb;
  }
  const double rate = double(collisions) / pairs;  // expect 1/256 = 0.0039 (~156 of 40000)
  EXPECT_GT(rate, 0.5 / 256) << collisions;
  EXPECT_LT(rate, 2.0 / 256) << collisions;
  // n = 2 over GF(2^8): 2^-16, so none expected in this many pairs (mean 0.6).
  int two = 0;
  for (int i = 0; i < 5000; ++i) {
    for (auto &x : a) x = uint8_t(rng());
    for (auto &x : b) x = uint8_t(rng());
    uint64_t sa[2], sb[2];
    ASSERT_TRUE(s.codec->signature(a.data(), a.size(), {sa, 2}).ok());
    ASSERT_TRUE(s.codec->signature(b.data(), b.size(), {sb, 2}).ok());
    two += sa[0] == sb[0] && sa[1] == sb[1];
  }
  EXPECT_LE(two, 3);
}

// Each bad input: its specific status, and no buffer written.
TEST(BadInput, OperationsSpecificStatusNothingWritten) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=4,m=2");
  const Codec &c = *s.codec;
  const size_t len = 64;
  Stripe st(s.code, len, 1);
  std::vector<uint8_t *> p = st.ptrs;
  std::vector<bool> present(6, true);
  present[0] = present[1] = false;
  auto untouched = [&] {
    for (unsigned i = 0; i < 6; ++i)
      if (!st.intact(i)) return false;
    return true;
  };
  std::vector<bool> three_lost = present;
  three_lost[2] = false;
  EXPECT_EQ(c.reconstruct_data(p, three_lost, len).code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(c.reconstruct_some({0}, p, three_lost, len).code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(c.reconstruct_some({6}, p, present, len).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.reconstruct_some({0}, p, present, len).code(), StatusCode::kOk);
  st.restore();
  EXPECT_EQ(c.reconstruct_some({0}, p, std::vector<bool>(5, true), len).code(), StatusCode::kShardCount);
  std::vector<uint8_t *> null_present = p;
  null_present[3] = nullptr;
  EXPECT_EQ(c.reconstruct_data(null_present, present, len).code(), StatusCode::kNullPointer);
  std::vector<uint8_t *> null_wanted = p;
  null_wanted[1] = nullptr;
  EXPECT_EQ(c.reconstruct_some({1}, null_wanted, present, len).code(), StatusCode::kNullPointer);
  EXPECT_EQ(c.reconstruct_some({0}, null_wanted, present, len).code(), StatusCode::kOk);  // 1 not wanted
  st.restore();
  ASSERT_TRUE(untouched());

  std::vector<uint8_t> fresh(len, 7);
  std::vector<const uint8_t *> one_old{p[0]}, one_new{fresh.data()};
  std::vector<uint8_t *> par{p[4], p[5]};
  EXPECT_EQ(c.update({4}, one_old, one_new, par, len).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.update({}, {}, {}, par, len).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.update({0, 1}, one_old, one_new, par, len).code(), StatusCode::kShardCount);
  EXPECT_EQ(c.update({0}, one_old, one_new, {par.data(), 1}, len).code(), StatusCode::kShardCount);
  std::vector<const uint8_t *> null_new{nullptr};
  EXPECT_EQ(c.update({0}, one_old, null_new, par, len).code(), StatusCode::kNullPointer);
  EXPECT_EQ(c.update({0}, one_old, one_new, par, len).code(), StatusCode::kOk);
  st.restore();
  EXPECT_EQ(c.encode_partial(4, p[0], par, len).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.encode_partial(0, nullptr, par, len).code(), StatusCode::kNullPointer);
  EXPECT_EQ(c.encode_partial(0, p[0], {par.data(), 3}, len).code(), StatusCode::kShardCount);
  ASSERT_TRUE(untouched());

  std::vector<const uint8_t *> cs(p.begin(), p.end());
  EXPECT_EQ(c.verify({cs.data(), 5}, len).status().code(), StatusCode::kShardCount);
  std::vector<const uint8_t *> cs_null = cs;
  cs_null[5] = nullptr;
  EXPECT_EQ(c.verify(cs_null, len).status().code(), StatusCode::kNullPointer);
  uint64_t sig[17];
  EXPECT_EQ(c.signature(p[0], len, {sig, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.signature(p[0], len, {sig, 17}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.signature(nullptr, len, {sig, 1}).code(), StatusCode::kNullPointer);
  std::vector<uint64_t> sigs(12, 0);
  EXPECT_EQ(c.verify_by_signatures({sigs.data(), 11}, 2).status().code(), StatusCode::kShardCount);
  sigs[3] = 256;
  EXPECT_EQ(c.verify_by_signatures(sigs, 2).status().code(), StatusCode::kInvalidArgument);

  // GF(2^16): lengths that are not whole symbols
  Subject s16 = subject(*jit, "rs-vand:k=4,m=2,gf=16");
  Stripe st16(s16.code, 64, 2);
  std::vector<bool> lost0(6, true);
  lost0[0] = false;
  EXPECT_EQ(s16.codec->reconstruct_data(st16.ptrs, lost0, 63).code(), StatusCode::kShardSize);
  EXPECT_EQ(s16.codec->reconstruct_some({0}, st16.ptrs, lost0, 63).code(), StatusCode::kShardSize);
  std::vector<uint8_t *> par16{st16.ptrs[4], st16.ptrs[5]};
  std::vector<const uint8_t *> o16{st16.ptrs[0]}, n16{st16.ptrs[1]};
  EXPECT_EQ(s16.codec->update({0}, o16, n16, par16, 63).code(), StatusCode::kShardSize);
  EXPECT_EQ(s16.codec->encode_partial(0, st16.ptrs[0], par16, 63).code(), StatusCode::kShardSize);
  std::vector<const uint8_t *> cs16(st16.ptrs.begin(), st16.ptrs.end());
  EXPECT_EQ(s16.codec->verify(cs16, 63).status().code(), StatusCode::kShardSize);
  EXPECT_EQ(s16.codec->signature(st16.ptrs[0], 63, {sig, 1}).code(), StatusCode::kShardSize);
  for (unsigned i = 0; i < 6; ++i) EXPECT_TRUE(st16.intact(i));

  JitOptions bad;
  bad.max_cached_kernels = 0;
  EXPECT_EQ(Jit::create(bad).status().code(), StatusCode::kInvalidArgument);
}

// A corrupted shard passed as present is not silently propagated: verify catches it first.
TEST(Verify, CorruptPresentShardIsCaught) {
  auto jit = make_jit();
  Subject s = subject(*jit, "rs-vand:k=4,m=2");
  Stripe st(s.code, 1000, 9);
  st.ptrs[2][500] ^= 1;  // silent corruption in a shard the decoder will read
  std::vector<const uint8_t *> cs(st.ptrs.begin(), st.ptrs.end());
  auto ok = s.codec->verify(cs, 1000);
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(*ok);
}

size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * size_t(sysconf(_SC_PAGESIZE));
}

// Many distinct erasure sets on RS(16,8): the decoder cache stays within its bound and the
// process memory stops growing once the cache is full. The target is 10,000 sets; at
// ~30 ms per O1 compile of a (1..8) x 16 decoder that is ~5 min, so 300 sets run here
// (ECJIT_LRU_SETS overrides; 10000 was run by hand, see docs/operations.md).
TEST(KernelLru, ManyErasureSetsStayBounded) {
  const size_t cap = 32;
  auto jit = make_jit("host", 1, cap, false, /*shapes=*/false);
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-cauchy:k=16,m=8");
  size_t sets = 300;
  if (const char *e = getenv("ECJIT_LRU_SETS")) sets = size_t(atol(e));
  const unsigned n = 24;
  Stripe st(s.code, 256, 3);
  std::mt19937_64 rng(16);
  size_t rss_full = 0, done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint32_t> masks;
  while (done < sets) {
    uint32_t mask = 0;
    const unsigned lost = 1 + unsigned(rng() % 8);
    while (unsigned(__builtin_popcount(mask)) < lost) mask |= 1u << (rng() % n);
    if (std::find(masks.begin(), masks.end(), mask) != masks.end()) continue;
    masks.push_back(mask);
    std::vector<bool> present(n);
    for (unsigned i = 0; i < n; ++i) present[i] = !((mask >> i) & 1);
    ASSERT_TRUE(s.codec->reconstruct(st.ptrs, present, 256).ok());
    ++done;
    if (done % 64 == 0)
      for (unsigned i = 0; i < n; ++i) ASSERT_TRUE(st.intact(i)) << "after " << done << " sets";
    if (done == 3 * cap) rss_full = rss_bytes();
    ASSERT_LE(s.codec->kernel_cache_stats().cached, cap);
  }
  const size_t rss_end = rss_bytes();
  const auto stats = s.codec->kernel_cache_stats();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("[ lru ] %zu distinct sets, capacity %zu: %llu compiles, %llu evictions, RSS %.1f MiB "
         "after %zu sets -> %.1f MiB at the end, %.1f ms per set\n",
         sets, cap, (unsigned long long)stats.compiles, (unsigned long long)stats.evictions,
         rss_full / 1048576.0, 3 * cap, rss_end / 1048576.0, secs * 1000 / sets);
  EXPECT_EQ(stats.compiles, sets);
  EXPECT_EQ(stats.evictions, sets - cap);
  EXPECT_LE(stats.cached, cap);
  // Bounded: growth after the cache filled stays far below one decoder's share of memory per
  // set (unbounded caching would add ~100+ KiB per set; see docs/operations.md).
  if (rss_full) EXPECT_LT(double(rss_end) - double(rss_full), 24.0 * 1048576) << "memory kept growing";
}

// Memory per cached kernel: RSS growth while an unbounded-enough cache fills with decoders.
TEST(KernelLru, ReportsMemoryPerKernel) {
  auto jit = make_jit("host", 3, 1000, false, /*shapes=*/false);
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=10,m=4");
  Stripe st(s.code, 4096, 5);
  // warm up the allocator and LLVM
  std::vector<bool> present(14, true);
  present[0] = false;
  ASSERT_TRUE(s.codec->reconstruct(st.ptrs, present, 4096).ok());
  const size_t before = rss_bytes();
  unsigned made = 0;
  for (unsigned a = 0; a < 14 && made < 60; ++a)
    for (unsigned b = a + 1; b < 14 && made < 60; ++b) {
      std::vector<bool> p(14, true);
      p[a] = p[b] = false;
      ASSERT_TRUE(s.codec->reconstruct(st.ptrs, p, 4096).ok());
      ++made;
    }
  const size_t after = rss_bytes();
  printf("[ mem ] RS(10,4) 2-erasure decoders at O3: %.1f KiB RSS per cached kernel (%u kernels)\n",
         (double(after) - double(before)) / made / 1024.0, made);
}

}  // namespace

namespace {

// An aliasing refusal: kInvalidArgument naming `fragment`, and no shard of st written.
void expect_refused_intact(const ecjit::Status &status, const char *fragment, const Stripe &st) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.to_string();
  for (unsigned i = 0; i < st.ptrs.size(); ++i) EXPECT_TRUE(st.intact(i)) << "shard " << i << " written";
}

// The same buffer as an output and an input (or as two outputs) is refused with
// kInvalidArgument, naming both, and nothing is written.
TEST(AliasedBuffers, AreRejectedByEveryOperationAndNothingIsWritten) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=4,m=2");
  ASSERT_TRUE(s.codec);
  const size_t len = 512;
  Stripe st(s.code, len, 9);
  auto expect_refused = [&](const ecjit::Status &status, const char *fragment) {
    expect_refused_intact(status, fragment, st);
  };
  std::vector<const uint8_t *> data(st.ptrs.begin(), st.ptrs.begin() + 4);
  // encode: parity 1 is data shard 2; two parity pointers equal.
  std::vector<uint8_t *> parity = {st.ptrs[4], st.ptrs[2]};
  expect_refused(s.codec->encode(data, parity, len), "parity shard 1 is the same buffer as data shard 2");
  parity = {st.ptrs[4], st.ptrs[4]};
  expect_refused(s.codec->encode(data, parity, len), "parity shards 0 and 1 are the same buffer");
  // reconstruct: lost shard 1's buffer is present shard 3's; two lost shards share one.
  std::vector<bool> present = {true, false, true, true, true, true};
  std::vector<uint8_t *> shards = st.ptrs;
  shards[1] = st.ptrs[3];
  expect_refused(s.codec->reconstruct(shards, present, len), "rebuilt shard 1 is the same buffer as present shard 3");
  present = {false, false, true, true, true, true};
  shards = st.ptrs;
  shards[1] = shards[0];
  expect_refused(s.codec->reconstruct_data(shards, present, len), "rebuilt shards 0 and 1 are the same buffer");
  // update: a parity buffer is the new data; encode_partial: an accumulator is the shard.
  std::vector<const uint8_t *> old_d = {st.ptrs[0]}, new_d = {st.ptrs[5]};
  parity = {st.ptrs[4], st.ptrs[5]};
  ShardSet changed;
  changed.insert(0);
  expect_refused(s.codec->update(changed, old_d, new_d, parity, len),
                 "parity shard 1 is the same buffer as new data shard 0");
  expect_refused(s.codec->encode_partial(0, st.ptrs[4], parity, len),
                 "accumulator 0 is the same buffer as data shard 0");
  // Inputs may repeat: two data pointers equal is fine (the parity is of that data).
  std::vector<const uint8_t *> same = {st.ptrs[0], st.ptrs[0], st.ptrs[2], st.ptrs[3]};
  std::vector<uint8_t> p0(len), p1(len);
  std::vector<uint8_t *> pout = {p0.data(), p1.data()};
  EXPECT_TRUE(s.codec->encode(same, pout, len).ok());
}

// Wide codes check through a hash set of the pointers (shard_checks.h): the same refusals,
// deep in the arrays, and repeated inputs still fine.
TEST(AliasedBuffers, WideCodesAreCheckedAlike) {
  auto jit = make_jit();
  ASSERT_TRUE(jit);
  Subject s = subject(*jit, "rs-vand:k=40,m=20");
  ASSERT_TRUE(s.codec);
  const size_t len = 256;
  Stripe st(s.code, len, 10);
  std::vector<const uint8_t *> data(st.ptrs.begin(), st.ptrs.begin() + 40);
  std::vector<uint8_t *> parity(st.ptrs.begin() + 40, st.ptrs.end());
  parity[17] = st.ptrs[33];
  expect_refused_intact(s.codec->encode(data, parity, len), "parity shard 17 is the same buffer as data shard 33", st);
  parity.assign(st.ptrs.begin() + 40, st.ptrs.end());
  parity[19] = parity[3];
  expect_refused_intact(s.codec->encode(data, parity, len), "parity shards 3 and 19 are the same buffer", st);
  // reconstruct: 20 lost of 60, past the pairwise scan (codec_impl and rs-fft share the check).
  std::vector<bool> present(60, true);
  for (unsigned i = 0; i < 20; ++i) present[i * 3] = false;
  std::vector<uint8_t *> shards = st.ptrs;
  shards[57] = shards[2];
  expect_refused_intact(s.codec->reconstruct(shards, present, len),
                        "rebuilt shard 57 is the same buffer as present shard 2", st);
  shards = st.ptrs;
  shards[57] = shards[3];
  expect_refused_intact(s.codec->reconstruct(shards, present, len), "rebuilt shards 3 and 57 are the same buffer", st);
  data[39] = data[0];  // inputs may repeat
  std::vector<std::vector<uint8_t>> fresh(20, std::vector<uint8_t>(len));
  std::vector<uint8_t *> out;
  for (auto &f : fresh) out.push_back(f.data());
  EXPECT_TRUE(s.codec->encode(data, out, len).ok());
}

}  // namespace
