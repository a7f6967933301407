// Kernels built ahead of time into libecjit (runtime/aot_shapes): codec() compiles nothing, every
// operation runs on them from the first call with the reference codec's bytes, the codec's own
// kernels are swapped in under running calls, and a process may exit while they compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "background_gate.h"
#include "codes/coeff_layout.h"
#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "ir_builders/strategy.h"
#include "runtime/aot_shapes/aot_product.h"
#include "runtime/aot_shapes/host_levels.h"
#include "runtime/codec_kernels.h"
#include "runtime/jit_impl.h"

namespace ecjit {
namespace {

const aot::AotShapeSet *host_set(unsigned bits = 8) { return aot::host_shape_set(bits, /*without_gfni=*/false); }

// Every product of the ahead-of-time kernels of every set this CPU runs (512-bit, GFNI, 256-bit,
// 128-bit), cut into their widths and row blocks, against field arithmetic, GF(2^8/16/32/64):
// rows and columns across the chunk boundaries (GF(2^8): 16 + 6 + 1 columns, 12 + 2 + 1, ...;
// the wide fields 8 + 4 + 2 + 1; row blocks of the set's rows: 8; GF(2^16) 4 on AVX2, 2 on SSE;
// GF(2^32) clmul 2, GF(2^64) clmul 4), overwrite and accumulate, lengths around the vector
// width (whole symbols), unaligned.
// The built-in sets' targets, read against this CPU's levels and features: each is run only
// where all it names is there; other targets, and unknown features, never.
TEST(AotHostLevels, TargetsRunWhereTheirLevelAndFeaturesDo) {
  using namespace ecjit::aot;
  EXPECT_EQ(host_runs("x86_64-v2"), host_runs_x86_64_v2());
  EXPECT_EQ(host_runs("x86_64-v3"), host_runs_x86_64_v3());
  EXPECT_EQ(host_runs("x86_64-v4"), host_runs_x86_64_v4());
  EXPECT_EQ(host_runs("x86_64-v3+gfni"), host_runs_x86_64_v3() && host_has_gfni());
  EXPECT_EQ(host_runs("x86_64-v4+gfni"), host_runs_x86_64_v4() && host_has_gfni());
  EXPECT_EQ(host_runs("x86_64-v2+pclmul"), host_runs_x86_64_v2() && host_has_pclmul());
  EXPECT_EQ(host_runs("x86_64-v3+pclmul,+vpclmulqdq"), host_runs_x86_64_v3() && host_has_vpclmulqdq());
  EXPECT_EQ(host_runs("x86_64-v4+pclmul,+vpclmulqdq"), host_runs_x86_64_v4() && host_has_vpclmulqdq());
  EXPECT_FALSE(host_runs("x86_64-v3+nosuchfeature"));
  EXPECT_FALSE(host_runs("aarch64"));
  EXPECT_FALSE(host_runs(""));
}

TEST(AotProduct, EveryShapeEqualsFieldArithmetic) {
  if (!aot::host_shape_set(8, false)) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  std::vector<std::pair<unsigned, const aot::AotShapeSet *>> sets;  // (field asked for, set)
  for (unsigned bits : {8u, 16u, 32u, 64u}) {
    const std::vector<const aot::AotShapeSet *> runs = aot::runnable_shape_sets(bits);
    // Only the wide fields may lack a set (a CPU without PCLMULQDQ).
    if (bits < 32) EXPECT_FALSE(runs.empty()) << bits;
    // The choice for the JIT's strategy is one of them: the first, or the first without GFNI.
    for (bool without_gfni : {false, true})
      if (const aot::AotShapeSet *chosen = aot::host_shape_set(bits, without_gfni)) {
        EXPECT_NE(std::find(runs.begin(), runs.end(), chosen), runs.end()) << bits;
        if (without_gfni) EXPECT_NE(chosen->strategy, ir::Strategy::kGfni) << bits;
      }
    for (const aot::AotShapeSet *set : runs) sets.push_back({bits, set});
  }
  for (auto [bits, set] : sets) {
    ASSERT_EQ(set->bits, bits);
    ASSERT_GE(set->rows, 1u);
    const codes::Field f = *codes::Field::make(bits);
    const codes::CoeffLayout layout = ir::runtime_layout(set->strategy);
    std::mt19937 rng(7);
    for (unsigned rows : {1u, 3u, 8u, 9u, 17u})
      for (unsigned cols : {1u, 2u, 3u, 7u, 8u, 15u, 16u, 23u})
        for (bool acc : {false, true})
          for (size_t len : {size_t(1), size_t(31), size_t(64), size_t(1000)}) {
            const size_t sb = bits / 8;  // bytes per symbol, little-endian
            len -= len % sb;             // whole symbols
            if (len == 0) len = sb;
            codes::Matrix c(rows, cols);
            for (auto &v : c.a) v = rng() & f.mask();
            std::vector<uint8_t> prepared;
            codes::prepare_matrix(layout, f, c, &prepared);
            auto p = aot::AotProduct::make(*set, rows, cols, acc, prepared.data(), codes::coeff_bytes(layout, f));
            ASSERT_TRUE(p.has_value()) << set->target;
            std::vector<std::vector<uint8_t>> in(cols, std::vector<uint8_t>(len + 1)),
                out(rows, std::vector<uint8_t>(len + 1)), want(rows, std::vector<uint8_t>(len + 1));
            std::vector<const uint8_t *> ip;
            std::vector<uint8_t *> op;
            for (auto &s : in) {
              for (auto &b : s) b = uint8_t(rng());
              ip.push_back(s.data() + 1);  // unaligned
            }
            auto sym = [&](const std::vector<uint8_t> &v, size_t i) {
              uint64_t x = 0;
              for (size_t b = 0; b < sb; ++b) x |= uint64_t(v[1 + i + b]) << (8 * b);
              return x;
            };
            for (unsigned r = 0; r < rows; ++r) {
              for (size_t i = 0; i <= len; ++i) out[r][i] = want[r][i] = uint8_t(rng());
              op.push_back(out[r].data() + 1);
              for (size_t i = 0; i < len; i += sb) {
                uint64_t v = acc ? sym(want[r], i) : 0;
                for (unsigned col = 0; col < cols; ++col) v ^= f.mul(c.at(r, col), sym(in[col], i));
                for (size_t b = 0; b < sb; ++b) want[r][1 + i + b] = uint8_t(v >> (8 * b));
              }
            }
            p->run(ip.data(), op.data(), len);
            for (unsigned r = 0; r < rows; ++r)
              ASSERT_EQ(want[r], out[r]) << set->target << " gf" << bits << " rows " << rows << " cols " << cols << " acc "
                                         << acc << " len " << len << " output " << r;
          }
  }
}

// Products of several kernel calls (row blocks, column chunks) over long shards, a partial
// vector at the end, against field arithmetic.
TEST(AotProduct, LongShardsSeveralCalls) {
  if (!aot::host_shape_set(8, false)) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  for (unsigned bits : {8u, 32u}) {
    const aot::AotShapeSet *set = aot::host_shape_set(bits, false);
    if (!set) continue;
    const codes::Field f = *codes::Field::make(bits);
    const codes::CoeffLayout layout = ir::runtime_layout(set->strategy);
    const size_t sb = bits / 8;
    std::mt19937 rng(bits);
    for (auto [rows, cols] : {std::pair{9u, 23u}, std::pair{3u, 11u}})
      for (bool acc : {false, true}) {
        const size_t len = size_t(17385) / sb * sb;
        codes::Matrix c(rows, cols);
        for (auto &v : c.a) v = rng() & f.mask();
        std::vector<uint8_t> prepared;
        codes::prepare_matrix(layout, f, c, &prepared);
        auto p = aot::AotProduct::make(*set, rows, cols, acc, prepared.data(), codes::coeff_bytes(layout, f));
        ASSERT_TRUE(p.has_value());
        ASSERT_GT(p->calls(), 1u);
        std::vector<std::vector<uint8_t>> in(cols, std::vector<uint8_t>(len)), out(rows, std::vector<uint8_t>(len));
        std::vector<const uint8_t *> ip;
        std::vector<uint8_t *> op;
        for (auto &v : in) {
          for (auto &b : v) b = uint8_t(rng());
          ip.push_back(v.data());
        }
        for (auto &v : out) {
          for (auto &b : v) b = uint8_t(rng());
          op.push_back(v.data());
        }
        std::vector<std::vector<uint8_t>> want = out;
        for (unsigned r = 0; r < rows; ++r)
          for (size_t i = 0; i < len; i += sb) {
            auto sym = [&](const std::vector<uint8_t> &v) {
              uint64_t x = 0;
              for (size_t b = 0; b < sb; ++b) x |= uint64_t(v[i + b]) << (8 * b);
              return x;
            };
            uint64_t v = acc ? sym(want[r]) : 0;
            for (unsigned col = 0; col < cols; ++col) v ^= f.mul(c.at(r, col), sym(in[col]));
            for (size_t b = 0; b < sb; ++b) want[r][i + b] = uint8_t(v >> (8 * b));
          }
        p->run(ip.data(), op.data(), len);
        for (unsigned r = 0; r < rows; ++r)
          ASSERT_EQ(want[r], out[r]) << "gf" << bits << " rows " << rows << " cols " << cols << " acc " << acc
                                     << " len " << len << " output " << r;
      }
  }
}

JitOptions options(bool aot = true) {
  JitOptions o;
  o.disk_cache = false;  // every kernel compiled: the background thread has work
  o.aot_kernels = aot;
  return o;
}

bool serves_aot(const Codec &c) { return c.encoder_info().decision.tier == ecjit::KernelTier::kBuiltIn; }

// Shards of one stripe: random data, the reference codec's parity.
struct Stripe {
  Stripe(const codes::LinearCode &code, size_t len, unsigned seed)
      : code(code), len(len), orig(code.n(), std::vector<uint8_t>(len)), work(orig) {
    std::mt19937 rng(seed);
    for (unsigned s = 0; s < code.k; ++s)
      for (auto &b : orig[s]) b = uint8_t(rng());
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (unsigned s = 0; s < code.k; ++s) d.push_back(orig[s].data());
    for (unsigned s = code.k; s < code.n(); ++s) p.push_back(orig[s].data());
    EXPECT_TRUE(codes::ref_encode(code, d.data(), p.data(), len).ok());
    work = orig;
    for (auto &s : work) ptrs.push_back(s.data());
  }
  // encode() into zeroed parity equals the reference's.
  ::testing::AssertionResult encode(const Codec &c) {
    std::vector<const uint8_t *> d(ptrs.begin(), ptrs.begin() + code.k);
    std::vector<uint8_t *> p(ptrs.begin() + code.k, ptrs.end());
    for (unsigned s = code.k; s < code.n(); ++s) std::memset(ptrs[s], 0, len);
    if (Status st = c.encode(d, p, len); !st.ok()) return ::testing::AssertionFailure() << st.to_string();
    for (unsigned s = code.k; s < code.n(); ++s)
      if (work[s] != orig[s]) return ::testing::AssertionFailure() << "len " << len << ": parity " << s << " differs";
    return ::testing::AssertionSuccess();
  }
  // reconstruct() of the shards in `mask` (garbage first) gives the originals back.
  ::testing::AssertionResult rebuild(const Codec &c, uint64_t mask) {
    std::vector<bool> present(code.n(), true);
    for (unsigned s = 0; s < code.n(); ++s)
      if (mask >> s & 1) {
        present[s] = false;
        std::memset(ptrs[s], 0xA5, len);
      }
    if (Status st = c.reconstruct(ptrs, present, len); !st.ok())
      return ::testing::AssertionFailure() << st.to_string();
    for (unsigned s = 0; s < code.n(); ++s)
      if (work[s] != orig[s])
        return ::testing::AssertionFailure() << "len " << len << " lost mask 0x" << std::hex << mask << std::dec
                                             << ": shard " << s << " differs (" << c.decoder_info(present).symbol << ")";
    return ::testing::AssertionSuccess();
  }
  // update() of the data shards `cols` (ascending) to new bytes, then encode_partial() of
  // every data shard into zeroed accumulators: both give the reference's parity of the new data.
  ::testing::AssertionResult update_and_partial(const Codec &c, const std::vector<unsigned> &cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<uint8_t>> fresh(cols.size(), std::vector<uint8_t>(len));
    std::vector<const uint8_t *> olds, news;
    ShardSet changed;
    for (size_t i = 0; i < cols.size(); ++i) {
      for (auto &b : fresh[i]) b = uint8_t(rng());
      olds.push_back(orig[cols[i]].data());
      news.push_back(fresh[i].data());
      changed = changed | ShardSet{cols[i]};
    }
    std::vector<uint8_t *> p(ptrs.begin() + code.k, ptrs.end());
    if (Status st = c.update(changed, olds, news, p, len); !st.ok())
      return ::testing::AssertionFailure() << st.to_string();
    for (size_t i = 0; i < cols.size(); ++i) {
      orig[cols[i]] = fresh[i];
      work[cols[i]] = fresh[i];
    }
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> want;
    for (unsigned s = 0; s < code.k; ++s) d.push_back(orig[s].data());
    for (unsigned s = code.k; s < code.n(); ++s) want.push_back(orig[s].data());
    EXPECT_TRUE(codes::ref_encode(code, d.data(), want.data(), len).ok());
    for (unsigned s = code.k; s < code.n(); ++s)
      if (work[s] != orig[s]) return ::testing::AssertionFailure() << "update: parity " << s << " differs";
    std::vector<std::vector<uint8_t>> acc(code.m, std::vector<uint8_t>(len, 0));
    std::vector<uint8_t *> ap;
    for (auto &a : acc) ap.push_back(a.data());
    for (unsigned s = 0; s < code.k; ++s)
      if (Status st = c.encode_partial(s, orig[s].data(), ap, len); !st.ok())
        return ::testing::AssertionFailure() << st.to_string();
    for (unsigned r = 0; r < code.m; ++r)
      if (acc[r] != orig[code.k + r]) return ::testing::AssertionFailure() << "encode_partial: parity " << r << " differs";
    return ::testing::AssertionSuccess();
  }
  const codes::LinearCode &code;
  size_t len;
  std::vector<std::vector<uint8_t>> orig, work;
  std::vector<uint8_t *> ptrs;
};

std::vector<uint64_t> all_sets(unsigned n, unsigned m) {
  std::vector<uint64_t> out;
  for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask)
    if (unsigned(__builtin_popcountll(mask)) <= m) out.push_back(mask);
  return out;
}

// With the background thread held: codec() compiles nothing, and encode, every erasure set
// of RS(10,4), RS(6,3) and the GF(2^16/32/64) codes (a sample of a wide code whose matrix
// spans several row blocks and column chunks), update and encode_partial all run on the ahead-of-time kernels with the
// reference codec's bytes. Released: the codec's own kernels take over, same bytes.
TEST(AotKernels, EveryOperationFromTheFirstCallThenTheCodecsOwn) {
  if (!host_set()) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  auto jit = Jit::create(options());
  ASSERT_TRUE(jit.ok()) << jit.status().to_string();
  for (const char *spec : {"rs-vand:k=10,m=4", "rs-cauchy:k=6,m=3", "rs-cauchy:k=23,m=11", "rs-vand:k=10,m=4,gf=16",
                           "rs-cauchy:k=5,m=3,gf=16", "rs-vand:k=6,m=3,gf=32", "rs-cauchy:k=5,m=4,gf=64"}) {
    const codes::LinearCode code = *codes::build_code(*CodeSpec::parse(spec));
    // GF(2^32/64): built in where the Jit's shape strategy is one the library carries for this
    // CPU (clmul-insn with PCLMULQDQ, gfni for GF(2^32)).
    if (code.field.bits() >= 32 && !runtime::aot_set_for(static_cast<runtime::JitImpl &>(**jit), code.field)) continue;
    test::BackgroundGate gate(**jit);
    const uint64_t compiled = (*jit)->stats().kernels_compiled;
    auto codec = (*jit)->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    EXPECT_EQ(compiled, (*jit)->stats().kernels_compiled) << spec << ": codec() compiled";
    ASSERT_TRUE(serves_aot(**codec)) << spec << ": " << (*codec)->encoder_info().why;
    std::vector<uint64_t> sets;
    if (code.n() <= 14) {
      sets = all_sets(code.n(), code.m);
    } else {  // a sample: every single loss, and random sets of up to m
      std::set<uint64_t> sample;
      std::mt19937_64 rng(1);
      for (unsigned s = 0; s < code.n(); ++s) sample.insert(uint64_t(1) << s);
      while (sample.size() < 200) {
        const unsigned lost = 1 + unsigned(rng() % code.m);
        uint64_t mask = 0;
        while (unsigned(__builtin_popcountll(mask)) < lost) mask |= uint64_t(1) << (rng() % code.n());
        sample.insert(mask);
      }
      sets.assign(sample.begin(), sample.end());
    }
    const size_t sb = code.field.bits() / 8;
    for (size_t len : {size_t(1), size_t(31), size_t(4651)}) {
      len = (len + sb - 1) / sb * sb;  // whole symbols
      Stripe st(code, len, unsigned(len));
      ASSERT_TRUE(st.encode(**codec)) << spec;
      for (uint64_t mask : sets) ASSERT_TRUE(st.rebuild(**codec, mask)) << spec;
      ASSERT_TRUE(st.update_and_partial(**codec, {code.k - 1}, 3)) << spec;
      // several columns: one product whose width spans chunks
      ASSERT_TRUE(st.update_and_partial(**codec, {0, 2, 3, code.k - 1}, 5)) << spec;
    }
    EXPECT_EQ(compiled, (*jit)->stats().kernels_compiled) << spec << ": a call compiled";
    const KernelCacheStats before = (*codec)->kernel_cache_stats();
    EXPECT_GE(before.aot_calls, 3 * (1 + sets.size() + 2 + 2 * code.k)) << spec;
    EXPECT_EQ(before.decode_plans, sets.size()) << spec;
    std::vector<bool> present(code.n(), true);
    present[0] = false;
    EXPECT_EQ(ecjit::KernelTier::kBuiltIn, (*codec)->decoder_info(present).decision.tier) << spec;

    gate.release();
    (*jit)->wait_for_tuning();
    EXPECT_FALSE(serves_aot(**codec)) << spec << ": " << (*codec)->encoder_info().why;
    EXPECT_NE(ecjit::KernelTier::kBuiltIn, (*codec)->decoder_info(present).decision.tier) << spec;
    for (size_t len : {size_t(31), size_t(4651)}) {  // sets planned before the swap, too
      len = (len + sb - 1) / sb * sb;
      Stripe st(code, len, unsigned(len) + 1);
      ASSERT_TRUE(st.encode(**codec)) << spec;
      for (size_t i = 0; i < sets.size(); i += 7) ASSERT_TRUE(st.rebuild(**codec, sets[i])) << spec;
      ASSERT_TRUE(st.update_and_partial(**codec, {0}, 4)) << spec;
    }
    EXPECT_EQ(before.aot_calls, (*codec)->kernel_cache_stats().aot_calls) << spec << ": still on them";
  }
}

// Threads encoding and rebuilding from before codec() returns until after the swap: every
// result is the reference's while the codec's own kernels land under them.
TEST(AotKernels, SwapUnderRunningCalls) {
  if (!host_set()) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  auto jit = Jit::create(options());
  ASSERT_TRUE(jit.ok()) << jit.status().to_string();
  const codes::LinearCode code = *codes::build_code(*CodeSpec::parse("rs-vand:k=10,m=4"));
  auto codec = (*jit)->codec(code.spec);
  ASSERT_TRUE(codec.ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0};
  auto worker = [&](unsigned seed) {
    Stripe st(code, 8192 + seed, seed);
    std::mt19937_64 rng(seed);
    const std::vector<uint64_t> sets = all_sets(code.n(), code.m);
    while (!stop.load()) {
      ASSERT_TRUE(st.encode(**codec));
      ASSERT_TRUE(st.rebuild(**codec, sets[rng() % sets.size()]));
      calls.fetch_add(2);
    }
  };
  std::thread a(worker, 1), b(worker, 2);
  (*jit)->wait_for_tuning();
  const uint64_t at_swap = calls.load();
  while (calls.load() < at_swap + 200) std::this_thread::yield();
  stop.store(true);
  a.join();
  b.join();
  EXPECT_FALSE(serves_aot(**codec));
  EXPECT_GT((*codec)->kernel_cache_stats().aot_calls, 0u) << "the first calls ran before the swap";
}

// aot_kernels = false: codec() compiles its encoder as before.
TEST(AotKernels, OffCompilesInCodec) {
  auto jit = Jit::create(options(/*aot=*/false));
  ASSERT_TRUE(jit.ok());
  const uint64_t compiled = (*jit)->stats().kernels_compiled;
  auto codec = (*jit)->codec("rs-vand:k=10,m=4");
  ASSERT_TRUE(codec.ok());
  EXPECT_GT((*jit)->stats().kernels_compiled, compiled);
  EXPECT_FALSE(serves_aot(**codec));
}

// ECJIT_AOT=0 (in a child, so the environment stays clean) turns them off for every Jit
// created after it is set.
TEST(AotKernels, EnvironmentTurnsThemOff) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ECJIT_AOT", "0", 1);
        auto j = Jit::create(options());
        auto c = j.ok() ? (*j)->codec("rs-vand:k=10,m=4") : Result<std::shared_ptr<const Codec>>(j.status());
        std::exit(c.ok() && !serves_aot(**c) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A Jit in a static, its codec's own kernels still compiling when the process exits (a tool
// that encodes once and returns): exit() stops the background thread before LLVM's statics go.
TEST(AotKernels, ExitWhileTheCodecsKernelsCompile) {
  if (!host_set()) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // Holders made before any LLVM state (destroyed after it at exit, as a global would be).
        static std::shared_ptr<Jit> jit;
        static std::shared_ptr<const Codec> codec;
        jit = *Jit::create(options());
        codec = *jit->codec("rs-cauchy:k=12,m=4");
        const codes::LinearCode code = *codes::build_code(codec->spec());
        Stripe st(code, 4096, 5);
        bool ok = bool(st.encode(*codec));
        // Exit with a shape kernel compiling (the encoder is compiled first): its code
        // generation uses LLVM's function-local statics (SDNode's value type lists).
        while (serves_aot(*codec)) std::this_thread::yield();
        ok = ok && jit->stats().tunings_pending > 0;
        std::exit(ok ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

// As above, the job in flight an rs-fft kernel whose tables were first made after the exit
// handler was registered (a second codec, the first one's kernels already compiling behind
// its ahead-of-time ones): the tables every such compile reads outlive exit's destructors
// (under ASan, a use after free otherwise: codec_fuzz found it).
TEST(AotKernels, ExitWhileAnRsFftKernelCompilesAfterAnotherCodec) {
  if (!host_set()) GTEST_SKIP() << "no ahead-of-time kernels for this build or CPU";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        static std::shared_ptr<Jit> jit;
        static std::shared_ptr<const Codec> first;
        static std::shared_ptr<const Codec> fft;
        jit = *Jit::create(options());
        first = *jit->codec("rs-cauchy:k=12,m=4");  // its background jobs register the handler
        bool ok = jit->stats().tunings_pending > 0;
        while (jit->stats().tunings_pending > 0) std::this_thread::yield();
        fft = *jit->codec("rs-fft:k=4,m=2,gf=8");  // the rs-fft schedules' tables, made now
        ok = ok && jit->stats().tunings_pending > 0;  // its kernels queued or compiling at exit
        std::exit(ok ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ecjit
