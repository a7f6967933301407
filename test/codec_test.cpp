// Codec through the public API: JIT kernels equal the reference codec for every field, shape,
// host tier and odd length, against guard pages; reconstruct; bad input; the kernel cache.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "guarded_buffer.h"

using ecjit::Codec;
using ecjit::Jit;
using ecjit::JitOptions;
using ecjit::StatusCode;
using ecjit::test::GuardedBuffer;

namespace {

// Host tiers reachable by masking features on this machine ("host" is whatever it has).
std::vector<std::string> host_tiers() { return {"host", "host-avx2", "host-sse2"}; }

std::shared_ptr<Jit> make_jit(const std::string &target, unsigned opt = 3, bool shapes = true, bool aot = true) {
  JitOptions o;
  o.target = target;
  o.opt_level = opt;
  o.shape_kernels = shapes;
  o.aot_kernels = aot;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << target << ": " << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

std::vector<size_t> lengths(unsigned sb) {
  std::vector<size_t> out;
  for (size_t l : {size_t(sb), size_t(15), size_t(16), size_t(31), size_t(4651), size_t(10001), size_t(100003)}) {
    size_t r = l / sb * sb;
    out.push_back(r ? r : sb);
  }
  return out;
}

// Encodes random data with `codec` in guarded buffers and compares with the reference.
void check_encode(const Codec &codec, const ecjit::codes::LinearCode &code, size_t len,
                  size_t gap, uint64_t seed, const std::string &what) {
  const unsigned k = code.k, m = code.m;
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<const uint8_t *> data;
  std::vector<uint8_t *> parity;
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
  std::mt19937_64 rng(seed);
  for (unsigned i = 0; i < k + m; ++i) {
    bufs.push_back(std::make_unique<GuardedBuffer>(len, gap));
    ASSERT_TRUE(bufs.back()->ok());
    for (size_t b = 0; b < len; ++b) bufs.back()->data()[b] = uint8_t(rng());
    if (i < k) data.push_back(bufs.back()->data());
    else parity.push_back(bufs.back()->data());
  }
  std::vector<uint8_t *> wp;
  for (auto &w : want) wp.push_back(w.data());
  ASSERT_TRUE(ecjit::codes::ref_encode(code, data.data(), wp.data(), len).ok());
  auto st = codec.encode(data, parity, len);
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (unsigned i = 0; i < m; ++i)
    ASSERT_EQ(0, memcmp(parity[i], want[i].data(), len))
        << what << " len=" << len << " gap=" << gap << " parity " << i << " kernel "
        << codec.encoder_info().symbol;
}

struct FieldCase {
  unsigned gf;
  std::vector<std::pair<unsigned, unsigned>> shapes;
};

class EncodeVsReference : public ::testing::TestWithParam<std::string> {};

TEST_P(EncodeVsReference, EveryFieldShapeAndLength) {
  const std::string tier = GetParam();
  auto jit = make_jit(tier);
  ASSERT_TRUE(jit);
  const FieldCase cases[] = {
      {8, {{1, 1}, {2, 2}, {3, 2}, {4, 2}, {6, 3}, {10, 4}, {12, 4}, {16, 4}, {20, 8}}},
      {16, {{1, 1}, {4, 2}, {10, 4}, {20, 8}}},
      {32, {{1, 1}, {5, 3}, {10, 4}}},
      {64, {{1, 1}, {4, 2}, {10, 4}}},
  };
  for (const FieldCase &fc : cases)
    for (auto [k, m] : fc.shapes) {
      const std::string spec = "rs-cauchy:k=" + std::to_string(k) + ",m=" + std::to_string(m) +
                               ",gf=" + std::to_string(fc.gf);
      auto code = ecjit::codes::build_code(spec);
      ASSERT_TRUE(code.ok());
      auto codec = jit->codec(spec);
      ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
      const bool wide = k * m > 200;
      for (size_t len : lengths(fc.gf / 8)) {
        if (wide && len > 10001) continue;
        check_encode(**codec, *code, len, 0, k * 31 + m, spec + " @" + tier);
        if (HasFatalFailure()) return;
      }
      check_encode(**codec, *code, 4096, 3, 5, spec + " @" + tier + " (misaligned)");
      if (HasFatalFailure()) return;
    }
}

INSTANTIATE_TEST_SUITE_P(Tiers, EncodeVsReference, ::testing::ValuesIn(host_tiers()),
                         [](const auto &i) {
                           std::string n = i.param;
                           for (char &c : n)
                             if (!isalnum((unsigned char)c)) c = '_';
                           return n;
                         });

TEST(EncodeGrid, AllShapesUpTo20x8Gf8) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  for (unsigned k = 1; k <= 20; ++k)
    for (unsigned m = 1; m <= 8; ++m) {
      const std::string spec = "rs-vand:k=" + std::to_string(k) + ",m=" + std::to_string(m);
      auto code = ecjit::codes::build_code(spec);
      auto codec = jit->codec(spec);
      ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
      check_encode(**codec, *code, 4651, 0, k * 8 + m, spec);
      if (HasFatalFailure()) return;
    }
}

TEST(EncodeGrid, WideCodeGf16) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  const std::string spec = "rs-cauchy:k=64,m=16,gf=16";
  auto code = ecjit::codes::build_code(spec);
  auto codec = jit->codec(spec);
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  for (size_t len : {size_t(2), size_t(30), size_t(4650), size_t(100002)})
    check_encode(**codec, *code, len, 0, 64, spec);
}

TEST(EncodeGrid, O0EqualsReference) {
  auto jit = make_jit("host", 0);
  ASSERT_TRUE(jit);
  for (unsigned gf : {8u, 16u, 32u, 64u}) {
    const std::string spec = "rs-vand:k=6,m=3,gf=" + std::to_string(gf);
    auto code = ecjit::codes::build_code(spec);
    auto codec = jit->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    for (size_t len : lengths(gf / 8)) check_encode(**codec, *code, len, 0, gf, spec + " O0");
  }
}

TEST(EncodeGrid, OtherFamiliesAndPolynomials) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  for (const char *spec : {"isal-rs:k=10,m=4", "isal-cauchy:k=12,m=3", "jerasure-vand:k=6,m=3,gf=16",
                           "jerasure-vand:k=5,m=2,gf=32", "raidz:k=7,m=3", "rs-vand:k=5,m=3,gf=8,poly=0x12d",
                           "rs-vand:k=5,m=3,gf=16,poly=0x1002d", "matrix:k=3,m=2,gf=64,a=0.1.ffffffffffffffff/2.0.0"}) {
    auto code = ecjit::codes::build_code(spec);
    ASSERT_TRUE(code.ok()) << spec << code.status().to_string();
    auto codec = jit->codec(spec);
    ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
    check_encode(**codec, *code, 10000, 0, 1, spec);
  }
}

// Erases every subset of size <= m, reconstructs through the JIT, compares.
void check_reconstruct(Jit &jit, const std::string &spec, size_t len, bool exhaustive,
                       int samples = 0) {
  auto code = ecjit::codes::build_code(spec);
  ASSERT_TRUE(code.ok());
  auto codec = jit.codec(spec);
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const unsigned n = code->n();
  std::vector<std::vector<uint8_t>> orig(n, std::vector<uint8_t>(len));
  std::mt19937_64 rng(n);
  for (unsigned i = 0; i < code->k; ++i)
    for (auto &b : orig[i]) b = uint8_t(rng());
  {
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned i = 0; i < n; ++i) (i < code->k ? (void)d.push_back(orig[i].data()) : (void)p.push_back(orig[i].data()));
    ASSERT_TRUE((*codec)->encode(d, p, len).ok());
  }
  std::vector<uint64_t> masks;
  if (exhaustive) {
    for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask)
      if (unsigned(__builtin_popcountll(mask)) <= code->m) masks.push_back(mask);
  } else {
    for (int i = 0; i < samples; ++i) {
      uint64_t mask = 0;
      for (unsigned e = 0; e < code->m; ++e) mask |= uint64_t(1) << (rng() % n);
      masks.push_back(mask);
    }
  }
  for (uint64_t mask : masks) {
    std::vector<std::unique_ptr<GuardedBuffer>> bufs;
    std::vector<uint8_t *> shards;
    std::vector<bool> present(n);
    for (unsigned s = 0; s < n; ++s) {
      bufs.push_back(std::make_unique<GuardedBuffer>(len));
      present[s] = !((mask >> s) & 1);
      if (present[s]) memcpy(bufs.back()->data(), orig[s].data(), len);
      else memset(bufs.back()->data(), 0xEE, len);
      shards.push_back(bufs.back()->data());
    }
    auto st = (*codec)->reconstruct(shards, present, len);
    ASSERT_TRUE(st.ok()) << spec << " mask " << mask << ": " << st.to_string();
    for (unsigned s = 0; s < n; ++s)
      ASSERT_EQ(0, memcmp(shards[s], orig[s].data(), len)) << spec << " erased mask " << mask << " shard " << s;
  }
}

TEST(Reconstruct, ExhaustiveSmallCodes) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  check_reconstruct(*jit, "rs-vand:k=6,m=3", 1000, true);
  check_reconstruct(*jit, "rs-cauchy:k=4,m=4,gf=16", 1002, true);
  check_reconstruct(*jit, "raidz:k=5,m=3", 999, true);
}

TEST(Reconstruct, RandomWideCodes) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  check_reconstruct(*jit, "rs-vand:k=10,m=4", 4651, false, 40);
  check_reconstruct(*jit, "rs-cauchy:k=10,m=4,gf=32", 4652, false, 8);
  check_reconstruct(*jit, "rs-vand:k=8,m=3,gf=64", 4656, false, 6);
}

TEST(BadInput, SpecificStatusAndNoWrite) {
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=4,m=2,gf=16");
  ASSERT_TRUE(codec.ok());
  const Codec &c = **codec;
  std::vector<std::vector<uint8_t>> b(6, std::vector<uint8_t>(64, 0x11));
  std::vector<const uint8_t *> data{b[0].data(), b[1].data(), b[2].data(), b[3].data()};
  std::vector<uint8_t *> parity{b[4].data(), b[5].data()};
  auto untouched = [&] { return b[4] == std::vector<uint8_t>(64, 0x11) && b[5] == std::vector<uint8_t>(64, 0x11); };

  EXPECT_EQ(c.encode(ecjit::Span<const uint8_t *const>(data.data(), 3), parity, 64).code(), StatusCode::kShardCount);
  EXPECT_EQ(c.encode(data, ecjit::Span<uint8_t *const>(parity.data(), 1), 64).code(), StatusCode::kShardCount);
  EXPECT_EQ(c.encode(data, parity, 63).code(), StatusCode::kShardSize);
  auto with_null = data;
  with_null[2] = nullptr;
  EXPECT_EQ(c.encode(with_null, parity, 64).code(), StatusCode::kNullPointer);
  EXPECT_EQ(c.encode(ecjit::Span<const uint8_t *const>(nullptr, 4), parity, 64).code(), StatusCode::kNullPointer);
  EXPECT_TRUE(untouched());

  std::vector<uint8_t *> shards;
  for (auto &x : b) shards.push_back(x.data());
  std::vector<bool> three_lost{false, false, false, true, true, true};
  EXPECT_EQ(c.reconstruct(shards, three_lost, 64).code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(c.reconstruct(shards, {true, true}, 64).code(), StatusCode::kShardCount);
  EXPECT_EQ(c.reconstruct(ecjit::Span<uint8_t *const>(shards.data(), 5), {true, true, true, true, true}, 64).code(),
            StatusCode::kShardCount);
  EXPECT_EQ(c.reconstruct(shards, {false, true, true, true, true, true}, 7).code(), StatusCode::kShardSize);
  auto null_shards = shards;
  null_shards[3] = nullptr;
  EXPECT_EQ(c.reconstruct(null_shards, {false, true, true, true, true, true}, 64).code(), StatusCode::kNullPointer);
  for (auto &x : b) EXPECT_EQ(x, std::vector<uint8_t>(64, 0x11));

  // A non-MDS erasure set is refused, not silently wrong.
  auto bad_code = jit->codec("matrix:k=2,m=2,a=1.1/1.1");
  ASSERT_TRUE(bad_code.ok());
  std::vector<uint8_t *> four{b[0].data(), b[1].data(), b[2].data(), b[3].data()};
  EXPECT_EQ((*bad_code)->reconstruct(four, {false, false, true, true}, 64).code(), StatusCode::kSingular);
}

TEST(BadInput, JitOptionsAndSpecs) {
  JitOptions o;
  o.target = "host+avx512vbmi2,+gfni,+avx512f";
  auto j = Jit::create(o);
  // Either this CPU has them (fine) or the request is refused, never a crash.
  if (!j.ok()) EXPECT_EQ(j.status().code(), StatusCode::kUnsupportedTarget);
  o.target = "aarch64+neon";
  EXPECT_EQ(Jit::create(o).status().code(), StatusCode::kUnsupportedTarget);
  o.target = "nonsense";
  EXPECT_EQ(Jit::create(o).status().code(), StatusCode::kUnsupportedTarget);
  o = JitOptions();
  o.strategy = "magic";
  EXPECT_EQ(Jit::create(o).status().code(), StatusCode::kInvalidArgument);
  o = JitOptions();
  o.opt_level = 7;
  EXPECT_EQ(Jit::create(o).status().code(), StatusCode::kInvalidArgument);
  auto jit = make_jit("host");
  ASSERT_TRUE(jit);
  EXPECT_EQ(jit->codec("rs-vand:k=0,m=1").status().code(), StatusCode::kInvalidSpec);
}

// codec() compiling (aot_kernels off: GF(2^16) codecs would otherwise start on the built-in
// kernels and compile nothing here).
TEST(KernelCache, SameCodeSharesOneKernelAndThreadsCompileOnce) {
  auto jit = make_jit("host", 3, /*shapes=*/false, /*aot=*/false);  // the encoder alone (shape kernels: below)
  ASSERT_TRUE(jit);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  std::vector<std::string> symbols(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto c = jit->codec("rs-vand:k=9,m=3,gf=16");
      if (c.ok()) {
        ++ok;
        symbols[t] = (*c)->encoder_info().symbol;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(jit->stats().kernels_compiled, 1u);
  // The other seven: a kernel-cache hit each, except where Jit::codec's memo of live codecs
  // answered first (a thread that starts after another's codec() returned: seen under load).
  EXPECT_LE(jit->stats().kernel_cache_hits, 7u);
  for (auto &s : symbols) EXPECT_EQ(s, symbols[0]);
  auto again = jit->codec("rs-vand:k=9,m=3,gf=16");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(jit->stats().kernels_compiled, 1u);
  auto other = jit->codec("rs-vand:k=9,m=4,gf=16");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(jit->stats().kernels_compiled, 2u);
}

// Shape kernels are per (field, target, strategy, inputs, outputs): codecs of one field and
// k share them, and a codec with one more parity shard compiles only the one more shape.
TEST(KernelCache, CodecsShareShapeKernels) {
  auto jit = make_jit("host", 3, /*shapes=*/true, /*aot=*/false);
  ASSERT_TRUE(jit);
  auto a = jit->codec("rs-vand:k=9,m=3,gf=16");
  ASSERT_TRUE(a.ok());
  std::vector<bool> present(12, true);
  present[0] = false;
  if (!(*a)->decoder_info(present).decision.run_time_coefficients())
    GTEST_SKIP() << "no shape kernel for GF(2^16) on this CPU";
  // encoder + 3 decode shapes + the accumulate shape of update / encode_partial
  EXPECT_EQ(jit->stats().kernels_compiled, 1u + 3u + 1u);
  auto b = jit->codec("rs-cauchy:k=9,m=3,gf=16");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(jit->stats().kernels_compiled, 2u + 3u + 1u);  // its encoder only
  auto c = jit->codec("rs-vand:k=9,m=4,gf=16");
  ASSERT_TRUE(c.ok());
  // its encoder, the 4-output decode shape and the 4-output accumulate shape
  EXPECT_EQ(jit->stats().kernels_compiled, 3u + 4u + 2u);
}

TEST(KernelInfo, ReportsTierAndStrategy) {
  auto jit = make_jit("host-sse2");
  ASSERT_TRUE(jit);
  auto c = jit->codec("rs-vand:k=10,m=4,gf=8");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->encoder_info().strategy, "clmul-shift");
  EXPECT_EQ((*c)->encoder_info().vector_bits, 64u);
  EXPECT_NE((*c)->encoder_info().symbol.find("ecjit_encode__rs_vand"), std::string::npos);
}

// A forced strategy is honoured or refused, never replaced: on every tier reached by masking
// (GFNI off, AVX-512 off, AVX2 off) and every field, codec() either serves with the strategy
// asked for (its encoder says so - the built-in kernels included - and encodes as the
// reference does) or fails with kUnsupportedTarget naming it. Independent of the host: GFNI is
// refused wherever the tier masks it, clmul-insn on GF(2^8) / GF(2^16) and split-table on
// GF(2^32) / GF(2^64) everywhere, and clmul-shift runs on every tier.
TEST(ForcedStrategy, HonouredOrRefusedOnEveryTier) {
  const std::vector<std::string> tiers = {"host", "host-gfni", "host-gfni,-avx512f", "host-gfni,-avx512f,-avx2"};
  const std::vector<std::string> strategies = {"gfni", "split-table", "clmul-shift", "clmul-insn", "clmul-mixed"};
  for (const std::string &tier : tiers) {
    for (const std::string &strategy : strategies) {
      JitOptions o;
      o.target = tier;
      o.strategy = strategy;
      auto jit = Jit::create(o);
      ASSERT_TRUE(jit.ok()) << tier << " " << strategy << ": " << jit.status().to_string();
      for (unsigned gf : {8u, 16u, 32u, 64u}) {
        const std::string spec = "rs-vand:k=6,m=3,gf=" + std::to_string(gf);
        const std::string what = tier + " " + strategy + " " + spec;
        auto c = (*jit)->codec(spec);
        const bool must_refuse = (strategy == "gfni" && tier != "host") ||
                                 (strategy.rfind("clmul-", 0) == 0 && strategy != "clmul-shift" && gf <= 16) ||
                                 (strategy == "split-table" && gf >= 32);
        if (strategy == "clmul-shift") ASSERT_TRUE(c.ok()) << what << ": " << c.status().to_string();
        if (must_refuse) ASSERT_FALSE(c.ok()) << what << " ran " << (*c)->encoder_info().strategy;
        if (!c.ok()) {
          EXPECT_EQ(c.status().code(), StatusCode::kUnsupportedTarget) << what << ": " << c.status().to_string();
          EXPECT_NE(c.status().message().find("'" + strategy + "'"), std::string::npos) << c.status().message();
          continue;
        }
        const std::string ran = (*c)->encoder_info().strategy;
        // clmul-mixed's run-time-coefficient (shape) form is clmul-insn.
        EXPECT_TRUE(ran == strategy || (strategy == "clmul-mixed" && ran == "clmul-insn"))
            << what << " ran " << ran << " (" << (*c)->encoder_info().why << ")";
        // The codec's own kernel says it was forced; a built-in one serving first says so.
        const ecjit::KernelDecision d = (*c)->encoder_info().decision;
        if (d.tier == ecjit::KernelTier::kCompiled) EXPECT_EQ(d.source, ecjit::DecisionSource::kForced) << what;
        else EXPECT_EQ(d.tier, ecjit::KernelTier::kBuiltIn) << what;
        std::vector<bool> present(9, true);
        present[0] = present[4] = false;
        const std::string decodes = (*c)->decoder_info(present).strategy;
        EXPECT_TRUE(decodes == strategy || (strategy == "clmul-mixed" && decodes == "clmul-insn"))
            << what << " decodes with " << decodes << " (" << (*c)->decoder_info(present).why << ")";
        auto code = ecjit::codes::build_code(*ecjit::CodeSpec::parse(spec));
        ASSERT_TRUE(code.ok());
        check_encode(**c, *code, 4096 + 64, 0, gf, what);
      }
    }
  }
}

}  // namespace

namespace ecjit {
namespace {

// encode() with streaming stores (JitOptions::streaming_min_len, lowered to 64 KiB here):
// aligned shards at or above the threshold take the second, non-temporal encoder (one more
// compile); shorter or misaligned ones the ordinary one. Every result equals the reference.
TEST(StreamingStores, AlignedLargeShardsUseTheStreamingEncoderAndMatchReference) {
  JitOptions o;
  o.streaming_min_len = 64 << 10;
  o.disk_cache = false;
  auto j = Jit::create(o);
  ASSERT_TRUE(j.ok()) << j.status().to_string();
#if defined(__x86_64__)
  const bool x86 = true;
#else
  const bool x86 = false;
#endif
  for (const char *spec : {"rs-vand:k=10,m=4,gf=8", "rs-vand:k=6,m=3,gf=16",
                           "rs-vand:k=5,m=2,gf=64", "rs-cauchy:k=80,m=60,gf=8"}) {
    auto codec = (*j)->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    auto code = ecjit::codes::build_code(spec);
    ASSERT_TRUE(code.ok());
    (*j)->wait_for_tuning();  // the compiled encoder in place (JitOptions::aot_kernels)
    const uint64_t before = (*j)->stats().kernels_compiled;
    const size_t big = (64 << 10) + 3 * 64;
    ASSERT_NO_FATAL_FAILURE(check_encode(**codec, *code, (64 << 10) - 64, 0, 1, spec));  // short
    ASSERT_NO_FATAL_FAILURE(check_encode(**codec, *code, big, 1, 2, spec));   // misaligned
    ASSERT_NO_FATAL_FAILURE(check_encode(**codec, *code, big + 8, 0, 3, spec));  // len % 64
    EXPECT_EQ((*j)->stats().kernels_compiled, before) << spec << ": no streaming encoder yet";
    ASSERT_NO_FATAL_FAILURE(check_encode(**codec, *code, big, 0, 4, spec));   // streaming
    // Several main-loop iterations of the streaming kernel; not for the tiled RS(140,80),
    // whose reference encode of 4 x 80 shards is most of this test's time under ASan.
    if (code->k <= 10)
      ASSERT_NO_FATAL_FAILURE(check_encode(**codec, *code, 4 * big, 0, 5, spec));
    EXPECT_EQ((*j)->stats().kernels_compiled, before + (x86 ? 1 : 0)) << spec;
  }
}

}  // namespace
}  // namespace ecjit
