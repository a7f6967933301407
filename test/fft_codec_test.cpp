// FftCodec (rs-fft through ecjit::Jit and the C API) against the scalar reference codes::fft::encode_bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "background_gate.h"
#include "codes/rs_fft.h"
#include "ecjit/ecjit.h"
#include "ecjit/ecjit_c.h"
#include "fft/mul_tables.h"
#include "guarded_buffer.h"
#include "runtime/fft_codec.h"

using ecjit::Codec;
using ecjit::Jit;
using ecjit::JitOptions;
using ecjit::ShardSet;
using ecjit::StatusCode;
using ecjit::test::GuardedBuffer;

namespace {

std::string spec_of(unsigned k, unsigned m) {
  return "rs-fft:k=" + std::to_string(k) + ",m=" + std::to_string(m);
}

// aot false: the JIT's own step kernels, as without built-in kernels (ECJIT_AOT=0).
// `target` must be a tier of this CPU, or the Jit is null.
std::shared_ptr<Jit> make_jit(unsigned threads = 1, bool aot = true, const std::string &target = "host") {
  JitOptions o;
  o.disk_cache = false;
  o.aot_kernels = aot;
  o.target = target;
  o.tune = false;
  o.threads = threads;
  o.parallel_min_bytes = threads > 1 ? 4096 : o.parallel_min_bytes;  // split even small calls
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok() || target != "host") << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

// A JitImpl of its own, for the FftKernels seam (FftCodec::make with given kernels).
std::shared_ptr<ecjit::runtime::JitImpl> make_impl() {
  JitOptions o;
  o.disk_cache = false;
  o.tune = false;
  auto impl = ecjit::runtime::JitImpl::make(o);
  EXPECT_TRUE(impl.ok()) << impl.status().to_string();
  return impl.ok() ? *impl : nullptr;
}

Jit &jit() {
  static std::shared_ptr<Jit> j = make_jit();
  return *j;
}

std::shared_ptr<const Codec> codec_of(unsigned k, unsigned m, Jit &on = jit()) {
  auto c = on.codec(spec_of(k, m));
  EXPECT_TRUE(c.ok()) << spec_of(k, m) << ": " << c.status().to_string();
  return c.ok() ? *c : nullptr;
}

// n shards flush against guard pages: k seeded random originals, the reference's recovery
// in `want` (the shards themselves start as the same stripe).
struct Stripe {
  unsigned k, m;
  size_t len;
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<std::vector<uint8_t>> want;
  std::vector<uint8_t *> ptrs;

  Stripe(unsigned k_, unsigned m_, size_t len_, uint64_t seed,
         ecjit::codes::fft::Gf gf = ecjit::codes::fft::Gf::k16)
      : k(k_), m(m_), len(len_) {
    std::mt19937_64 rng(seed);
    want.assign(k + m, std::vector<uint8_t>(len));
    for (unsigned s = 0; s < k + m; ++s) {
      bufs.push_back(std::make_unique<GuardedBuffer>(len));
      ptrs.push_back(bufs.back()->data());
    }
    for (unsigned s = 0; s < k; ++s)
      for (auto &b : want[s]) b = uint8_t(rng());
    std::vector<const uint8_t *> d(k);
    std::vector<uint8_t *> p(m);
    for (unsigned s = 0; s < k; ++s) d[s] = want[s].data();
    for (unsigned j = 0; j < m; ++j) p[j] = want[k + j].data();
    EXPECT_TRUE(ecjit::codes::fft::encode_bytes(k, m, len, d.data(), p.data(), gf).ok());
    restore();
  }
  void restore() {
    for (unsigned s = 0; s < k + m; ++s) std::memcpy(ptrs[s], want[s].data(), len);
  }
  void spoil(unsigned s) { std::memset(ptrs[s], 0xA5, len); }
  bool equal(unsigned s) const { return std::memcmp(ptrs[s], want[s].data(), len) == 0; }
  // The originals' and the recovery shards' pointers (lvalues: Span binds to them).
  std::vector<const uint8_t *> &data() { return data_ = {ptrs.begin(), ptrs.begin() + k}; }
  std::vector<uint8_t *> &parity() { return parity_ = {ptrs.begin() + k, ptrs.end()}; }

 private:
  std::vector<const uint8_t *> data_;
  std::vector<uint8_t *> parity_;
};

// ---- encode == the reference, both rates, odd-but-even lengths ----

struct EncodeCase {
  unsigned k, m;
  size_t len;
};
void PrintTo(const EncodeCase &c, std::ostream *os) { *os << spec_of(c.k, c.m) << " len " << c.len; }

std::vector<EncodeCase> encode_cases() {
  std::vector<EncodeCase> v;
  const size_t all[] = {2, 62, 64, 66, 4094, 4160, 65538};
  for (auto [k, m] : {std::pair{4u, 2u}, {2u, 4u}, {5u, 6u}, {6u, 5u}, {32u, 32u}})
    for (size_t len : all) v.push_back({k, m, len});
  // Several chunks at either rate.
  for (auto [k, m] : {std::pair{100u, 20u}, {20u, 100u}, {300u, 50u}})
    for (size_t len : all) v.push_back({k, m, len});
  return v;
}

class FftEncode : public ::testing::TestWithParam<EncodeCase> {};

TEST_P(FftEncode, EqualsReference) {
  const EncodeCase c = GetParam();
  auto codec = codec_of(c.k, c.m);
  ASSERT_TRUE(codec);
  Stripe st(c.k, c.m, c.len, 1000 * c.k + c.m + c.len);
  for (unsigned j = 0; j < c.m; ++j) st.spoil(c.k + j);
  ASSERT_TRUE(codec->encode(st.data(), st.parity(), c.len).ok());
  for (unsigned j = 0; j < c.m; ++j) EXPECT_TRUE(st.equal(c.k + j)) << "recovery shard " << j;
}

INSTANTIATE_TEST_SUITE_P(All, FftEncode, ::testing::ValuesIn(encode_cases()), [](const auto &info) {
  return "k" + std::to_string(info.param.k) + "_m" + std::to_string(info.param.m) + "_len" +
         std::to_string(info.param.len);
});

// rs:k=,m= is the construction its cost model chose, reachable through codec(): wide codes
// get the FFT (parity = the crate's reference, lost shards rebuilt), narrow ones the Cauchy
// matrix; the encoder's info says why and spec() names the chosen code.
TEST(FftCodec, RsSpecGetsTheChosenConstruction) {
  auto chosen = jit().codec("rs:k=32,m=32");
  ASSERT_TRUE(chosen.ok()) << chosen.status().to_string();
  // Leopard-RS's GF(2^8) where its points take the code (klauspost's leopard8 parity).
  EXPECT_EQ((*chosen)->spec().to_string(), "rs-fft:k=32,m=32,gf=8");
  EXPECT_EQ((*chosen)->encoder_info().decision.chosen_spec, "rs-fft:k=32,m=32,gf=8") << (*chosen)->encoder_info().why;
  Stripe st(32, 32, 4096, 77, ecjit::codes::fft::Gf::k8);
  for (unsigned j = 0; j < 32; ++j) st.spoil(32 + j);
  ASSERT_TRUE((*chosen)->encode(st.data(), st.parity(), 4096).ok());
  for (unsigned j = 0; j < 32; ++j) EXPECT_TRUE(st.equal(32 + j)) << "recovery shard " << j;
  std::vector<bool> present(64, true);
  for (unsigned s : {0u, 5u, 31u, 40u, 63u}) st.spoil(s), present[s] = false;
  ASSERT_TRUE((*chosen)->reconstruct(st.ptrs, present, 4096).ok());
  for (unsigned s = 0; s < 64; ++s) EXPECT_TRUE(st.equal(s)) << "shard " << s;
  // The named spec's codec carries no choice.
  EXPECT_EQ(codec_of(32, 32)->encoder_info().decision.chosen_spec, "");
  // Past GF(2^8)'s points: reed-solomon-simd's GF(2^16).
  auto wide = jit().codec("rs:k=300,m=100");
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_EQ((*wide)->spec().to_string(), "rs-fft:k=300,m=100,gf=16");
  auto narrow = jit().codec("rs:k=10,m=4");
  ASSERT_TRUE(narrow.ok()) << narrow.status().to_string();
  EXPECT_EQ((*narrow)->spec().to_string(), "rs-cauchy:k=10,m=4,gf=8");
  EXPECT_EQ((*narrow)->encoder_info().decision.chosen_spec, "rs-cauchy:k=10,m=4,gf=8");
}

// 8:4's encode and a rebuild of shards 0, 5, 9 through `codec` give st's bytes.
void check_encode_and_rebuild_8_4(const Codec &codec, Stripe &st) {
  for (unsigned j = 0; j < 4; ++j) st.spoil(8 + j);
  ASSERT_TRUE(codec.encode(st.data(), st.parity(), st.len).ok());
  for (unsigned j = 0; j < 4; ++j) EXPECT_TRUE(st.equal(8 + j));
  std::vector<bool> present(12, true);
  for (unsigned s : {0u, 5u, 9u}) present[s] = false, st.spoil(s);
  ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < 12; ++s) EXPECT_TRUE(st.equal(s)) << s;
}

// Split over two threads (pieces of whole chunks) plus the partial chunk: the same bytes.
TEST(FftCodec, ThreadsGiveTheSameBytes) {
  auto two = make_jit(2);
  ASSERT_TRUE(two);
  auto codec = codec_of(8, 4, *two);
  ASSERT_TRUE(codec);
  Stripe st(8, 4, 3 * 4096 + 66, 7);
  check_encode_and_rebuild_8_4(*codec, st);
  // A whole chunk of originals (4..7) with every recovery shard: the inverted encoder, split.
  std::vector<bool> present(12, true);
  for (unsigned s = 4; s < 8; ++s) present[s] = false, st.spoil(s);
  const ecjit::KernelInfo info = codec->decoder_info(present);
  if (info.vector_bits != 64) EXPECT_EQ(info.decision.fft.route, ecjit::FftRoute::kInverse) << info.why;
  ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < 12; ++s) EXPECT_TRUE(st.equal(s)) << s;
}

// A code past kMaxShards (4096 shards): the crate's own limit applies.
TEST(FftCodec, WiderThanOtherFamilies) {
  auto codec = codec_of(4000, 1000);
  ASSERT_TRUE(codec);
  Stripe st(4000, 1000, 66, 3);
  for (unsigned j = 0; j < 1000; ++j) st.spoil(4000 + j);
  ASSERT_TRUE(codec->encode(st.data(), st.parity(), st.len).ok());
  for (unsigned j = 0; j < 1000; ++j) ASSERT_TRUE(st.equal(4000 + j)) << j;
  std::vector<bool> present(5000, true);
  for (unsigned s : {0u, 17u, 3999u, 4000u, 4500u, 4999u}) present[s] = false, st.spoil(s);
  ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < 5000; ++s) ASSERT_TRUE(st.equal(s)) << s;
  EXPECT_TRUE(codec->parity_matrix().empty());  // k * m > 65536
}

// The widest high-rate code: its decode core (65536 points, ~90,000 steps: the derivative runs
// inside the IFFT's last pass and the FFT's first) runs; every original lost and restored from
// one column of recovery (plain buffers: 65536 guarded ones would pass the kernel's limit of
// memory mappings).
TEST(FftCodec, WidestCodeDecodesThroughTheWholeCore) {
  const unsigned k = 32768, m = 32768;
  const size_t len = 64;
  auto codec = codec_of(k, m);
  ASSERT_TRUE(codec);
  std::mt19937_64 rng(9);
  std::vector<std::vector<uint8_t>> want(k + m, std::vector<uint8_t>(len)), got;
  for (unsigned s = 0; s < k; ++s)
    for (auto &b : want[s]) b = uint8_t(rng());
  std::vector<uint8_t *> ptrs;
  for (auto &v : want) ptrs.push_back(v.data());
  ASSERT_TRUE(codec->encode({ptrs.data(), k}, {ptrs.data() + k, m}, len).ok());
  got = want;
  ptrs.clear();
  for (auto &v : got) ptrs.push_back(v.data());
  // The first half of the originals and of the recovery shards lost: the decode core
  // (restoring the recovery shards first would cost m / 2 x k multiplies).
  std::vector<bool> present(k + m, true);
  for (unsigned s = 0; s < k / 2; ++s) present[s] = false;
  for (unsigned j = 0; j < m / 2; ++j) present[k + j] = false;
  for (unsigned s = 0; s < k + m; ++s)
    if (!present[s]) std::fill(got[s].begin(), got[s].end(), 0xEE);
  const ecjit::KernelInfo info = codec->decoder_info(present);
  if (info.vector_bits != 64) EXPECT_EQ(info.decision.fft.route, ecjit::FftRoute::kTransforms) << info.why;
  ASSERT_TRUE(codec->reconstruct(ptrs, present, len).ok());
  for (unsigned s = 0; s < k + m; ++s) ASSERT_EQ(got[s], want[s]) << s;
  // Every original lost, every recovery shard read: the encoder's transforms inverted.
  for (unsigned s = 0; s < k + m; ++s) {
    present[s] = s >= k;
    if (!present[s]) std::fill(got[s].begin(), got[s].end(), 0xEE);
  }
  const ecjit::KernelInfo inverted = codec->decoder_info(present);
  if (inverted.vector_bits != 64) EXPECT_EQ(inverted.decision.fft.route, ecjit::FftRoute::kInverse) << inverted.why;
  ASSERT_TRUE(codec->reconstruct(ptrs, present, len).ok());
  for (unsigned s = 0; s < k + m; ++s) ASSERT_EQ(got[s], want[s]) << s;
}

// ---- Rebuilds ----

// A rebuilt shard's buffer that is a present shard's, or another rebuilt one's, is refused with
// both named and nothing written, pairwise for small codes and through the pointer set for wide
// ones (runtime/shard_checks.h: check_rebuilt_buffers, the matrix codecs' check too).
TEST(FftCodec, RebuiltBuffersMustNotAlias) {
  for (auto [code_k, code_m] : {std::pair{4u, 4u}, {128u, 128u}}) {
    const unsigned k = code_k, m = code_m;  // captured by the lambda below (C++17)
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    const size_t len = 128;
    std::vector<std::vector<uint8_t>> buf(k + m, std::vector<uint8_t>(len, 0x3C));
    std::vector<uint8_t *> shards;
    for (auto &v : buf) shards.push_back(v.data());
    std::vector<bool> present(k + m, true);
    for (unsigned s = 0; s < m / 2; ++s) present[s] = present[k + s] = false;  // the core: no inverse
    const auto before = buf;
    auto refused = [&](const ecjit::Status &st, const std::string &fragment) {
      EXPECT_EQ(st.code(), ecjit::StatusCode::kInvalidArgument) << st.to_string();
      EXPECT_NE(st.message().find(fragment), std::string::npos) << k << ":" << m << " " << st.to_string();
      EXPECT_EQ(buf, before) << k << ":" << m << " written";
    };
    std::vector<uint8_t *> aliased = shards;
    aliased[1] = shards[k - 1];
    refused(codec->reconstruct(aliased, present, len),
            "rebuilt shard 1 is the same buffer as present shard " + std::to_string(k - 1));
    aliased = shards;
    aliased[k] = shards[0];
    refused(codec->reconstruct(aliased, present, len), "rebuilt shards 0 and " + std::to_string(k) + " are the same buffer");
  }
}

// The erasure sets the encoder's inverted transforms take (runtime/fft_engine.h): at the high
// rate originals of one whole chunk lost with every recovery shard present, at the low rate a
// whole recovery chunk or every original present; byte for byte, tails included.
TEST(FftCodec, ReconstructByTheInvertedEncoder) {
  std::mt19937_64 rng(12);
  for (auto [k, m] : {std::pair{10u, 4u}, {32u, 32u}, {64u, 16u}, {4u, 10u}, {8u, 20u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    const unsigned n = k + m;
    const size_t C = ecjit::codes::fft::geometry(k, m)->chunk;
    const bool high = ecjit::codes::fft::geometry(k, m)->rate == ecjit::codes::fft::Rate::kHigh;
    for (size_t len : {size_t(194), size_t(4096 + 130)}) {
      Stripe st(k, m, len, n + len);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<bool> present(n, true);
        if (high) {  // a whole chunk of originals, or a part of it
          const size_t c0 = (rng() % (k / C)) * C;
          for (size_t s = c0; s < c0 + C; ++s) present[s] = trial != 2 || rng() % 2 == 0;
          present[c0] = false;
        } else {  // originals and the recovery chunks but the one read
          for (unsigned s = 0; s < k; ++s) present[s] = trial == 2;
          for (unsigned s = k; s < n; ++s) present[s] = (s - k) / C == 1 || rng() % 3 == 0;
        }
        unsigned lost = 0;
        for (unsigned s = 0; s < n; ++s)
          if (!present[s]) st.spoil(s), ++lost;
        if (lost > m) continue;
        const ecjit::KernelInfo info = codec->decoder_info(present);
        if (info.vector_bits != 64 && lost * k > 2 * C * 8)  // past a matrix's work
          EXPECT_EQ(info.decision.fft.route, ecjit::FftRoute::kInverse) << spec_of(k, m) << ": " << info.why;
        ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << spec_of(k, m);
        for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << spec_of(k, m) << " len " << len << " shard " << s;
      }
    }
  }
}

// Losing a recovery shard beside originals: the engine restores it first as a matrix and
// inverts the encoder (at the high rate; at the low rate the lost originals first), byte for
// byte, and says so where that is cheaper than the decode core.
TEST(FftCodec, ReconstructInvertedAfterRestoringFirst) {
  std::mt19937_64 rng(13);
  size_t said = 0;
  bool vector = false;
  for (auto [k, m] : {std::pair{32u, 32u}, {64u, 16u}, {16u, 16u}, {8u, 20u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    const unsigned n = k + m;
    const bool high = ecjit::codes::fft::geometry(k, m)->rate == ecjit::codes::fft::Rate::kHigh;
    for (size_t len : {size_t(194), size_t(4096 + 130)}) {
      Stripe st(k, m, len, n + len);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<bool> present(n, true);
        if (high) {  // most of the first chunk of originals and a recovery shard or two
          for (unsigned s = 0; s + 1 + unsigned(trial) < std::min(k, m); ++s) present[s] = false;
          present[k + rng() % m] = false;
          if (trial == 2) present[k + rng() % m] = false;
        } else {  // recovery shards of two chunks and an original or two
          for (unsigned s = k; s < n; ++s) present[s] = rng() % 4 == 0;
          present[rng() % k] = false;
          if (trial == 2) present[rng() % k] = false;
        }
        unsigned lost = 0;
        for (unsigned s = 0; s < n; ++s)
          if (!present[s]) st.spoil(s), ++lost;
        if (lost > m) continue;
        const ecjit::KernelInfo info = codec->decoder_info(present);
        said += info.decision.fft.restored_first > 0;
        vector |= info.vector_bits != 64;
        ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << spec_of(k, m);
        for (unsigned s = 0; s < n; ++s)
          ASSERT_TRUE(st.equal(s)) << spec_of(k, m) << " len " << len << " trial " << trial << " shard " << s;
        // Only some shards asked for: the ones restored first are not among them.
        for (unsigned s = 0; s < n; ++s)
          if (!present[s]) st.spoil(s);
        ASSERT_TRUE(codec->reconstruct_data(st.ptrs, present, st.len).ok()) << spec_of(k, m);
        for (unsigned s = 0; s < k; ++s) ASSERT_TRUE(st.equal(s)) << spec_of(k, m) << " data shard " << s;
        st.restore();  // the recovery shards reconstruct_data left spoiled
      }
    }
  }
  if (vector) EXPECT_GT(said, 4u);  // without a vector unit the scalar path serves
}

// A matrix of many coefficients costs a call more to make than the whole transforms cost to
// run: the first call runs the transforms and the matrix is made in the background, then
// serves; the same bytes both ways.
TEST(FftCodec, ManyCoefficientMatricesAreMadeInTheBackground) {
  auto j = make_jit();
  ASSERT_TRUE(j);
  auto codec = codec_of(256, 256, *j);
  ASSERT_TRUE(codec);
  std::vector<bool> present(512, true);
  for (unsigned s : {3u, 17u, 40u, 41u, 99u, 128u, 200u, 255u, 256u, 300u, 301u, 400u, 511u}) present[s] = false;
  Stripe st(256, 256, 4096 + 130, 77);
  for (unsigned s = 0; s < 512; ++s)
    if (!present[s]) st.spoil(s);
  ecjit::test::BackgroundGate gate(*j);  // the matrix cannot land before the first call's answer is read
  ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());  // before any decoder_info: a call asks
  for (unsigned s = 0; s < 512; ++s) ASSERT_TRUE(st.equal(s)) << "first call, shard " << s;
  const ecjit::KernelInfo first = codec->decoder_info(present);
  if (first.vector_bits == 64) GTEST_SKIP() << "no JIT kernels here";
  EXPECT_EQ(first.decision.fft.route, ecjit::FftRoute::kMatrix) << first.why;
  EXPECT_EQ(first.decision.fft.multiplies, 3328u) << first.why;
  EXPECT_TRUE(first.decision.compiling || first.decision.fft.made_later) << first.why;  // in the background
  gate.release();
  j->wait_for_tuning();
  const ecjit::KernelInfo made = codec->decoder_info(present);
  EXPECT_TRUE(made.decision.fft.made_later) << made.why;
  EXPECT_FALSE(made.decision.compiling) << made.why;
  for (unsigned s = 0; s < 512; ++s)
    if (!present[s]) st.spoil(s);
  ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < 512; ++s) ASSERT_TRUE(st.equal(s)) << "by the matrix, shard " << s;
}

// The decode core's step kernel compiles on the background thread after the Jit's first rs-fft
// codec (FftEngine::core_kernel). A decode that needs it sooner runs as a matrix on the
// transforms' kernel where that is cheap (32:32 losing 32: no compile on the call), else it
// compiles the kernel itself (512:512 losing 512: a matrix of 262,144 coefficients would cost
// more); the same bytes either way, and the background's compile then finds the kernel made.
// Without built-in step kernels (ECJIT_AOT=0, or a build without them).
TEST(FftCodec, DecodesBeforeTheCoreKernelIsCompiledRunAsAMatrixOrCompileIt) {
  auto j = make_jit(1, /*aot=*/false);
  ASSERT_TRUE(j);
  ecjit::test::BackgroundGate gate(*j);  // the codecs' compiles of the core kernel wait behind it
  auto small = codec_of(32, 32, *j);
  ASSERT_TRUE(small);
  if (small->decoder_info(std::vector<bool>(64, true)).vector_bits == 64) GTEST_SKIP() << "no JIT kernels here";
  std::mt19937_64 rng(0x1e7);
  auto lose = [&rng](Stripe &st, unsigned n, unsigned count) {
    std::vector<bool> present(n, true);
    for (unsigned lost = 0; lost < count;) {
      const unsigned s = unsigned(rng() % n);
      if (present[s]) present[s] = false, st.spoil(s), ++lost;
    }
    return present;
  };
  Stripe st(32, 32, 65536 + 64 + 2, 31);
  const uint64_t compiled = j->stats().kernels_compiled;
  for (int call = 0; call < 3; ++call) {
    st.restore();
    const std::vector<bool> present = lose(st, 64, 32);
    ASSERT_TRUE(small->reconstruct(st.ptrs, present, st.len).ok());
    for (unsigned s = 0; s < 64; ++s) ASSERT_TRUE(st.equal(s)) << "32:32 call " << call << " shard " << s;
  }
  EXPECT_EQ(j->stats().kernels_compiled, compiled) << "a decode of 32:32 compiled on the caller's thread";
  auto wide = codec_of(512, 512, *j);
  ASSERT_TRUE(wide);
  Stripe big(512, 512, 4096, 32);
  const std::vector<bool> present = lose(big, 1024, 512);
  const uint64_t before = j->stats().kernels_compiled;
  ASSERT_TRUE(wide->reconstruct(big.ptrs, present, big.len).ok());
  for (unsigned s = 0; s < 1024; ++s) ASSERT_TRUE(big.equal(s)) << "512:512 shard " << s;
  EXPECT_EQ(j->stats().kernels_compiled, before + 1) << "the core kernel, compiled by the call";
  gate.release();
  j->wait_for_tuning();
  EXPECT_EQ(j->stats().kernels_compiled, before + 1) << "compiled twice";
}

// The step kernels built into libecjit serve a new rs-fft codec on every x86 tier (AVX-512
// GFNI, 256-bit GFNI, AVX2 split tables, SSSE3): codec() and its first encodes and decodes of
// random sets - whole cores, pruned ones, matrices - compile nothing, and give the
// reference's bytes, as the Jit's own step kernels do (aot_kernels off) on the same calls.
TEST(FftCodec, BuiltInStepKernelsServeNewCodecsOnEveryTier) {
  for (const char *target : {"host", "host-avx512f", "host-gfni,-avx512f", "host-gfni,-avx2"})
    for (const bool aot : {true, false})
      for (const char *field : {"", ",gf=8"}) {
        std::shared_ptr<Jit> made = make_jit(1, aot, target);
        if (!made) continue;  // not a tier of this CPU
        Jit &j = *made;
        const ecjit::codes::fft::Gf gf = field[0] ? ecjit::codes::fft::Gf::k8 : ecjit::codes::fft::Gf::k16;
        for (auto [k, m] : {std::pair{32u, 32u}, std::pair{100u, 28u}}) {
          const std::string spec = "rs-fft:k=" + std::to_string(k) + ",m=" + std::to_string(m) + field;
          const std::string what = std::string(target) + (aot ? " built-in " : " jit ") + spec;
          auto c = j.codec(spec);
          ASSERT_TRUE(c.ok()) << what << ": " << c.status().to_string();
          const ecjit::Codec &codec = **c;
          if (codec.encoder_info().vector_bits == 64) continue;  // no vector kernel on this tier
#if defined(__x86_64__)
          EXPECT_EQ(codec.encoder_info().decision.tier == ecjit::KernelTier::kBuiltIn, aot) << what;
#endif
          const uint64_t compiled = j.stats().kernels_compiled;
          Stripe st(k, m, 4096 + 64 + 2, k + m, gf);
          for (unsigned s = 0; s < m; ++s) st.spoil(k + s);
          ASSERT_TRUE(codec.encode(st.data(), st.parity(), st.len).ok()) << what;
          for (unsigned s = 0; s < m; ++s) ASSERT_TRUE(st.equal(k + s)) << what << " recovery shard " << s;
          std::mt19937_64 rng(k * 31 + m);
          for (int trial = 0; trial < 4; ++trial) {
            std::vector<bool> present(k + m, true);
            if (trial == 3) {  // the first m / 2 of both kinds: a pruned core
              for (unsigned s = 0; s < m / 2; ++s) present[s] = present[k + s] = false;
            } else {  // m, 2 and 1 lost at random: the whole core, matrices
              std::vector<unsigned> ids(k + m);
              for (unsigned s = 0; s < k + m; ++s) ids[s] = s;
              std::shuffle(ids.begin(), ids.end(), rng);
              for (unsigned i = 0; i < (trial == 0 ? m : trial == 1 ? 2u : 1u); ++i) present[ids[i]] = false;
            }
            for (unsigned s = 0; s < k + m; ++s)
              if (!present[s]) st.spoil(s);
            ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok()) << what << " trial " << trial;
            for (unsigned s = 0; s < k + m; ++s) ASSERT_TRUE(st.equal(s)) << what << " trial " << trial << " shard " << s;
          }
          if (aot) EXPECT_EQ(j.stats().kernels_compiled, compiled) << what << ": a call compiled";
          j.wait_for_tuning();
          for (unsigned s = 0; s < m; ++s) st.spoil(k + s);
          ASSERT_TRUE(codec.encode(st.data(), st.parity(), st.len).ok()) << what;
          for (unsigned s = 0; s < m; ++s) ASSERT_TRUE(st.equal(k + s)) << what << " recovery shard " << s << ", later";
        }
      }
}

// A small code's unrolled encoder is compiled on the background thread behind the built-in
// step kernels: codec() compiles nothing, the step kernel encodes the reference's bytes until
// the unrolled encoder lands, and then it does (whole columns and a partial tail).
TEST(FftCodec, SmallCodesEncodeUnrolledOnceCompiled) {
  auto j = make_jit();
  ASSERT_TRUE(j);
  const uint64_t before = j->stats().kernels_compiled;
  ecjit::test::BackgroundGate gate(*j);
  auto codec = codec_of(10, 4, *j);
  ASSERT_TRUE(codec);
  const ecjit::KernelInfo first = codec->encoder_info();
  if (first.decision.tier != ecjit::KernelTier::kBuiltIn) GTEST_SKIP() << "no built-in step kernels here: " << first.why;
  EXPECT_TRUE(first.decision.compiling) << first.why;
  EXPECT_EQ(j->stats().kernels_compiled, before) << "codec() compiled on the caller's thread";
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t len : {size_t(64), size_t(4096 + 130), size_t(70000)}) {
      Stripe st(10, 4, len, len + pass);
      for (unsigned s = 10; s < 14; ++s) st.spoil(s);
      ASSERT_TRUE(codec->encode(st.data(), st.parity(), len).ok());
      for (unsigned s = 10; s < 14; ++s) ASSERT_TRUE(st.equal(s)) << "pass " << pass << " len " << len << " shard " << s;
    }
    if (pass == 0) {
      gate.release();
      j->wait_for_tuning();
      const ecjit::KernelInfo now = codec->encoder_info();
      EXPECT_EQ(now.decision.tier, ecjit::KernelTier::kCompiled) << now.why;
      EXPECT_FALSE(now.decision.compiling) << now.why;
      EXPECT_EQ(j->stats().kernels_compiled, before + 1) << "the unrolled encoder";
    }
  }
}

// A small code's inverted decode is compiled unrolled on the background thread while the step
// kernel serves; once swapped in, the same bytes (whole columns and a partial tail).
TEST(FftCodec, SmallCodesInvertUnrolledOnceCompiled) {
  auto j = make_jit();
  ASSERT_TRUE(j);
  auto codec = codec_of(10, 4, *j);
  ASSERT_TRUE(codec);
  std::vector<bool> present(14, true);
  for (unsigned s = 4; s < 8; ++s) present[s] = false;  // chunk 1 of the originals
  for (size_t len : {size_t(64), size_t(4096 + 130), size_t(70000)}) {
    Stripe st(10, 4, len, len);
    for (int pass = 0; pass < 2; ++pass) {
      for (unsigned s = 4; s < 8; ++s) st.spoil(s);
      ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());
      for (unsigned s = 0; s < 14; ++s) ASSERT_TRUE(st.equal(s)) << "len " << len << " pass " << pass << " shard " << s;
      j->wait_for_tuning();  // the second pass runs the unrolled kernel
    }
  }
  const ecjit::KernelInfo info = codec->decoder_info(present);
  if (info.vector_bits != 64) EXPECT_TRUE(info.decision.fft.unrolled) << info.why;
}

// Every erasure set of up to m shards of st's code through `codec`: every shard restored.
void check_every_erasure_set(const Codec &codec, Stripe &st, const std::string &name) {
  const unsigned n = st.k + st.m;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (unsigned(__builtin_popcount(mask)) > st.m) continue;
    std::vector<bool> present(n);
    for (unsigned s = 0; s < n; ++s) {
      present[s] = !(mask >> s & 1);
      if (!present[s]) st.spoil(s);
    }
    ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok()) << name << " mask " << mask;
    for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << name << " mask " << mask << " shard " << s;
  }
}

// Every erasure set of up to m shards of 3:3 and 4:2 (len with a partial chunk).
TEST(FftCodec, ReconstructEveryErasureSet) {
  for (auto [k, m] : {std::pair{3u, 3u}, {4u, 2u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    Stripe st(k, m, 130, k);
    check_every_erasure_set(*codec, st, spec_of(k, m));
  }
}

// Random sets of exactly m erasures (and fewer) on wider codes of both rates.
TEST(FftCodec, ReconstructRandomSets) {
  std::mt19937_64 rng(11);
  for (auto [k, m] : {std::pair{32u, 32u}, {100u, 20u}, {20u, 100u}, {300u, 50u}, {6u, 5u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    const unsigned n = k + m;
    Stripe st(k, m, 194, n);
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<unsigned> order(n);
      for (unsigned s = 0; s < n; ++s) order[s] = s;
      std::shuffle(order.begin(), order.end(), rng);
      // m lost: the transforms; one lost: a matrix (runtime/fft_engine.h picks by work).
      const unsigned lost = trial == 0 ? m : trial == 1 ? 1 : 1 + unsigned(rng() % m);
      std::vector<bool> present(n, true);
      for (unsigned i = 0; i < lost; ++i) present[order[i]] = false, st.spoil(order[i]);
      ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << spec_of(k, m);
      for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << spec_of(k, m) << " shard " << s;
    }
  }
}

TEST(FftCodec, ReconstructDataLeavesRecoveryAlone) {
  auto codec = codec_of(5, 6);
  ASSERT_TRUE(codec);
  Stripe st(5, 6, 4160, 5);
  std::vector<bool> present(11, true);
  for (unsigned s : {1u, 3u, 6u, 8u}) present[s] = false, st.spoil(s);
  std::vector<uint8_t *> shards = st.ptrs;
  shards[8] = nullptr;  // a missing recovery shard need not have a buffer
  ASSERT_TRUE(codec->reconstruct_data(shards, present, st.len).ok());
  EXPECT_TRUE(st.equal(1) && st.equal(3));
  EXPECT_EQ(st.ptrs[6][0], 0xA5);  // not rebuilt
  EXPECT_EQ(st.ptrs[6][st.len - 1], 0xA5);
}

TEST(FftCodec, ReconstructSomeRebuildsOnlyTheWanted) {
  auto codec = codec_of(6, 5);
  ASSERT_TRUE(codec);
  Stripe st(6, 5, 66, 6);
  std::vector<bool> present(11, true);
  for (unsigned s : {0u, 2u, 7u, 9u}) present[s] = false, st.spoil(s);
  std::vector<uint8_t *> shards = st.ptrs;
  shards[0] = nullptr;  // missing and not wanted: untouched, may be null
  ASSERT_TRUE(codec->reconstruct_some(ShardSet{2, 9, 4}, shards, present, st.len).ok());
  EXPECT_TRUE(st.equal(2) && st.equal(9) && st.equal(4));
  EXPECT_EQ(st.ptrs[7][0], 0xA5);
  EXPECT_EQ(st.ptrs[0][65], 0xA5);
  EXPECT_EQ(codec->reconstruct_some(ShardSet{11}, st.ptrs, present, st.len).code(),
            StatusCode::kInvalidArgument);
}

TEST(FftCodec, MinimumToDecode) {
  auto codec = codec_of(4, 3);
  ASSERT_TRUE(codec);
  auto r = codec->minimum_to_decode(ShardSet{1, 2}, ShardSet{0, 1, 2, 5});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ShardSet{1, 2}));  // all wanted available: exactly them
  r = codec->minimum_to_decode(ShardSet{0, 5}, ShardSet{1, 2, 4, 5, 6});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ShardSet{5, 1, 2, 4}));  // wanted 5, then the lowest indices up to k
  r = codec->minimum_to_decode(ShardSet{3}, ShardSet{0, 1, 2, 4, 5, 6});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ShardSet{0, 1, 2, 4}));  // originals first
  {  // 10:4 (chunks of 4 originals): k shards that invert the encoder where that reads no more
    auto wide = codec_of(10, 4);
    ASSERT_TRUE(wide);
    ShardSet all_but_01;
    for (unsigned s = 2; s < 14; ++s) all_but_01.insert(s);
    auto w = wide->minimum_to_decode(ShardSet{0, 1}, all_but_01);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(*w, (ShardSet{4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));  // every recovery, chunk 0 not read
    w = wide->minimum_to_decode(ShardSet{0, 1, 2}, all_but_01);  // 2 is read anyway: the lowest k
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(*w, (ShardSet{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  }
  EXPECT_EQ(codec->minimum_to_decode(ShardSet{0}, ShardSet{1, 2, 3}).status().code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(codec->minimum_to_decode(ShardSet{7}, ShardSet{0, 1, 2, 3}).status().code(), StatusCode::kInvalidArgument);
  // reconstruct_some with present = the answer rebuilds the wanted shard.
  Stripe st(4, 3, 64, 9);
  std::vector<bool> present(7, false);
  for (unsigned s : {0u, 1u, 2u, 4u}) present[s] = true;
  st.spoil(3);
  ASSERT_TRUE(codec->reconstruct_some(ShardSet{3}, st.ptrs, present, st.len).ok());
  EXPECT_TRUE(st.equal(3));
}

TEST(FftCodec, PlansAreCachedPerErasureSet) {
  auto c = jit().codec(spec_of(10, 4));  // a codec of its own: fresh counters
  ASSERT_TRUE(c.ok());
  const Codec &codec = **c;
  std::vector<bool> present(14, true);
  present[2] = present[12] = false;
  ASSERT_TRUE(codec.prepare_reconstruct(present).ok());
  EXPECT_EQ(codec.decoder_info(present).strategy, "fft");
  Stripe st(10, 4, 64, 2);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok());
  const ecjit::KernelCacheStats s = codec.kernel_cache_stats();
  EXPECT_EQ(s.decode_plans, 1u);
  EXPECT_GE(s.hits, 3u);
  EXPECT_TRUE(codec.decoder_info(std::vector<bool>(14, false)).symbol.empty());  // cannot decode
  EXPECT_EQ(codec.encoder_info().strategy, "fft");
}

// decoder_info says how each set decodes and why: one loss as a matrix (32 multiply-adds
// against the transforms' hundreds), originals and a recovery shard by the inverted encoder
// after a matrix, half of each through the transforms, pruned below the whole core.
// On the host, with GFNI masked (split tables) and with AVX-512 masked too (a Zen 3's AVX2
// class): every machine class on one machine.
class FftDecoderInfo : public ::testing::TestWithParam<std::string> {};

TEST_P(FftDecoderInfo, SaysMatrixInverseOrPrunedTransforms) {
  JitOptions o;
  o.target = GetParam();
  o.disk_cache = false;
  o.tune = false;
  auto made = Jit::create(o);
  if (!made.ok()) GTEST_SKIP() << GetParam() << " is not a tier of this CPU: " << made.status().to_string();
  std::shared_ptr<Jit> j = *made;
  auto c = j->codec(spec_of(32, 32));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const Codec &codec = **c;
  if (codec.decoder_info(std::vector<bool>(64, true)).vector_bits == 64) GTEST_SKIP() << "no JIT kernels here";
  std::vector<bool> one(64, true);
  one[5] = false;
  const ecjit::KernelDecision m = codec.decoder_info(one).decision;
  EXPECT_EQ(m.fft.route, ecjit::FftRoute::kMatrix);
  EXPECT_EQ(m.fft.multiplies, 32u);
  // Originals 0..30 and recovery 0 lost: recovery 0 restored first as a matrix (32
  // multiplies), then the encoder inverted (144 on two-layer steps; up to 160 on three-layer
  // ones, whose butterflies without a twiddle multiply by zero where GFNI counts them and
  // skip them with split tables): against the core's 448.
  std::vector<bool> mixed(64, true);
  for (unsigned i = 0; i < 31; ++i) mixed[i] = false;
  mixed[32] = false;
  const ecjit::KernelInfo f = codec.decoder_info(mixed);
  ASSERT_EQ(f.decision.fft.route, ecjit::FftRoute::kInverse) << f.why;
  EXPECT_EQ(f.decision.fft.restored_first, 1u) << f.why;
  EXPECT_GE(f.decision.fft.multiplies, 32u + 144) << f.why;
  EXPECT_LE(f.decision.fft.multiplies, 32u + 160) << f.why;
  // Originals 0..15 and recovery 0..15 lost: the transforms, pruned (16 x 32 restored first
  // would cost more than the core).
  std::vector<bool> half(64, true);
  for (unsigned i = 0; i < 16; ++i) half[i] = half[32 + i] = false;
  const ecjit::KernelInfo t = codec.decoder_info(half);
  ASSERT_EQ(t.decision.fft.route, ecjit::FftRoute::kTransforms) << t.why;
  EXPECT_EQ(t.decision.fft.pruning, ecjit::FftPruning::kPruned) << t.why;
  const uint64_t whole = t.decision.fft.whole_multiplies;
  EXPECT_LT(t.decision.fft.multiplies, whole) << t.why;
  // Every original lost, every recovery shard read: the encoder inverted, an encode's
  // multiplies (two 32-point transforms, at most 80 each) - under half of the core's (whose
  // IFFT last and FFT first pass run as one: 352).
  std::vector<bool> originals(64, true);
  for (unsigned i = 0; i < 32; ++i) originals[i] = false;
  const ecjit::KernelInfo inv = codec.decoder_info(originals);
  ASSERT_EQ(inv.decision.fft.route, ecjit::FftRoute::kInverse) << inv.why;
  EXPECT_LE(inv.decision.fft.multiplies, 160u) << inv.why;
  EXPECT_LT(inv.decision.fft.multiplies * 2, whole) << inv.why;
}
INSTANTIATE_TEST_SUITE_P(Tiers, FftDecoderInfo, ::testing::Values("host", "host-gfni", "host-gfni,-avx512f"),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           std::string name = i.param;
                           for (char &ch : name)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// m shards lost at random and all of them restored: no whole block of points is unread or
// unrestored, so pruning would remove almost nothing (sched::fft_block_butterflies) and the
// whole core runs, unpruned - the same bytes; a set losing whole runs of shards is pruned.
TEST(FftCodec, ScatteredLossesRunTheWholeCore) {
  auto codec = codec_of(128, 128);
  ASSERT_TRUE(codec);
  std::mt19937_64 rng(0x5ca77e4);
  std::vector<unsigned> ids(256);
  for (unsigned s = 0; s < 256; ++s) ids[s] = s;
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<bool> present(256, true);
  for (unsigned i = 0; i < 128; ++i) present[ids[i]] = false;
  Stripe st(128, 128, 4096 + 64 + 2, 91);
  for (unsigned s = 0; s < 256; ++s)
    if (!present[s]) st.spoil(s);
  ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < 256; ++s) ASSERT_TRUE(st.equal(s)) << "shard " << s;
  const ecjit::KernelInfo info = codec->decoder_info(present);
  if (info.vector_bits == 64) GTEST_SKIP() << "no JIT kernels here";
  EXPECT_EQ(info.decision.fft.pruning, ecjit::FftPruning::kTooScattered) << info.why;
  // Originals 0..63 and recovery shards 64..127 lost: whole blocks, pruned on as short a call.
  std::vector<bool> runs(256, true);
  for (unsigned i = 0; i < 64; ++i) runs[i] = runs[128 + 64 + i] = false;
  for (unsigned s = 0; s < 256; ++s)
    if (!runs[s]) st.spoil(s);
  ASSERT_TRUE(codec->reconstruct(st.ptrs, runs, st.len).ok());
  for (unsigned s = 0; s < 256; ++s) ASSERT_TRUE(st.equal(s)) << "runs, shard " << s;
  const ecjit::KernelInfo pruned = codec->decoder_info(runs);
  EXPECT_EQ(pruned.decision.fft.pruning, ecjit::FftPruning::kPruned) << pruned.why;
}

// Sets that lose the same whole blocks of points and differ in their scattered losses run one
// core pruned for those blocks (runtime/fft_engine.h: kept, not pruned per set): each restores
// its own shards byte for byte - a point of the shared core read in one set and lost in the
// next is zero there, a restore of one set is skipped in the next - and every set reports the
// shared core's multiplies, where pruning per set would count each set's scattered points.
TEST(FftCodec, SetsLosingTheSameBlocksShareOnePrunedCore) {
  for (auto [k, m] : {std::pair{128u, 128u}, std::pair{256u, 256u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    std::mt19937_64 rng(k + 17);
    Stripe st(k, m, 4096 + 64 + 2, k);
    uint64_t shared = 0;
    for (int trial = 0; trial < 8; ++trial) {
      // The first quarter of the originals and of the recovery shards lost in every set, and
      // m / 4 more originals at random (reconstruct_data restores no recovery shard).
      std::vector<bool> present(k + m, true);
      for (unsigned s = 0; s < k / 4; ++s) present[s] = false;
      for (unsigned j = 0; j < m / 4; ++j) present[k + j] = false;
      std::vector<unsigned> ids;
      for (unsigned s = k / 4; s < k; ++s) ids.push_back(s);
      std::shuffle(ids.begin(), ids.end(), rng);
      for (unsigned i = 0; i < m / 4; ++i) present[ids[i]] = false;
      const bool data_only = trial % 2 == 0;
      for (unsigned s = 0; s < k + m; ++s)
        if (!present[s]) st.spoil(s);
      const ecjit::Status r = data_only ? codec->reconstruct_data(st.ptrs, present, st.len)
                                        : codec->reconstruct(st.ptrs, present, st.len);
      ASSERT_TRUE(r.ok()) << k << ":" << m << " trial " << trial << ": " << r.to_string();
      for (unsigned s = 0; s < k + m; ++s) {
        if (data_only && s >= k && !present[s]) continue;  // left as it was spoiled
        ASSERT_TRUE(st.equal(s)) << k << ":" << m << " trial " << trial << " shard " << s;
      }
      st.restore();
      // decoder_info: the set restoring every lost shard (the same blocks in every trial).
      const ecjit::KernelInfo info = codec->decoder_info(present);
      if (info.vector_bits == 64) continue;  // no JIT kernels here
      const std::string &why = info.why;
      ASSERT_EQ(info.decision.fft.pruning, ecjit::FftPruning::kPruned) << why;
      const uint64_t count = info.decision.fft.multiplies;
      if (shared == 0) shared = count;
      EXPECT_EQ(count, shared) << k << ":" << m << " trial " << trial << ": " << why;
    }
  }
}

// A short call whose pruning would cost more than it saves (256:256, 128-byte shards: two
// columns) runs the whole core; a first set with its blocks asks for nothing more, a second
// one has the pruned core made on the background thread, and a third runs it. All restore
// byte for byte.
TEST(FftCodec, ShortCallsHaveTheirPrunedCoreMadeInTheBackground) {
  auto j = make_jit();
  ASSERT_TRUE(j);
  auto codec = codec_of(256, 256, *j);
  ASSERT_TRUE(codec);
  Stripe st(256, 256, 128, 5);
  // Originals 0..127 lost in every set (whole blocks of points read nowhere), and every eighth
  // shard of the rest from a different first one (no other block whole either way).
  auto set = [&](unsigned first) {
    std::vector<bool> present(512, true);
    for (unsigned s = 0; s < 128; ++s) present[s] = false;
    for (unsigned s = 128 + first; s < 512; s += 8) present[s] = false;
    return present;
  };
  auto run = [&](const std::vector<bool> &present, const char *which) {
    for (unsigned s = 0; s < 512; ++s)
      if (!present[s]) st.spoil(s);
    ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << which;  // a call asks first
    for (unsigned s = 0; s < 512; ++s) ASSERT_TRUE(st.equal(s)) << which << " set, shard " << s;
  };
  // A set's decode is made on its first call and kept with its plan: each decoder_info below
  // reads what that call chose.
  run(set(3), "first");
  if (codec->decoder_info(set(3)).vector_bits == 64) GTEST_SKIP() << "no JIT kernels here";
  const ecjit::KernelInfo first = codec->decoder_info(set(3));
  EXPECT_EQ(first.decision.fft.pruning, ecjit::FftPruning::kLater) << first.why;
  j->wait_for_tuning();
  run(set(6), "second");  // the first asked for nothing in the background; this one does
  const ecjit::KernelInfo second = codec->decoder_info(set(6));
  EXPECT_EQ(second.decision.fft.route, ecjit::FftRoute::kTransforms) << second.why;
  EXPECT_NE(second.decision.fft.pruning, ecjit::FftPruning::kPruned) << second.why;
  j->wait_for_tuning();
  run(set(1), "third");
  const ecjit::KernelInfo third = codec->decoder_info(set(1));
  EXPECT_EQ(third.decision.fft.pruning, ecjit::FftPruning::kPruned) << third.why;
}

// Threads decoding sets that lose the same blocks at once, long calls (pruning on the call)
// and short ones (pruning in the background) interleaved: every call restores its bytes
// (the engine's kept cores are shared under its lock; under ASan in CI).
TEST(FftCodec, ConcurrentSetsShareTheirPrunedCores) {
  auto j = make_jit();
  ASSERT_TRUE(j);
  auto codec = codec_of(256, 256, *j);
  ASSERT_TRUE(codec);
  constexpr unsigned kThreads = 3, kCalls = 6;
  constexpr size_t kShort = 128;
  std::vector<std::unique_ptr<Stripe>> stripes;
  for (unsigned t = 0; t < kThreads; ++t) stripes.push_back(std::make_unique<Stripe>(256, 256, 4096 + 64 + 2, 40 + t));
  std::atomic<unsigned> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Stripe &st = *stripes[t];
      for (unsigned c = 0; c < kCalls; ++c) {
        // Originals 0..63 lost in every set, and every eighth of the rest from its own first.
        std::vector<bool> present(512, true);
        for (unsigned s = 0; s < 64; ++s) present[s] = false;
        for (unsigned s = 64 + (t * kCalls + c) % 8; s < 512; s += 8) present[s] = false;
        for (unsigned s = 0; s < 512; ++s)
          if (!present[s]) st.spoil(s);
        const bool short_call = c % 2 == 1;
        const size_t len = short_call ? kShort : st.len;
        if (!(short_call ? codec->reconstruct_data(st.ptrs, present, len)
                         : codec->reconstruct(st.ptrs, present, len)).ok())
          ++failed;
        for (unsigned s = 0; s < (short_call ? 256u : 512u); ++s)
          if (!present[s] && std::memcmp(st.ptrs[s], st.want[s].data(), len) != 0) ++wrong;
        st.restore();
      }
    });
  for (std::thread &th : threads) th.join();
  j->wait_for_tuning();
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
}

// The decode core reads the shards and writes the restored ones in its own first and last
// steps (sched::fold_decode_ends), on whole-column AVX-512 (three-layer steps), 256-bit GFNI and
// split-table AVX2 (two-layer steps): random sets on the whole core and block losses on a
// pruned one, for a code whose core is whole and one truncated (100:28), restored byte for
// byte, and decoder_info says so.
TEST(FftCodec, ShardsReadAndRestoredInsideTheTransformsOnEveryTarget) {
  for (const char *target : {"host", "host-avx2", "x86_64-v3"}) {
    JitOptions o;
    o.disk_cache = false;
    o.tune = false;
    o.target = target;
    auto j = Jit::create(o);
    if (!j.ok()) continue;  // a CPU without it
    for (auto [k, m] : {std::pair{128u, 128u}, std::pair{100u, 28u}}) {
      auto codec = codec_of(k, m, **j);
      ASSERT_TRUE(codec);
      std::mt19937_64 rng(k * 7 + m);
      Stripe st(k, m, 4096 + 64 + 2, k + m);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<bool> present(k + m, true);
        if (trial < 2) {  // scattered: the whole core
          std::vector<unsigned> ids(k + m);
          for (unsigned s = 0; s < k + m; ++s) ids[s] = s;
          std::shuffle(ids.begin(), ids.end(), rng);
          for (unsigned i = 0; i < m; ++i) present[ids[i]] = false;
        } else {  // the first m / 2 originals and recovery shards: pruned
          for (unsigned s = 0; s < m / 2; ++s) present[s] = false;
          for (unsigned s = 0; s < m / 2; ++s) present[k + s] = false;
        }
        for (unsigned s = 0; s < k + m; ++s)
          if (!present[s]) st.spoil(s);
        const ecjit::Status r = codec->reconstruct(st.ptrs, present, st.len);
        ASSERT_TRUE(r.ok()) << target << " " << k << ":" << m << ": " << r.to_string();
        for (unsigned s = 0; s < k + m; ++s)
          ASSERT_TRUE(st.equal(s)) << target << " " << k << ":" << m << " trial " << trial << " shard " << s;
        const ecjit::KernelInfo info = codec->decoder_info(present);
        if (info.vector_bits == 64 || info.decision.fft.route != ecjit::FftRoute::kTransforms) continue;
        EXPECT_TRUE(info.decision.fft.ends_folded)
            << target << " " << k << ":" << m << ": " << info.why;
      }
    }
  }
}

// ---- Scrubbing, small writes, the generator ----

TEST(FftCodec, Verify) {
  auto codec = codec_of(5, 6);
  ASSERT_TRUE(codec);
  for (size_t len : {size_t(66), size_t(70000)}) {
    Stripe st(5, 6, len, len);
    std::vector<const uint8_t *> all(st.ptrs.begin(), st.ptrs.end());
    size_t off = 1;
    auto r = codec->verify(all, len, &off);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(*r);
    EXPECT_EQ(off, len);
    for (size_t at : {size_t(0), len / 2 + 1, len - 1}) {
      st.ptrs[8][at] ^= 0x10;
      r = codec->verify(all, len, &off);
      ASSERT_TRUE(r.ok());
      EXPECT_FALSE(*r);
      EXPECT_EQ(off, at);
      st.restore();
    }
    st.ptrs[2][len - 2] ^= 1;  // a data byte: the parity no longer matches
    r = codec->verify(all, len, nullptr);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(*r);
  }
}

TEST(FftCodec, UpdateAndEncodePartialAreEncode) {
  for (auto [k, m] : {std::pair{6u, 3u}, {3u, 9u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    const size_t len = 4096 + 64 + 2;
    Stripe old_st(k, m, len, 21), new_st(k, m, len, 22);
    // New data = old with shards 0 and k-1 replaced; parity updated in place from old.
    std::vector<uint8_t> d0(new_st.want[0]), dl(new_st.want[k - 1]);
    std::vector<const uint8_t *> olds{old_st.ptrs[0], old_st.ptrs[k - 1]}, news{d0.data(), dl.data()};
    ASSERT_TRUE(codec->update(ShardSet{0, k - 1}, olds, news, old_st.parity(), len).ok());
    std::vector<const uint8_t *> data = old_st.data();
    data[0] = d0.data();
    data[k - 1] = dl.data();
    std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
    std::vector<uint8_t *> wp;
    for (auto &w : want) wp.push_back(w.data());
    ASSERT_TRUE(ecjit::codes::fft::encode_bytes(k, m, len, data.data(), wp.data()).ok());
    for (unsigned j = 0; j < m; ++j) EXPECT_EQ(std::memcmp(old_st.ptrs[k + j], want[j].data(), len), 0) << j;
    // encode_partial of every original, in reverse order, into zeroed accumulators.
    std::vector<std::vector<uint8_t>> acc(m, std::vector<uint8_t>(len, 0));
    std::vector<uint8_t *> ap;
    for (auto &a : acc) ap.push_back(a.data());
    for (unsigned i = k; i-- > 0;) ASSERT_TRUE(codec->encode_partial(i, new_st.ptrs[i], ap, len).ok());
    for (unsigned j = 0; j < m; ++j) EXPECT_EQ(acc[j], new_st.want[k + j]) << j;
  }
}

// Column j of the generator = the reference's encode of the unit vector e_j (element 1 is
// the value 0x0001: bytes 01 00 in a 2-byte shard).
// codec's parity_matrix() is the reference encode of each unit vector: one element per shard
// (2 bytes in the crate's layout over GF(2^16), 1 byte over GF(2^8)).
void check_parity_matrix(const Codec &codec, unsigned k, unsigned m, ecjit::codes::fft::Gf gf, const std::string &name) {
  const std::vector<uint64_t> &a = codec.parity_matrix();
  ASSERT_EQ(a.size(), size_t(k) * m) << name;
  const size_t bytes = gf == ecjit::codes::fft::Gf::k8 ? 1 : 2;
  std::vector<std::vector<uint8_t>> in(k, std::vector<uint8_t>(bytes)), out(m, std::vector<uint8_t>(bytes));
  std::vector<const uint8_t *> ip;
  std::vector<uint8_t *> op;
  for (auto &v : in) ip.push_back(v.data());
  for (auto &v : out) op.push_back(v.data());
  for (unsigned j = 0; j < k; ++j) {
    for (unsigned i = 0; i < k; ++i) std::fill(in[i].begin(), in[i].end(), 0), in[i][0] = uint8_t(i == j);
    ASSERT_TRUE(ecjit::codes::fft::encode_bytes(k, m, bytes, ip.data(), op.data(), gf).ok());
    for (unsigned r = 0; r < m; ++r)
      ASSERT_EQ(a[size_t(r) * k + j], uint64_t(out[r][0] | (bytes == 2 ? out[r][1] << 8 : 0)))
          << name << " row " << r << " col " << j;
  }
}

TEST(FftCodec, ParityMatrixIsEncodeOfUnitVectors) {
  for (auto [k, m] : {std::pair{4u, 2u}, {2u, 4u}, {5u, 6u}, {6u, 5u}, {32u, 32u}, {100u, 20u}, {20u, 100u}}) {
    auto codec = codec_of(k, m);
    ASSERT_TRUE(codec);
    check_parity_matrix(*codec, k, m, ecjit::codes::fft::Gf::k16, spec_of(k, m));
  }
  auto edge = codec_of(256, 256);  // k * m = 65536: still built
  ASSERT_TRUE(edge);
  EXPECT_EQ(edge->parity_matrix().size(), 65536u);
  auto wide = codec_of(257, 256);
  ASSERT_TRUE(wide);
  EXPECT_TRUE(wide->parity_matrix().empty());
}

// ---- Every bad input with its status; nothing written ----

TEST(FftCodec, BadInputs) {
  auto codec = codec_of(4, 2);
  ASSERT_TRUE(codec);
  Stripe st(4, 2, 64, 4);
  std::vector<const uint8_t *> data = st.data();
  std::vector<uint8_t *> parity = st.parity();
  for (unsigned j = 0; j < 2; ++j) st.spoil(4 + j);
  auto enc = [&](std::vector<const uint8_t *> d, std::vector<uint8_t *> p, size_t len) {
    return codec->encode(d, p, len).code();
  };
  EXPECT_EQ(enc(data, parity, 63), StatusCode::kShardSize);
  EXPECT_EQ(enc(data, parity, 0), StatusCode::kShardSize);
  EXPECT_EQ(enc({data.begin(), data.begin() + 3}, parity, 64), StatusCode::kShardCount);
  EXPECT_EQ(enc(data, {parity[0]}, 64), StatusCode::kShardCount);  // (vectors: enc takes them by value)
  auto d_null = data;
  d_null[2] = nullptr;
  EXPECT_EQ(enc(d_null, parity, 64), StatusCode::kNullPointer);
  EXPECT_EQ(codec->encode({static_cast<const uint8_t *const *>(nullptr), 4}, parity, 64).code(),
            StatusCode::kNullPointer);
  EXPECT_EQ(enc(data, {parity[0], st.ptrs[1]}, 64), StatusCode::kInvalidArgument);  // parity = data
  EXPECT_EQ(enc(data, {parity[0], parity[0]}, 64), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.ptrs[4][0], 0xA5);  // nothing written by any of them
  EXPECT_EQ(st.ptrs[1][0], st.want[1][0]);
  EXPECT_NE(codec->encode(data, parity, 63).message().find("nonzero and even"), std::string::npos);

  st.restore();
  std::vector<bool> present(6, true);
  present[0] = present[5] = false;
  auto rec = [&](std::vector<uint8_t *> s, std::vector<bool> p, size_t len) {
    return codec->reconstruct(s, p, len).code();
  };
  EXPECT_EQ(rec(st.ptrs, present, 66 + 1), StatusCode::kShardSize);
  EXPECT_EQ(rec(st.ptrs, present, 0), StatusCode::kShardSize);
  EXPECT_EQ(rec(st.ptrs, {true, false, false, false, true, true}, 64), StatusCode::kTooManyErasures);
  EXPECT_EQ(rec(st.ptrs, {true, true}, 64), StatusCode::kShardCount);
  EXPECT_EQ(rec({st.ptrs.begin(), st.ptrs.begin() + 5}, present, 64), StatusCode::kShardCount);
  auto s_null = st.ptrs;
  s_null[0] = nullptr;  // a shard to rebuild
  EXPECT_EQ(rec(s_null, present, 64), StatusCode::kNullPointer);
  s_null = st.ptrs;
  s_null[3] = nullptr;  // a present shard
  EXPECT_EQ(rec(s_null, present, 64), StatusCode::kNullPointer);
  auto alias = st.ptrs;
  alias[0] = alias[2];  // rebuilt into a present shard
  EXPECT_EQ(rec(alias, present, 64), StatusCode::kInvalidArgument);
  alias = st.ptrs;
  alias[5] = alias[0];  // two rebuilt shards in one buffer
  EXPECT_EQ(rec(alias, present, 64), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->reconstruct_data(s_null, present, 64).code(), StatusCode::kNullPointer);
  EXPECT_EQ(codec->prepare_reconstruct({true, true, true}).code(), StatusCode::kShardCount);
  EXPECT_EQ(codec->prepare_reconstruct({false, false, false, true, true, true}).code(), StatusCode::kTooManyErasures);
  for (unsigned s = 0; s < 6; ++s) EXPECT_TRUE(st.equal(s)) << "written by a failed call: " << s;

  std::vector<const uint8_t *> olds{st.ptrs[1]}, news{st.want[2].data()}, null_new{nullptr};
  std::vector<uint8_t *> one_parity{parity[0]}, parity_is_data{parity[0], st.ptrs[1]};
  std::vector<uint8_t *> acc_is_shard{parity[0], st.ptrs[0]};
  EXPECT_EQ(codec->update(ShardSet{}, {}, {}, parity, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->update(ShardSet{4}, olds, news, parity, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->update(ShardSet{1}, olds, news, one_parity, 64).code(), StatusCode::kShardCount);
  EXPECT_EQ(codec->update(ShardSet{1}, olds, news, parity_is_data, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->update(ShardSet{1}, olds, null_new, parity, 64).code(), StatusCode::kNullPointer);
  EXPECT_EQ(codec->update(ShardSet{1}, olds, news, parity, 65).code(), StatusCode::kShardSize);
  EXPECT_EQ(codec->encode_partial(4, st.ptrs[0], parity, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->encode_partial(0, st.ptrs[0], one_parity, 64).code(), StatusCode::kShardCount);
  EXPECT_EQ(codec->encode_partial(0, nullptr, parity, 64).code(), StatusCode::kNullPointer);
  EXPECT_EQ(codec->encode_partial(0, st.ptrs[0], acc_is_shard, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(codec->encode_partial(0, st.ptrs[0], parity, 0).code(), StatusCode::kShardSize);
  for (unsigned s = 0; s < 6; ++s) EXPECT_TRUE(st.equal(s)) << "written by a failed call: " << s;

  std::vector<const uint8_t *> all(st.ptrs.begin(), st.ptrs.end());
  EXPECT_EQ(codec->verify({all.data(), 5}, 64).status().code(), StatusCode::kShardCount);
  all[3] = nullptr;
  EXPECT_EQ(codec->verify(all, 64).status().code(), StatusCode::kNullPointer);
  all[3] = st.ptrs[3];
  EXPECT_EQ(codec->verify(all, 61).status().code(), StatusCode::kShardSize);

  uint64_t sig[4];
  EXPECT_EQ(codec->signature(st.ptrs[0], 64, {sig, 4}).code(), StatusCode::kUnsupported);
  std::vector<uint64_t> sigs(6 * 4, 0);
  EXPECT_EQ(codec->verify_by_signatures(sigs, 4).status().code(), StatusCode::kUnsupported);
}

TEST(FftCodec, BadSpecs) {
  EXPECT_EQ(jit().codec("rs-fft:k=4,m=2,gf=32").status().code(), StatusCode::kInvalidSpec);
  // GF(2^8): its 256 points bound k + next_pow2(m), and the message says so.
  auto past = jit().codec("rs-fft:k=200,m=57,gf=8");
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidSpec);
  EXPECT_NE(past.status().message().find("k + next_pow2(m) = 264 > 256"), std::string::npos) << past.status().message();
  EXPECT_EQ(jit().codec("rs-fft:k=6,m=250,gf=8").status().code(), StatusCode::kInvalidSpec);
  EXPECT_EQ(jit().codec("rs-fft:k=32769,m=32768").status().code(), StatusCode::kInvalidSpec);
  EXPECT_EQ(jit().codec("rs-fft:k=4,m=2,poly=0x1002d").status().code(), StatusCode::kInvalidSpec);
  ecjit::CodeSpec hand;  // assembled by hand, not parsed: re-validated
  hand.family = ecjit::CodeFamily::kRsFft;
  hand.k = 4;
  hand.m = 2;
  hand.gf = 12;
  EXPECT_EQ(jit().codec(hand).status().code(), StatusCode::kInvalidSpec);
  hand.gf = 8;
  auto c8 = jit().codec(hand);
  ASSERT_TRUE(c8.ok()) << c8.status().to_string();
  EXPECT_EQ((*c8)->spec().to_string(), "rs-fft:k=4,m=2,gf=8");
  EXPECT_EQ((*c8)->symbol_bytes(), 1u);
  hand.gf = 16;
  auto c = jit().codec(hand);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ((*c)->spec().to_string(), "rs-fft:k=4,m=2,gf=16");
  EXPECT_EQ((*c)->symbol_bytes(), 2u);
}

// ---- GF(2^8): Leopard-RS's field (klauspost's leopard8), the same engine and kernels ----

namespace fft8 {
using ecjit::codes::fft::Gf;
std::string spec8(unsigned k, unsigned m) { return spec_of(k, m) + ",gf=8"; }
std::shared_ptr<const Codec> codec8(unsigned k, unsigned m, Jit &on = jit()) {
  auto c = on.codec(spec8(k, m));
  EXPECT_TRUE(c.ok()) << spec8(k, m) << ": " << c.status().to_string();
  return c.ok() ? *c : nullptr;
}
}  // namespace fft8

// Encode equals the reference at every length (a byte an element: odd ones too), one chunk
// and several, the widest (128:128) and k + next_pow2(m) = 256 exactly.
TEST(FftCodec8, EncodeEqualsReference) {
  using namespace fft8;
  for (auto [k, m] : {std::pair{4u, 2u}, {2u, 4u}, {5u, 6u}, {10u, 4u}, {32u, 32u}, {100u, 20u}, {20u, 100u},
                      {128u, 128u}, {192u, 64u}, {1u, 128u}, {250u, 4u}}) {
    auto codec = codec8(k, m);
    ASSERT_TRUE(codec);
    EXPECT_EQ(codec->symbol_bytes(), 1u);
    for (size_t len : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(4095), size_t(4160), size_t(65537)}) {
      Stripe st(k, m, len, 1000 * k + m + len, Gf::k8);
      for (unsigned j = 0; j < m; ++j) st.spoil(k + j);
      ASSERT_TRUE(codec->encode(st.data(), st.parity(), len).ok()) << spec8(k, m) << " len " << len;
      for (unsigned j = 0; j < m; ++j) ASSERT_TRUE(st.equal(k + j)) << spec8(k, m) << " len " << len << " recovery " << j;
    }
  }
}

TEST(FftCodec8, ReconstructEveryErasureSet) {
  using namespace fft8;
  for (auto [k, m] : {std::pair{3u, 4u}, {4u, 3u}, {5u, 2u}}) {
    auto codec = codec8(k, m);
    ASSERT_TRUE(codec);
    Stripe st(k, m, 131, k, Gf::k8);
    check_every_erasure_set(*codec, st, spec8(k, m));
    if (HasFatalFailure()) return;
  }
}

// Random sets on wide codes, through every decode the engine has: m lost (the core), one lost
// (a matrix), a whole chunk of originals (the encoder inverted, its unrolled kernel once
// compiled), at lengths with tiles and a tail.
TEST(FftCodec8, ReconstructRandomSetsAndChunks) {
  using namespace fft8;
  std::mt19937_64 rng(88);
  auto j = make_jit();
  ASSERT_TRUE(j);
  for (auto [k, m] : {std::pair{32u, 32u}, {128u, 128u}, {190u, 50u}, {20u, 100u}, {10u, 4u}}) {
    auto codec = codec8(k, m, *j);
    ASSERT_TRUE(codec);
    const unsigned n = k + m;
    for (size_t len : {size_t(4096 + 7), size_t(70000)}) {
      Stripe st(k, m, len, n + len, Gf::k8);
      for (int trial = 0; trial < 5; ++trial) {
        std::vector<unsigned> order(n);
        for (unsigned s = 0; s < n; ++s) order[s] = s;
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<bool> present(n, true);
        if (trial == 4) {  // originals of the first chunk (all of it where m is its size), recovery present
          for (unsigned s = 0; s < std::min(m, k); ++s) present[s] = false, st.spoil(s);
        } else {
          const unsigned lost = trial == 0 ? m : trial == 1 ? 1 : 1 + unsigned(rng() % m);
          for (unsigned i = 0; i < lost; ++i) present[order[i]] = false, st.spoil(order[i]);
        }
        ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << spec8(k, m);
        for (unsigned s = 0; s < n; ++s)
          ASSERT_TRUE(st.equal(s)) << spec8(k, m) << " len " << len << " trial " << trial << " shard " << s;
        if (trial == 4) {  // again, once the background thread had its chance
          j->wait_for_tuning();
          for (unsigned s = 0; s < n; ++s)
            if (!present[s]) st.spoil(s);
          ASSERT_TRUE(codec->reconstruct(st.ptrs, present, st.len).ok()) << spec8(k, m);
          for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << spec8(k, m) << " after tuning, shard " << s;
        }
      }
    }
  }
}

// Two threads splitting whole chunks plus a tail; the GF(2^16) codec of the same (k, m) is a
// different code (different parity), so the field is not silently dropped anywhere.
TEST(FftCodec8, ThreadsGiveTheSameBytesAndTheFieldMatters) {
  using namespace fft8;
  auto two = make_jit(2);
  ASSERT_TRUE(two);
  auto codec = codec8(8, 4, *two);
  ASSERT_TRUE(codec);
  Stripe st(8, 4, 3 * 4096 + 67, 9, Gf::k8);
  check_encode_and_rebuild_8_4(*codec, st);
  auto wide = codec_of(8, 4, *two);
  ASSERT_TRUE(wide);
  const size_t even = 4096;
  Stripe other(8, 4, even, 9, Gf::k8);
  ASSERT_TRUE(wide->encode(other.data(), other.parity(), even).ok());
  EXPECT_FALSE(other.equal(8)) << "GF(2^16) parity equals GF(2^8)'s";
  EXPECT_NE(codec->encoder_info().symbol.find("fft8"), std::string::npos) << codec->encoder_info().symbol;
}

// parity_matrix() over GF(2^8): the encode of each unit vector, one byte an element.
TEST(FftCodec8, ParityMatrixIsEncodeOfUnitVectors) {
  using namespace fft8;
  for (auto [k, m] : {std::pair{10u, 4u}, {3u, 5u}, {32u, 32u}}) {
    auto codec = codec8(k, m);
    ASSERT_TRUE(codec);
    check_parity_matrix(*codec, k, m, Gf::k8, spec8(k, m));
  }
}

// ---- The seam: plain twins of the kernel ABI (FftEncodeFn, FftDecodeFn) behind FftCodec ----

struct Twins {
  unsigned k = 0, m = 0;
  int encode_calls = 0, decode_calls = 0;
} twins;

// x * c through one multiplier table (kFftMulTableBytes: T_lo[0..3], T_hi[0..3]).
uint16_t table_mul(const uint8_t *t, uint16_t x) {
  uint16_t r = 0;
  for (unsigned q = 0; q < 4; ++q) {
    const unsigned v = (x >> (4 * q)) & 15;
    r ^= uint16_t(t[q * 16 + v] | t[64 + q * 16 + v] << 8);
  }
  return r;
}

void twin_encode(const uint8_t *const *in, uint8_t *const *out, size_t len) {
  ++twins.encode_calls;
  EXPECT_TRUE(len && len % 64 == 0) << len;
  EXPECT_TRUE(ecjit::codes::fft::encode_bytes(twins.k, twins.m, len, in, out).ok());
}

// The decode core as the ABI states it: every point premultiplied by its table (reads every
// in[x]), IFFT, formal derivative, FFT, the wanted points postmultiplied.
void twin_decode(const uint8_t *const *in, uint8_t *const *out, const uint8_t *tables, size_t len) {
  ++twins.decode_calls;
  EXPECT_TRUE(len && len % 64 == 0) << len;
  namespace fft = ecjit::codes::fft;
  const fft::Geometry g = *fft::geometry(twins.k, twins.m);
  const size_t n = g.decode_work, kb = ecjit::sched::kFftMulTableBytes;
  fft::Shards w(n, len / 2);
  for (size_t x = 0; x < n; ++x) {
    fft::unpack_shard(in[x], len, w[x]);
    for (size_t e = 0; e < len / 2; ++e) w[x][e] = table_mul(tables + x * kb, w[x][e]);
  }
  fft::ifft(w, 0, n, g.decode_end, 0);
  fft::formal_derivative(w, n);
  fft::fft(w, 0, n, g.decode_end, 0);
  for (size_t x = 0; x < n; ++x) {
    if (!out[x]) continue;
    for (size_t e = 0; e < len / 2; ++e) w[x][e] = table_mul(tables + (n + x) * kb, w[x][e]);
    fft::pack_shard(w[x], len, out[x]);
  }
}

TEST(FftCodec, KernelSeamTakesTheAbiTwins) {
  auto impl = make_impl();
  ASSERT_TRUE(impl);
  for (auto [k, m] : {std::pair{6u, 5u}, {20u, 100u}, {100u, 20u}}) {
    twins = Twins{k, m};
    ecjit::runtime::FftKernels kernels;
    kernels.encode = twin_encode;
    kernels.decode = [](const ecjit::runtime::FftDecodePlan &plan, const uint8_t *const *in, uint8_t *const *out,
                        size_t len) {
      twin_decode(in, out, plan.tables.data(), len);
      return true;
    };
    kernels.encode_info.strategy = kernels.decode_info.strategy = "twin";
    auto spec = ecjit::CodeSpec::parse(spec_of(k, m));
    ASSERT_TRUE(spec.ok());
    auto made = ecjit::runtime::FftCodec::make(impl, *spec, kernels);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    const Codec &codec = **made;
    EXPECT_EQ(codec.encoder_info().strategy, "twin");
    const unsigned n = k + m;
    Stripe st(k, m, 4096 + 64 + 6, n);  // whole chunks through the twins, the tail scalar
    for (unsigned j = 0; j < m; ++j) st.spoil(k + j);
    ASSERT_TRUE(codec.encode(st.data(), st.parity(), st.len).ok());
    for (unsigned j = 0; j < m; ++j) ASSERT_TRUE(st.equal(k + j)) << spec_of(k, m) << " recovery " << j;
    std::mt19937_64 rng(n);
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<bool> present(n, true);
      for (unsigned i = 0; i < m; ++i) {
        const unsigned s = unsigned(rng() % n);
        if (present[s]) present[s] = false, st.spoil(s);
      }
      ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok());
      for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << spec_of(k, m) << " shard " << s;
      EXPECT_EQ(codec.decoder_info(present).strategy, "twin");
    }
    std::vector<const uint8_t *> all(st.ptrs.begin(), st.ptrs.end());
    auto ok = codec.verify(all, st.len);
    ASSERT_TRUE(ok.ok());
    EXPECT_TRUE(*ok);
    EXPECT_GT(twins.encode_calls, 1);
    EXPECT_GT(twins.decode_calls, 0);
  }
}

// A decode kernel that cannot run (FftEngine::decode where the decode core's step kernel failed
// to compile) writes nothing and says so: the codec restores the shards on the scalar path.
TEST(FftCodec, DecodeKernelThatCannotRunFallsBackToTheScalarPath) {
  auto impl = make_impl();
  ASSERT_TRUE(impl);
  const unsigned k = 20, m = 12, n = k + m;
  int refused = 0;
  ecjit::runtime::FftKernels kernels;
  kernels.decode = [&refused](const ecjit::runtime::FftDecodePlan &, const uint8_t *const *, uint8_t *const *,
                              size_t) {
    ++refused;  // writes nothing
    return false;
  };
  auto spec = ecjit::CodeSpec::parse(spec_of(k, m));
  ASSERT_TRUE(spec.ok());
  auto made = ecjit::runtime::FftCodec::make(impl, *spec, kernels);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  const Codec &codec = **made;
  Stripe st(k, m, 4096 + 64 + 6, n);
  ASSERT_TRUE(codec.encode(st.data(), st.parity(), st.len).ok());
  std::vector<bool> present(n, true);
  for (unsigned s : {0u, 3u, 7u, 19u, 22u, 30u}) present[s] = false, st.spoil(s);
  ASSERT_TRUE(codec.reconstruct(st.ptrs, present, st.len).ok());
  for (unsigned s = 0; s < n; ++s) ASSERT_TRUE(st.equal(s)) << "shard " << s;
  EXPECT_GT(refused, 0);
}

// ---- The C API ----

TEST(FftCodec, CApi) {
  ecjit_jit_options opt;
  ecjit_jit_options_init(&opt);
  opt.disk_cache = 0;
  ecjit_jit *j = nullptr;
  ASSERT_EQ(ecjit_jit_create(&opt, &j), ECJIT_OK);
  ecjit_codec *c = nullptr;
  EXPECT_EQ(ecjit_codec_create(j, "rs-fft:k=200,m=57,gf=8", &c), ECJIT_INVALID_SPEC);
  EXPECT_NE(std::string(ecjit_last_error()).find("Leopard-RS's GF(2^8) limit"), std::string::npos) << ecjit_last_error();
  ASSERT_EQ(ecjit_codec_create(j, "rs-fft:k=4,m=2,gf=8", &c), ECJIT_OK);
  EXPECT_EQ(ecjit_codec_symbol_bytes(c), 1u);
  ecjit_codec_destroy(c);
  c = nullptr;
  ASSERT_EQ(ecjit_codec_create(j, "rs-fft:k=5,m=3", &c), ECJIT_OK);
  EXPECT_EQ(ecjit_codec_k(c), 5u);
  EXPECT_EQ(ecjit_codec_symbol_bytes(c), 2u);
  Stripe st(5, 3, 130, 8);
  for (unsigned j2 = 0; j2 < 3; ++j2) st.spoil(5 + j2);
  std::vector<const uint8_t *> data = st.data();
  std::vector<uint8_t *> parity = st.parity();
  EXPECT_EQ(ecjit_encode(c, data.data(), parity.data(), 131), ECJIT_SHARD_SIZE);
  ASSERT_EQ(ecjit_encode(c, data.data(), parity.data(), 130), ECJIT_OK);
  for (unsigned j2 = 0; j2 < 3; ++j2) EXPECT_TRUE(st.equal(5 + j2));
  const unsigned char present[8] = {0, 1, 1, 0, 1, 1, 0, 1};
  for (unsigned s : {0u, 3u, 6u}) st.spoil(s);
  ASSERT_EQ(ecjit_reconstruct(c, st.ptrs.data(), present, 130), ECJIT_OK);
  for (unsigned s = 0; s < 8; ++s) EXPECT_TRUE(st.equal(s)) << s;
  uint64_t sig[2];
  EXPECT_EQ(ecjit_signature(c, st.ptrs[0], 130, sig, 2), ECJIT_UNSUPPORTED);
  ecjit_codec_destroy(c);
  ecjit_jit_destroy(j);
}

}  // namespace
