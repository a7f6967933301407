// Degraded reads from the first call: every erasure set through shape kernels, promotion and demotion under concurrent callers, against the reference codec.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"

namespace ecjit {
namespace {

std::shared_ptr<Jit> make_jit(size_t promote_after, size_t max_cached = 256, bool tune = false,
                              const std::string &target = "host") {
  JitOptions o;
  o.target = target;
  o.disk_cache = false;
  o.tune = tune;
  o.promote_after_bytes = promote_after;
  o.max_cached_kernels = max_cached;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

// A stripe: originals from the reference codec, and working shards the calls rebuild.
struct Stripe {
  unsigned n = 0;
  size_t len = 0;
  std::vector<std::vector<uint8_t>> orig, work;
  std::vector<uint8_t *> ptrs;
  Stripe(const codes::LinearCode &code, size_t len_, uint64_t seed) : n(code.n()), len(len_) {
    std::mt19937_64 rng(seed);
    orig.assign(n, std::vector<uint8_t>(len));
    for (unsigned i = 0; i < code.k; ++i)
      for (auto &b : orig[i]) b = uint8_t(rng());
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned i = 0; i < code.k; ++i) d.push_back(orig[i].data());
    for (unsigned i = code.k; i < n; ++i) p.push_back(orig[i].data());
    EXPECT_TRUE(codes::ref_encode(code, d.data(), p.data(), len).ok());
    work = orig;
    for (auto &w : work) ptrs.push_back(w.data());
  }
  // Loses the shards of `mask`, rebuilds them, and says whether every shard is the original.
  ::testing::AssertionResult rebuild(const Codec &codec, uint64_t mask) {
    std::vector<bool> present(n);
    for (unsigned s = 0; s < n; ++s) {
      present[s] = !((mask >> s) & 1);
      if (!present[s]) std::memset(work[s].data(), 0xEE, len);
    }
    const Status st = codec.reconstruct(ptrs, present, len);
    if (!st.ok()) return ::testing::AssertionFailure() << st.to_string();
    for (unsigned s = 0; s < n; ++s)
      if (work[s] != orig[s])
        return ::testing::AssertionFailure()
               << codec.spec().to_string() << " len " << len << " lost mask 0x" << std::hex << mask
               << std::dec << ": shard " << s << " differs (" << codec.decoder_info(present).symbol
               << ")";
    return ::testing::AssertionSuccess();
  }
};

// Every erasure set of 1..m shards of n.
std::vector<uint64_t> all_sets(unsigned n, unsigned m) {
  std::vector<uint64_t> out;
  for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask)
    if (unsigned(__builtin_popcountll(mask)) <= m) out.push_back(mask);
  return out;
}

bool on_shapes(const ecjit::KernelInfo &info) { return info.decision.run_time_coefficients(); }

bool uses_shape_kernels(const Codec &codec) {
  std::vector<bool> present(codec.k() + codec.m(), true);
  present[0] = false;
  return on_shapes(codec.decoder_info(present));
}

// Every erasure set of RS(10,4) and RS(6,3) over GF(2^8), at lengths shorter than a vector, a
// few vectors plus a remainder: all on the shape kernels compiled with the codec - not one
// compile during the calls.
TEST(DegradedReads, EveryErasureSetOnShapeKernelsWithoutCompiling) {
  auto jit = make_jit(~size_t(0));
  ASSERT_TRUE(jit);
  for (const char *spec : {"rs-vand:k=10,m=4", "rs-cauchy:k=6,m=3", "isal-cauchy:k=10,m=4"}) {
    auto codec = jit->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    if (!uses_shape_kernels(**codec)) GTEST_SKIP() << "no GF(2^8) shape kernel on this CPU";
    const codes::LinearCode code = *codes::build_code(*CodeSpec::parse(spec));
    jit->wait_for_tuning();  // the codec's own shape kernels in place (aot_kernels_test: before)
    const uint64_t compiled = jit->stats().kernels_compiled;
    const std::vector<uint64_t> sets = all_sets(code.n(), code.m);
    for (size_t len : {size_t(1), size_t(31), size_t(4651)}) {
      Stripe st(code, len, len);
      for (uint64_t mask : sets) ASSERT_TRUE(st.rebuild(**codec, mask));
    }
    EXPECT_EQ(jit->stats().kernels_compiled, compiled) << spec << ": compiled during the calls";
    const KernelCacheStats ks = (*codec)->kernel_cache_stats();
    EXPECT_EQ(ks.decode_plans, sets.size()) << spec;
    EXPECT_EQ(ks.promotions, 0u);
    EXPECT_GE(ks.shape_calls, 3 * sets.size());
  }
}

// The wider fields on a sample of sets, every host tier this CPU has (their shape kernels:
// split-table, clmul-insn or gfni).
TEST(DegradedReads, WideFieldsSampleOnEveryTier) {
  for (const char *tier : {"host", "host-avx512f", "host-avx2"}) {
    JitOptions o;
    o.target = tier;
    o.disk_cache = false;
    o.tune = false;
    o.promote_after_bytes = ~size_t(0);
    auto jit = Jit::create(o);
    if (!jit.ok()) continue;  // this CPU has no such tier
    for (unsigned gf : {16u, 32u, 64u}) {
      const std::string spec = "rs-vand:k=10,m=4,gf=" + std::to_string(gf);
      auto codec = (*jit)->codec(spec);
      ASSERT_TRUE(codec.ok()) << codec.status().to_string();
      const codes::LinearCode code = *codes::build_code(*CodeSpec::parse(spec));
      std::mt19937_64 rng(gf);
      const std::vector<uint64_t> sets = all_sets(code.n(), code.m);
      const size_t sb = gf / 8;
      for (size_t len : {sb, 40 * sb + sb, size_t(4651) / sb * sb}) {
        Stripe st(code, len, len + gf);
        for (int i = 0; i < 60; ++i)
          ASSERT_TRUE(st.rebuild(**codec, sets[rng() % sets.size()])) << tier;
      }
    }
  }
}

// More lost shards than one shape kernel computes (8 for GF(2^8), 2 for clmul-insn GF(2^32)
// on 16 registers): the targets run in chunks over the same prepared rows (70001 bytes end in
// a partial vector). Through the built-in kernels (aot::AotProduct) and the Jit's own.
TEST(DegradedReads, ManyTargetsRunInChunks) {
  for (bool aot : {true, false}) {
  JitOptions o;
  o.disk_cache = false;
  o.tune = false;
  o.promote_after_bytes = ~size_t(0);
  o.aot_kernels = aot;
  auto made = Jit::create(o);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  std::shared_ptr<Jit> jit = *made;
  for (const char *spec : {"rs-cauchy:k=20,m=12", "rs-cauchy:k=20,m=12,gf=32", "rs-vand:k=6,m=5,gf=64"}) {
    auto codec = jit->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const codes::LinearCode code = *codes::build_code(*CodeSpec::parse(spec));
    std::mt19937_64 rng(code.n());
    const size_t sb = code.field.bits() / 8;
    for (size_t len : {size_t(8), size_t(1000), size_t(40000), size_t(70001) / sb * sb}) {
      Stripe st(code, len, len);
      for (int i = 0; i < 12; ++i) {
        uint64_t mask = 0;
        const unsigned lost = 1 + unsigned(rng() % code.m);
        while (unsigned(__builtin_popcountll(mask)) < lost) mask |= uint64_t(1) << (rng() % code.n());
        ASSERT_TRUE(st.rebuild(**codec, mask)) << spec << (aot ? " (built-in kernels on)" : "");
      }
    }
  }
  }
}

// Promotion: a set past the threshold gets its specialised decoder in the background; at
// most max_cached_kernels stay promoted, the least recently used going back to the shape
// kernel. Output is the same before, after and across demotions.
TEST(DegradedReads, PromotionIsBoundedAndExact) {
  const size_t cap = 4;
  auto jit = make_jit(/*promote_after=*/1, cap);
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=10,m=4");
  ASSERT_TRUE(codec.ok());
  if (!uses_shape_kernels(**codec)) GTEST_SKIP() << "no GF(2^8) shape kernel on this CPU";
  const codes::LinearCode code = *codes::build_code(*CodeSpec::parse("rs-vand:k=10,m=4"));
  Stripe st(code, 4651, 3);
  const std::vector<uint64_t> sets = {0x1, 0x3, 0x30, 0x2801, 0x0f00, 0x3c00, 0x11, 0x202};
  for (uint64_t mask : sets) {
    ASSERT_TRUE(st.rebuild(**codec, mask));  // shape kernel; asks for promotion
    jit->wait_for_tuning();
    ASSERT_TRUE(st.rebuild(**codec, mask));  // promoted, unless demoted already
  }
  const KernelCacheStats ks = (*codec)->kernel_cache_stats();
  EXPECT_EQ(ks.promotions, sets.size());
  EXPECT_LE(ks.promoted, cap);
  EXPECT_EQ(ks.demotions, sets.size() - cap);
  // The latest set runs its own decoder; the first was demoted and runs the shape kernel.
  std::vector<bool> last(14, true), first(14, true);
  for (unsigned s = 0; s < 14; ++s) {
    last[s] = !((sets.back() >> s) & 1);
    first[s] = !((sets.front() >> s) & 1);
  }
  EXPECT_FALSE(on_shapes((*codec)->decoder_info(last)))
      << (*codec)->decoder_info(last).why;
  EXPECT_TRUE(on_shapes((*codec)->decoder_info(first)))
      << (*codec)->decoder_info(first).why;
  for (uint64_t mask : sets) ASSERT_TRUE(st.rebuild(**codec, mask));
}

// prepare_reconstruct promotes at once, whatever the threshold.
TEST(DegradedReads, PrepareReconstructPromotes) {
  auto jit = make_jit(~size_t(0));
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-cauchy:k=6,m=3");
  ASSERT_TRUE(codec.ok());
  if (!uses_shape_kernels(**codec)) GTEST_SKIP() << "no GF(2^8) shape kernel on this CPU";
  std::vector<bool> present(9, true);
  present[1] = present[7] = false;
  ASSERT_TRUE((*codec)->prepare_reconstruct(present).ok());
  jit->wait_for_tuning();
  EXPECT_EQ((*codec)->kernel_cache_stats().promotions, 1u);
  EXPECT_EQ((*codec)->decoder_info(present).symbol.find("ecjit_shape_"), std::string::npos);
  const codes::LinearCode code = *codes::build_code(*CodeSpec::parse("rs-cauchy:k=6,m=3"));
  Stripe st(code, 1000, 9);
  EXPECT_TRUE(st.rebuild(**codec, 0x82));
}

// A promoted decoder has no path for shards shorter than a vector (KernelDesc::whole_vectors):
// those calls stay on the set's shape kernels, longer ones run the promoted decoder, and
// every length is exact - GF(2^8) and GF(2^16), lengths around one and two vectors.
TEST(DegradedReads, PromotedDecodersLeaveShortShardsToShapeKernels) {
  for (const char *spec : {"isal-cauchy:k=10,m=4", "rs-vand:k=6,m=3,gf=16"}) {
    auto jit = make_jit(~size_t(0));
    ASSERT_TRUE(jit);
    auto codec = jit->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    if (!uses_shape_kernels(**codec)) GTEST_SKIP() << "no shape kernel on this CPU";
    const codes::LinearCode code = *codes::build_code(*CodeSpec::parse(spec));
    const unsigned n = code.n();
    const uint64_t mask = (uint64_t(1) << 1) | (uint64_t(1) << (n - 1)) | 1;  // shards 0, 1, n-1
    std::vector<bool> present(n, true);
    for (unsigned s = 0; s < n; ++s) present[s] = !((mask >> s) & 1);
    ASSERT_TRUE((*codec)->prepare_reconstruct(present).ok());
    jit->wait_for_tuning();
    ASSERT_EQ((*codec)->kernel_cache_stats().promotions, 1u);
    const unsigned sym = code.field.bits() / 8;
    uint64_t short_calls = 0;
    for (size_t len = sym; len <= 160; len += sym) {
      const uint64_t before = (*codec)->kernel_cache_stats().shape_calls;
      Stripe st(code, len, 31 + len);
      ASSERT_TRUE(st.rebuild(**codec, mask));
      short_calls += (*codec)->kernel_cache_stats().shape_calls - before;
    }
    // The host's widest vector is 16..64 bytes: the shortest lengths, and no others, went
    // to the shape kernels.
    EXPECT_GE(short_calls, 16u / sym - 1) << spec;
    EXPECT_LE(short_calls, 64u / sym - 1) << spec;
  }
}

// Concurrent callers on random sets while sets are promoted and demoted under them: every
// output byte-identical to the originals throughout.
TEST(DegradedReads, ConcurrentCallersDuringPromotionAndEviction) {
  auto jit = make_jit(/*promote_after=*/64 * 1024, /*max_cached=*/3);
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=6,m=3");
  ASSERT_TRUE(codec.ok());
  const codes::LinearCode code = *codes::build_code(*CodeSpec::parse("rs-vand:k=6,m=3"));
  const std::vector<uint64_t> sets = all_sets(code.n(), code.m);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Stripe st(code, 8192 + 24 * t + 1, 100 + t);
      std::mt19937_64 rng(t);
      for (int i = 0; i < 300; ++i) {
        // A few hot sets (promoted) among many cold ones.
        const uint64_t mask = i % 2 ? sets[rng() % 6] : sets[rng() % sets.size()];
        if (!st.rebuild(**codec, mask)) failures.fetch_add(1);
      }
    });
  for (auto &t : threads) t.join();
  jit->wait_for_tuning();
  EXPECT_EQ(failures.load(), 0);
  const KernelCacheStats ks = (*codec)->kernel_cache_stats();
  EXPECT_LE(ks.promoted, 3u);
  if (uses_shape_kernels(**codec)) EXPECT_GE(ks.promotions, 1u);
}

// Where no shape kernel exists (no vector unit), decoders are compiled per set as before,
// and still exact.
TEST(DegradedReads, TargetsWithoutShapeKernelsCompilePerSet) {
  auto jit = make_jit(~size_t(0), 256, false, "host-sse2");
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=6,m=3");
  ASSERT_TRUE(codec.ok());
  EXPECT_FALSE(uses_shape_kernels(**codec));
  const codes::LinearCode code = *codes::build_code(*CodeSpec::parse("rs-vand:k=6,m=3"));
  Stripe st(code, 100, 1);
  ASSERT_TRUE(st.rebuild(**codec, 0x5));
  EXPECT_EQ((*codec)->kernel_cache_stats().compiles, 2u);  // {0} (uses_shape_kernels) and 0x5
}

}  // namespace
}  // namespace ecjit
