// build_fft_kernel: JIT-compiled rs-fft encoders and decode cores against the scalar reference (codes/rs_fft.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/schedule.h"
#include "fft_step_interpreter.h"
#include "ir_builders/fft_column.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/fft_step_kernel.h"
#include "ir_builders/target_features.h"
#include "jit/kernel_compiler.h"
#include "jit/kernel_self_test.h"
#include "jit/target_spec.h"
#include "jit_test_util.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace ecjit {
namespace {

namespace fft = codes::fft;
using test::err_text;
using test::init_session;
using test::session;

using DecodeFn = void (*)(const uint8_t *const *, uint8_t *const *, const uint8_t *, size_t);

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_decode(const jit::CompiledKernel &k, const uint8_t *const *in, uint8_t *const *out,
                 const uint8_t *tables, size_t len) {
  reinterpret_cast<DecodeFn>(k.address())(in, out, tables, len);
}

struct FftCase {
  std::string target;
  unsigned k, m;
};

void PrintTo(const FftCase &c, std::ostream *os) { *os << c.target << "_k" << c.k << "_m" << c.m; }

class FftKernel : public testing::TestWithParam<FftCase> {
 protected:
  void SetUp() override {
    init_session();
    auto info = test::resolve_target(GetParam().target);
    ASSERT_TRUE(bool(info)) << err_text(info.takeError());
    target_ = *info;
    if (!ir::fft_kernel_supported(target_)) GTEST_SKIP() << GetParam().target << ": no byte shuffle";
  }
  std::unique_ptr<jit::CompiledKernel> compile(ir::FftKernelDesc::Kind kind) {
    const FftCase &c = GetParam();
    ir::FftKernelDesc d{kind, c.k, c.m,
                        std::string("fft_test_") + (kind == ir::FftKernelDesc::Kind::kEncode ? "enc" : "dec") +
                            "_" + std::to_string(c.k) + "_" + std::to_string(c.m) + "_" +
                            std::to_string(counter_++), {}, {}};
    const auto t0 = std::chrono::steady_clock::now();
    auto k = jit::jit_kernel(*session(), jit::fft_compile_request(d, target_, jit::OptLevel::kO3));
    if (!k) {
      ADD_FAILURE() << err_text(k.takeError());
      return nullptr;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    RecordProperty("compile_ms", std::to_string(int(ms)));
    // The disk cache's self-test accepts it, and rejects it as the other kind's kernel.
    EXPECT_TRUE(jit::fft_kernel_matches_desc(**k, d));
    return std::move(*k);
  }
  ir::TargetInfo target_;
  static inline int counter_ = 0;
};

std::vector<std::vector<uint8_t>> random_shards(std::mt19937_64 &rng, unsigned count, size_t len) {
  std::vector<std::vector<uint8_t>> s(count, std::vector<uint8_t>(len));
  for (auto &v : s)
    for (auto &b : v) b = uint8_t(rng());
  return s;
}

// k + m random shards of len bytes whose first `encoded` bytes of the m recovery shards are
// the reference encode of the originals' (codes::fft::encode_bytes); false if it failed.
bool encoded_shards(std::mt19937_64 &rng, unsigned k, unsigned m, size_t len, size_t encoded,
                    std::vector<std::vector<uint8_t>> *out) {
  *out = random_shards(rng, k + m, len);
  std::vector<const uint8_t *> orig;
  std::vector<uint8_t *> rec;
  for (unsigned i = 0; i < k; ++i) orig.push_back((*out)[i].data());
  for (unsigned j = 0; j < m; ++j) rec.push_back((*out)[k + j].data());
  return fft::encode_bytes(k, m, encoded, orig.data(), rec.data()).ok();
}

// Whole columns by the kernel; the bytes past the last whole column are left alone.
// The unrolled decoder of one erasure set by the encoder's transforms inverted (what `ecjit
// aot --decoders` compiles for rs-fft): every original of the first whole chunk, or (low
// rate) every recovery shard, from the k shards inverse_decode_sources picks; the self-test
// accepts it; a set it cannot invert is an error, not a kernel.
TEST_P(FftKernel, InverseMatchesReference) {
  const unsigned k = GetParam().k, m = GetParam().m, n = k + m;
  const fft::Geometry g = *fft::geometry(k, m);
  std::vector<bool> present(n, true);
  std::vector<unsigned> targets;
  if (g.rate == fft::Rate::kHigh && g.chunk <= k) {
    for (unsigned s = 0; s < g.chunk; ++s) targets.push_back(s);
  } else if (g.rate == fft::Rate::kLow) {
    for (unsigned s = k; s < n; ++s) targets.push_back(s);
  }
  for (unsigned t : targets) present[t] = false;
  const auto sources = targets.empty() ? std::nullopt : fft::inverse_decode_sources(k, m, present, targets);
  if (!sources) GTEST_SKIP() << "no such set for " << k << ":" << m;
  ir::FftKernelDesc d{ir::FftKernelDesc::Kind::kInverse, k, m, "fft_test_inv_" + std::to_string(counter_++),
                      *sources, targets};
  auto kernel = jit::jit_kernel(*session(), jit::fft_compile_request(d, target_, jit::OptLevel::kO3));
  ASSERT_TRUE(bool(kernel)) << err_text(kernel.takeError());
  EXPECT_TRUE(jit::fft_kernel_matches_desc(**kernel, d));
  std::mt19937_64 rng(k * 77 + m);
  const size_t len = 64 * 5 + 22, whole = len / 64 * 64;
  std::vector<std::vector<uint8_t>> shard;
  ASSERT_TRUE(encoded_shards(rng, k, m, len, len, &shard));
  std::vector<std::vector<uint8_t>> got(targets.size(), std::vector<uint8_t>(len, 0xEE));
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out;
  for (unsigned s : *sources) in.push_back(shard[s].data());
  for (auto &v : got) out.push_back(v.data());
  test::call_kernel(**kernel, in.data(), out.data(), len);
  for (size_t t = 0; t < targets.size(); ++t) {
    EXPECT_TRUE(std::equal(got[t].begin(), got[t].begin() + whole, shard[targets[t]].begin())) << targets[t];
    EXPECT_TRUE(std::all_of(got[t].begin() + whole, got[t].end(), [](uint8_t b) { return b == 0xEE; }));
  }
  // Two chunks' originals at once cannot be inverted: refused when building.
  if (g.rate == fft::Rate::kHigh && 2 * g.chunk <= k) {
    ir::FftKernelDesc bad = d;
    bad.targets = {0, unsigned(g.chunk)};
    llvm::LLVMContext ctx;
    auto mod = ir::build_fft_kernel(ctx, bad, target_);
    EXPECT_FALSE(bool(mod));
    if (!mod) llvm::consumeError(mod.takeError());
  }
}

TEST_P(FftKernel, EncodeMatchesReference) {
  const unsigned k = GetParam().k, m = GetParam().m;
  auto kernel = compile(ir::FftKernelDesc::Kind::kEncode);
  ASSERT_TRUE(kernel);
  std::mt19937_64 rng(k * 1000 + m);
  for (size_t len : {size_t(64), size_t(192), size_t(64 * 37 + 30)}) {
    const size_t whole = len / 64 * 64;
    auto orig = random_shards(rng, k, len);
    std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(whole)), got(m, std::vector<uint8_t>(len, 0xEE));
    std::vector<const uint8_t *> in;
    std::vector<uint8_t *> wp, gp;
    for (auto &v : orig) in.push_back(v.data());
    for (auto &v : want) wp.push_back(v.data());
    for (auto &v : got) gp.push_back(v.data());
    ASSERT_TRUE(fft::encode_bytes(k, m, whole, in.data(), wp.data()).ok());
    test::call_kernel(*kernel, in.data(), gp.data(), len);
    for (unsigned j = 0; j < m; ++j) {
      ASSERT_TRUE(std::equal(want[j].begin(), want[j].end(), got[j].begin())) << "recovery " << j << " len " << len;
      for (size_t t = whole; t < len; ++t) ASSERT_EQ(got[j][t], 0xEE) << "tail byte written, recovery " << j;
    }
  }
}

// One decode core serves every erasure pattern through its run-time multipliers.
TEST_P(FftKernel, DecodeCoreServesEveryPattern) {
  const unsigned k = GetParam().k, m = GetParam().m, n = k + m;
  auto kernel = compile(ir::FftKernelDesc::Kind::kDecode);
  ASSERT_TRUE(kernel);
  const fft::Geometry g = *fft::geometry(k, m);
  std::mt19937_64 rng(k * 7 + m);
  const size_t len = 64 * 3;
  std::vector<std::vector<uint8_t>> shard;
  ASSERT_TRUE(encoded_shards(rng, k, m, len, len, &shard));
  auto point = [&](unsigned s) { return s < k ? g.original_pos + s : g.recovery_pos + (s - k); };
  for (int trial = 0; trial < 24; ++trial) {
    std::vector<bool> present(n, true);
    const unsigned lost = trial == 0 ? m : 1 + unsigned(rng() % m);
    for (unsigned e = 0; e < lost; ++e) present[rng() % n] = false;
    auto logs = fft::locator_logs(k, m, present);
    ASSERT_TRUE(logs.ok());
    const size_t points = g.decode_work;
    std::vector<uint8_t> tables(2 * points * sched::kFftMulTableBytes, 0);
    std::vector<const uint8_t *> in(points, shard[0].data());
    std::vector<uint8_t *> out(points, nullptr);
    std::vector<std::vector<uint8_t>> got(n, std::vector<uint8_t>(len, 0xEE));
    for (unsigned s = 0; s < n; ++s) {
      const size_t x = point(s);
      if (present[s]) {
        in[x] = shard[s].data();
        sched::fft_mul_tables((*logs)[x], tables.data() + x * sched::kFftMulTableBytes);
      } else {
        out[x] = got[s].data();
        sched::fft_mul_tables(uint16_t(fft::kModulus - (*logs)[x]),
                              tables.data() + (points + x) * sched::kFftMulTableBytes);
      }
    }
    call_decode(*kernel, in.data(), out.data(), tables.data(), len);
    for (unsigned s = 0; s < n; ++s)
      if (!present[s]) ASSERT_EQ(got[s], shard[s]) << "trial " << trial << " shard " << s;
  }
}

std::vector<FftCase> cases() {
  std::vector<FftCase> out;
  // Both rates, one and several chunks, shortened chunks; host and host-avx2 (128-bit, SSSE3 lookups).
  const unsigned sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {5, 3}, {4, 2}, {2, 4}, {10, 4}, {9, 2}, {2, 9}, {32, 32}, {20, 60}};
  for (const char *t : {"host", "host-avx2"})
    for (auto &s : sizes) out.push_back({t, s[0], s[1]});
  return out;
}

std::string case_name(const testing::TestParamInfo<FftCase> &info) {
  std::string t = info.param.target;
  for (char &c : t)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return t + "_k" + std::to_string(info.param.k) + "_m" + std::to_string(info.param.m);
}

INSTANTIATE_TEST_SUITE_P(Targets, FftKernel, testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace ecjit

namespace ecjit {
namespace {

using StepFn = void (*)(uint8_t *const *, const sched::FftStep *, size_t, const uint8_t *, size_t);

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_steps(const jit::CompiledKernel &k, uint8_t *const *ptr, const sched::FftSchedule &s, size_t bytes,
                const uint8_t *tables) {
  reinterpret_cast<StepFn>(k.address())(ptr, s.steps.data(), s.steps.size(), tables, bytes);
}

// Runs `s` with `kernel` over shards of len bytes in tiles of `tile` bytes (whole columns
// only), with `tables` (null: its own), as the runtime does.
void run_tiles(const jit::CompiledKernel &kernel, const sched::FftSchedule &s, std::vector<std::vector<uint8_t>> &shards,
               size_t len, size_t tile, const uint8_t *tables = nullptr) {
  std::vector<std::vector<uint8_t>> scratch(s.slots, std::vector<uint8_t>(tile));
  std::vector<uint8_t *> ptr(s.slots + shards.size());
  const size_t whole = len / 64 * 64;
  for (size_t off = 0; off < whole; off += tile) {
    for (uint32_t x = 0; x < s.slots; ++x)
      ptr[x] = s.slot_shard[x] >= 0 ? shards[size_t(s.slot_shard[x])].data() + off : scratch[x].data();
    for (size_t i = 0; i < shards.size(); ++i) ptr[s.slots + i] = shards[i].data() + off;
    call_steps(kernel, ptr.data(), s, std::min(tile, whole - off), tables ? tables : s.tables.data());
  }
}

// The schedule executor of field G: one kernel for every (k, m), run tile by tile as the
// runtime does, on the target the parameter names (skipped where it has no byte shuffle).
template <fft::Gf G>
class FftStepsOf : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    init_session();
    auto info = test::resolve_target(GetParam());  // host-avx512f: not on every machine
    if (!info) GTEST_SKIP() << GetParam() << ": " << err_text(info.takeError());
    target_ = *info;
    if (!ir::fft_kernel_supported(target_)) GTEST_SKIP() << GetParam() << ": no byte shuffle";
    // Both kernels, as FftEngine has them: every kind, and the transforms' kinds alone.
    for (auto kind : {ir::FftKernelDesc::Kind::kSteps, ir::FftKernelDesc::Kind::kTransformSteps}) {
      ir::FftKernelDesc d{kind, 0, 0,
                          std::string(G == fft::Gf::k8 ? "fft8" : "fft") + "_steps_" + std::to_string(counter_++),
                          {}, {}, G};
      auto k = jit::jit_kernel(*session(), jit::fft_compile_request(d, target_, jit::OptLevel::kO3));
      ASSERT_TRUE(bool(k)) << err_text(k.takeError());
      EXPECT_TRUE(jit::fft_kernel_matches_desc(**k, d));
      (kind == ir::FftKernelDesc::Kind::kSteps ? kernel_ : transforms_) = std::move(*k);
    }
  }
  // On the transforms' kernel where it runs every step (encodes, matrices, the inverted
  // encoder: FftEngine's choice), else on the kernel of every kind.
  void run(const sched::FftSchedule &s, std::vector<std::vector<uint8_t>> &shards, size_t len, size_t tile,
           const uint8_t *tables = nullptr) {
    const bool transforms = sched::fft_steps_are_transforms(s.steps);
    transform_runs_ += transforms;
    run_tiles(transforms ? *transforms_ : *kernel_, s, shards, len, tile, tables);
  }
  // One derivative-fused step of each kind (kFftStepFft4D / Fft8D / Top4D / Top8D; the Top
  // kinds' `table` their difference multiplier) at distances up to the
  // widest core's (65536 points: fourteen other groups), bases a with every other group and
  // none, on scratch tiles evenly spaced (the kernel's offset loop, as FftEngine lays them out)
  // and on tiles anywhere (its pointer loop): every slot as the step interpreter has it.
  void check_derivative_steps() {
    std::mt19937_64 rng(0xde7 + int(G));
    const size_t bytes = 128, stride = bytes + 64, elems = G == fft::Gf::k8 ? 64 : 32;
    sched::FftSchedule s;
    s.gf = G;
    for (unsigned j = 0; j < 7; ++j) {
      s.tables.resize(s.tables.size() + sched::kFftMulTableBytes);
      sched::fft_mul_tables(uint16_t(rng() % fft::lch_field(G).modulus),
                            s.tables.data() + s.tables.size() - sched::kFftMulTableBytes, G);
    }
    for (uint32_t kind : {uint32_t(sched::kFftStepFft4D), uint32_t(sched::kFftStepFft8D), uint32_t(sched::kFftStepTop4D),
                          uint32_t(sched::kFftStepTop8D)}) {
      const uint32_t per = sched::fft_step_slots(kind);
      for (uint32_t dist : {1u, 2u, 16u, 65536u / per}) {
        const uint32_t slots = per * dist;
        const bool top = kind == sched::kFftStepTop4D || kind == sched::kFftStepTop8D;
        for (uint32_t a : {0u, dist - 1, dist / 2 + (dist > 2), uint32_t(rng() % dist)})
          for (uint32_t half = 0; half < (top ? 3u : 1u); ++half)  // Top: every slot written, or a half
          for (bool even : {true, false}) {
            if (G == fft::Gf::k8 && slots > 256 && !even) continue;  // the pointer loop: enough on 16 bits
            sched::FftStep st{kind, a, half, 0, dist, 1, 2};
            st.table2 = 3, st.table3 = 4, st.table4 = 5, st.table5 = 6;
            s.steps = {st};
            s.slots = slots;
            std::vector<uint8_t> flat(even ? slots * stride : 0);
            std::vector<std::vector<uint8_t>> own(even ? 0 : slots);
            std::vector<uint8_t *> ptr(slots);
            for (uint32_t x = 0; x < slots; ++x) {
              if (!even) own[x].resize(bytes);
              ptr[x] = even ? flat.data() + x * stride : own[x].data();
              for (size_t i = 0; i < bytes; ++i) ptr[x][i] = uint8_t(rng());
            }
            // The interpreter's elements: GF(2^16) element e of a column is bytes e and 32 + e.
            auto element = [&](uint32_t x, size_t e) -> uint16_t {
              const uint8_t *c = ptr[x] + e / elems * 64;
              return G == fft::Gf::k8 ? c[e % 64] : uint16_t(c[e % 32] | c[32 + e % 32] << 8);
            };
            const size_t count = bytes / 64 * elems;
            std::vector<std::vector<uint16_t>> want(count);
            for (size_t e = 0; e < count; ++e) {
              want[e].resize(slots);
              for (uint32_t x = 0; x < slots; ++x) want[e][x] = element(x, e);
              test::fft_run_steps(s.steps, s.tables, want[e]);
            }
            call_steps(*kernel_, ptr.data(), s, bytes, s.tables.data());
            for (size_t e = 0; e < count; ++e)
              for (uint32_t j = 0; j < per; ++j) {  // its slots; the others only read
                const uint32_t x = a + j * dist;
                ASSERT_EQ(element(x, e), want[e][x]) << "kind " << kind << " dist " << dist << " a " << a
                                                       << " half " << half << (even ? " even" : " anywhere")
                                                       << " slot " << x
                                                       << " element " << e;
              }
          }
      }
    }
  }
  // The folded ends' kinds (kFftStepIfft4In / Ifft8In / Fft4Out / Fft8Out, fold_decode_ends)
  // at several distances and bases, with shard pointers null in every pattern from none to
  // all, In steps with and without prefetches ahead: a slot read from a null shard is 0,
  // nothing is stored to a null one, an Out step leaves its slots as they were; every value
  // as the step interpreter has it.
  void check_end_steps() {
    std::mt19937_64 rng(0xe9d + int(G));
    const size_t bytes = 192, elems = G == fft::Gf::k8 ? 64 : 32, count = bytes / 64 * elems;
    const uint16_t modulus = uint16_t(fft::lch_field(G).modulus);
    for (uint32_t kind : {uint32_t(sched::kFftStepIfft4In), uint32_t(sched::kFftStepIfft8In),
                          uint32_t(sched::kFftStepFft4Out), uint32_t(sched::kFftStepFft8Out)}) {
      const uint32_t per = sched::fft_step_slots(kind);
      const bool in = sched::fft_step_inverse(kind);
      for (uint32_t dist : {1u, 2u, 8u})
        for (uint32_t a : {0u, 1u})
          for (int pattern = 0; pattern < 4; ++pattern) {
            // Pointers: [0, S) work slots, [S, 2S) shards, 2S the table array (S tables).
            const uint32_t S = per * dist + 1;
            sched::FftSchedule s;
            s.gf = G;
            for (unsigned j = 0; j < 7 + S; ++j) {  // the twiddles, then the array's
              s.tables.resize(s.tables.size() + sched::kFftMulTableBytes);
              sched::fft_mul_tables(uint16_t(rng() % modulus), s.tables.data() + s.tables.size() - sched::kFftMulTableBytes, G);
            }
            sched::FftStep st{kind, a, S + a, 0, dist, 1, 2, 2 * S};
            st.table2 = 3, st.table3 = 4, st.table4 = 5, st.table5 = 6;
            if (in && pattern % 2) st.into = 1 + S;  // prefetches of other shards: no value changes
            s.steps = {st};
            std::vector<std::vector<uint8_t>> mem(2 * S, std::vector<uint8_t>(bytes));
            std::vector<bool> absent(2 * S + 1, false);
            std::vector<uint8_t *> ptr(2 * S + 1);
            for (uint32_t p = 0; p < 2 * S; ++p) {
              for (auto &c : mem[p]) c = uint8_t(rng());
              absent[p] = p >= S && (pattern == 1 || (pattern == 2 && rng() % 2));  // 0: none, 3: all but one
              if (pattern == 3) absent[p] = p >= S && p != S + a + dist;
              ptr[p] = absent[p] ? nullptr : mem[p].data();
            }
            ptr[2 * S] = s.tables.data() + 7 * sched::kFftMulTableBytes;
            const auto before = mem;
            auto element = [&](const std::vector<std::vector<uint8_t>> &m, uint32_t p, size_t e) -> uint16_t {
              const uint8_t *c = m[p].data() + e / elems * 64;
              return G == fft::Gf::k8 ? c[e % 64] : uint16_t(c[e % 32] | c[32 + e % 32] << 8);
            };
            std::vector<std::vector<uint16_t>> want(count);
            for (size_t e = 0; e < count; ++e) {
              want[e].resize(2 * S + 1);
              for (uint32_t p = 0; p < 2 * S; ++p) want[e][p] = element(before, p, e);
              want[e][2 * S] = 7;
              test::fft_run_steps(s.steps, s.tables, want[e], [&](uint32_t p) { return bool(absent[p]); });
            }
            call_steps(*kernel_, ptr.data(), s, bytes, s.tables.data());
            for (size_t e = 0; e < count; ++e)
              for (uint32_t p = 0; p < 2 * S; ++p)
                ASSERT_EQ(element(mem, p, e), absent[p] ? element(before, p, e) : want[e][p])
                    << "kind " << kind << " dist " << dist << " a " << a << " pattern " << pattern << " pointer "
                    << p << " element " << e;
            // Something was computed: In writes its slots, Out the shards not null.
            bool changed = false, any = in;
            for (uint32_t j = 0; j < per; ++j) any = any || !absent[S + a + j * dist];
            for (uint32_t p = in ? 0 : S; p < (in ? S : 2 * S); ++p) changed = changed || mem[p] != before[p];
            EXPECT_EQ(changed, any) << "kind " << kind << " pattern " << pattern;
          }
    }
  }
  ir::TargetInfo target_;
  std::unique_ptr<jit::CompiledKernel> kernel_, transforms_;
  size_t transform_runs_ = 0;  // run()s on transforms_
  static inline int counter_ = 0;
};
class FftSteps : public FftStepsOf<fft::Gf::k16> {};

TEST_P(FftSteps, DerivativeFusedStepsMatchTheInterpreter) { check_derivative_steps(); }
TEST_P(FftSteps, FoldedEndsMatchTheInterpreter) { check_end_steps(); }

// Two-layer and three-layer steps (radix8) both, on this machine's kernel and the AVX2 one.
TEST_P(FftSteps, EncodeAndDecodeMatchReferenceAtEverySize) {
  const unsigned sizes[][2] = {{1, 1}, {3, 5}, {5, 3}, {32, 32}, {100, 20}, {20, 100}, {1000, 1000}, {200, 3000}, {3000, 200}};
  std::mt19937_64 rng(0x5e95);
  for (bool radix8 : {false, true})
  for (auto &sz : sizes) {
    const unsigned k = sz[0], m = sz[1], n = k + m;
    const size_t len = k + m > 1000 ? 64 * 3 + 6 : 64 * 9 + 6, tile = 128;
    const size_t whole = len / 64 * 64;
    std::vector<std::vector<uint8_t>> want;
    ASSERT_TRUE(encoded_shards(rng, k, m, len, whole, &want));
    auto got = want;
    for (unsigned j = 0; j < m; ++j) std::fill(got[k + j].begin(), got[k + j].begin() + whole, 0xEE);
    auto enc = sched::fft_encode_schedule(k, m, true, radix8);
    ASSERT_TRUE(enc.ok()) << enc.status().to_string();
    ASSERT_TRUE(sched::fft_steps_are_transforms(enc->steps));  // on the transforms' kernel
    run(*enc, got, len, tile);
    for (unsigned j = 0; j < m; ++j) ASSERT_EQ(got[k + j], want[k + j]) << k << ":" << m << " recovery " << j;
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<bool> present(n, true), wanted(n, false);
      const unsigned lost = trial == 0 ? m : 1 + unsigned(rng() % m);
      for (unsigned e = 0; e < lost; ++e) present[rng() % n] = false;
      for (unsigned s = 0; s < n; ++s) {
        wanted[s] = !present[s];
        if (wanted[s]) std::fill(got[s].begin(), got[s].begin() + whole, 0xA5);
      }
      auto dec = sched::fft_decode_schedule(k, m, present, wanted, radix8);
      ASSERT_TRUE(dec.ok()) << dec.status().to_string();
      run(*dec, got, len, tile);
      for (unsigned s = 0; s < n; ++s)
        ASSERT_EQ(got[s], want[s]) << k << ":" << m << " trial " << trial << " shard " << s << " radix8 " << radix8;
    }
  }
}

// The encoder inverted (fft_inverse_decode_schedule) on the encoder's own tables, as the
// runtime runs it: no tables of its own, the lost shards restored; both rates, several chunks.
TEST_P(FftSteps, InvertedEncoderOnTheEncodersTables) {
  std::mt19937_64 rng(0x1e5);
  size_t ran = 0;
  for (bool radix8 : {false, true})
  for (auto [k, m] : {std::pair{32u, 32u}, {64u, 16u}, {10u, 4u}, {4u, 10u}, {8u, 20u}, {1000u, 1024u}}) {
    const unsigned n = k + m;
    const size_t len = 64 * 5 + 6, tile = 128, whole = len / 64 * 64;
    std::vector<std::vector<uint8_t>> want;
    ASSERT_TRUE(encoded_shards(rng, k, m, len, whole, &want));
    auto enc = sched::fft_encode_schedule(k, m, true, radix8);
    ASSERT_TRUE(enc.ok());
    const size_t C = fft::geometry(k, m)->chunk;
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<bool> present(n, true);
      const size_t first = (rng() % n) / C * C;  // a run inside one chunk of points' worth of shards
      for (size_t s = first; s < std::min<size_t>(n, first + 1 + rng() % C); ++s) present[s] = false;
      std::vector<unsigned> targets;
      for (unsigned s = 0; s < n; ++s)
        if (!present[s]) targets.push_back(s);
      auto sources = fft::inverse_decode_sources(k, m, present, targets);
      if (!sources) continue;
      auto inv = sched::fft_inverse_decode_schedule(k, m, *sources, targets, &*enc, radix8);
      ASSERT_TRUE(inv) << k << ":" << m;
      EXPECT_TRUE(inv->tables.empty());
      ASSERT_TRUE(sched::fft_steps_are_transforms(inv->steps));
      auto got = want;
      for (unsigned t : targets) std::fill(got[t].begin(), got[t].begin() + whole, 0xA5);
      run(*inv, got, len, tile, enc->tables.data());
      for (unsigned s = 0; s < n; ++s) ASSERT_EQ(got[s], want[s]) << k << ":" << m << " shard " << s;
      ++ran;
    }
  }
  EXPECT_GT(ran, 12u);
}

// Matrix decodes run their sources three to a step (kFftStepMul3 / MulAdd3) with one or two
// left over: every count of sources from 1 to 8, against decode_matrix's rows applied element
// by element, and the three-source steps actually used.
TEST_P(FftSteps, MatrixDecodesThreeSourcesToAStep) {
  std::mt19937_64 rng(0x3ee);
  const unsigned k = 8, m = 8, n = k + m;
  const size_t len = 64 * 3 + 6, whole = len / 64 * 64;
  std::vector<std::vector<uint8_t>> want;
  ASSERT_TRUE(encoded_shards(rng, k, m, len, whole, &want));
  for (unsigned used = 1; used <= k; ++used) {
    // Sources: k shards present (the decode needs k), a matrix of `used` columns kept (the
    // rest zeroed) so that each count of sources per row runs; targets: two lost shards.
    std::vector<bool> present(n, true);
    present[1] = present[12] = false;
    std::vector<unsigned> sources, targets = {1, 12};
    for (unsigned s = 0; s < n && sources.size() < k; ++s)
      if (present[s]) sources.push_back(s);
    for (unsigned s = 0; s < n; ++s) present[s] = std::find(sources.begin(), sources.end(), s) != sources.end();
    auto coeffs = fft::decode_matrix(k, m, present, sources, targets);
    ASSERT_TRUE(coeffs.ok());
    std::vector<uint16_t> row(*coeffs);
    std::vector<unsigned> few(sources.begin(), sources.begin() + used);
    std::vector<uint16_t> part;
    for (size_t t = 0; t < targets.size(); ++t)
      part.insert(part.end(), row.begin() + long(t * k), row.begin() + long(t * k + used));
    const sched::FftSchedule s = sched::fft_matrix_schedule(part, few, targets);
    EXPECT_EQ(std::count_if(s.steps.begin(), s.steps.end(),
                            [](const sched::FftStep &st) { return st.kind == sched::kFftStepMul3 || st.kind == sched::kFftStepMulAdd3; }),
              long(targets.size() * (used / 3)));
    EXPECT_EQ(sched::fft_multiplies(s.steps), targets.size() * used);
    ASSERT_TRUE(sched::fft_steps_are_transforms(s.steps));
    auto got = want;
    for (unsigned t : targets) std::fill(got[t].begin(), got[t].end(), 0xA5);
    run(s, got, len, 128);
    // Expected: the partial sums, element by element (the crate's layout: 32 low then 32 high
    // bytes per 64-byte column).
    for (size_t t = 0; t < targets.size(); ++t)
      for (size_t col = 0; col < whole; col += 64)
        for (size_t e = 0; e < 32; ++e) {
          uint16_t v = 0;
          for (unsigned i = 0; i < used; ++i) {
            const auto &src = want[few[i]];
            v ^= fft::mul(part[t * used + i], uint16_t(src[col + e] | (src[col + 32 + e] << 8)));
          }
          const auto &g = got[targets[t]];
          ASSERT_EQ(uint16_t(g[col + e] | (g[col + 32 + e] << 8)), v)
              << used << " sources, target " << targets[t] << " column " << col / 64 << " element " << e;
        }
  }
}

// Runs of 1..13 XORs into one slot fuse into Xor2 .. Xor6 steps, ceil(run / 6) of them and no
// single XOR left beside a fused one (fuse_xor_steps), and the kernel's several-source XOR
// steps equal the XORs one by one, byte for byte.
TEST_P(FftSteps, XorsIntoOneSlotFuseAndMatchTheSingleXors) {
  std::mt19937_64 rng(0x0f5);
  const size_t len = 64 * 5 + 6, whole = len / 64 * 64;
  const unsigned sources = 13;
  for (unsigned r = 1; r <= sources; ++r) {
    sched::FftSchedule s;
    s.slots = 1;
    s.slot_shard = {0};  // work slot 0 is shard 0's tile; pointer 1 + i is shard i
    std::vector<std::vector<uint8_t>> shards(1 + sources, std::vector<uint8_t>(len));
    for (auto &v : shards)
      for (auto &b : v) b = uint8_t(rng());
    std::vector<uint8_t> want(shards[0]);
    for (unsigned i = 1; i <= r; ++i) {
      s.steps.push_back({sched::kFftStepXor, 0, 1 + i, 0});
      for (size_t j = 0; j < whole; ++j) want[j] ^= shards[i][j];
    }
    sched::fuse_xor_steps(s.steps);
    EXPECT_EQ(s.steps.size(), (r + sched::kFftMaxXorSources - 1) / sched::kFftMaxXorSources) << r;
    size_t xors = 0;
    uint32_t src[sched::kFftMaxXorSources];
    for (const sched::FftStep &st : s.steps) {
      xors += sched::fft_xor_sources(st, src);
      if (r > 1) EXPECT_NE(st.kind, uint32_t(sched::kFftStepXor)) << r;
    }
    EXPECT_EQ(xors, r);
    auto got = shards;
    run(s, got, len, 128);
    EXPECT_EQ(got[0], want) << r << " XORs";
  }
  // Runs end where the slot written changes; a slot XORed into itself is not fused.
  std::vector<sched::FftStep> steps = {{sched::kFftStepXor, 0, 5, 0}, {sched::kFftStepXor, 1, 6, 0},
                                    {sched::kFftStepXor, 1, 7, 0}, {sched::kFftStepXor, 1, 1, 0},
                                    {sched::kFftStepXor, 1, 8, 0}};
  sched::fuse_xor_steps(steps);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].kind, uint32_t(sched::kFftStepXor));
  EXPECT_EQ(steps[1].kind, uint32_t(sched::kFftStepXor2));
  EXPECT_EQ(steps[1].b, 6u);
  EXPECT_EQ(steps[1].dist, 7u);
  EXPECT_EQ(steps[2].b, 1u);
  EXPECT_EQ(steps[3].b, 8u);
}

// A decode's multiplies that read shards ask for the shard read two such steps later
// (prefetch_shard_reads: only kFftStepMul with b past the work slots, in order, the last two
// asking for nothing), and the kernel's prefetches leave every value as without them.
TEST_P(FftSteps, ShardMultipliesAskForALaterShard) {
  std::mt19937_64 rng(0x9f3);
  const size_t len = 64 * 4 + 6, whole = len / 64 * 64;
  const unsigned shards = 6;
  sched::FftSchedule s;
  s.slots = 3;
  s.slot_shard = {0, 1, -1};  // slots 0 and 1 are shards 0 and 1's tiles; pointer 3 + i is shard i
  std::vector<uint16_t> logs;
  for (unsigned j = 0; j < 4; ++j) {
    logs.push_back(uint16_t(rng() % fft::lch_field(fft::Gf::k16).modulus));
    s.tables.resize(s.tables.size() + sched::kFftMulTableBytes);
    sched::fft_mul_tables(logs.back(), s.tables.data() + s.tables.size() - sched::kFftMulTableBytes);
  }
  s.steps = {{sched::kFftStepMul, 2, 3 + 2, 0},  {sched::kFftStepZero, 1, 0, 0},      {sched::kFftStepMul, 1, 3 + 3, 1},
             {sched::kFftStepMul, 1, 1, 2},      {sched::kFftStepMulAdd, 2, 3 + 4, 3}, {sched::kFftStepMul, 0, 3 + 5, 3},
             {sched::kFftStepXor, 0, 2, 0},      {sched::kFftStepMul, 2, 3 + 4, 2}};
  const sched::FftSchedule plain = s;
  sched::prefetch_shard_reads(s.steps, s.slots);
  const std::vector<uint32_t> want_dist = {1 + 3 + 5, 0, 1 + 3 + 4, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < s.steps.size(); ++i) {
    EXPECT_EQ(s.steps[i].dist, want_dist[i]) << "step " << i;
    EXPECT_EQ(s.steps[i].kind, plain.steps[i].kind);
  }
  std::vector<std::vector<uint8_t>> a(shards, std::vector<uint8_t>(len));
  for (auto &v : a)
    for (auto &b : v) b = uint8_t(rng());
  const auto in = a;
  auto b = a;
  run(plain, a, len, 128);
  run(s, b, len, 128);
  EXPECT_EQ(a, b);
  // Against the scalar field: scratch = in2 t0, then ^= in4 t3; shard 1 = in3 t1 t2; shard 0 =
  // in5 t3 ^ scratch; shards 2 .. 5 unchanged.
  const fft::LchField &f = fft::lch_field(fft::Gf::k16);
  auto at = [](const std::vector<uint8_t> &v, size_t col, size_t e) { return uint16_t(v[col + e] | (v[col + 32 + e] << 8)); };
  for (size_t col = 0; col < whole; col += 64)
    for (size_t e = 0; e < 32; ++e) {
      const uint16_t scratch = f.mul_log(at(in[2], col, e), logs[0]) ^ f.mul_log(at(in[4], col, e), logs[3]);
      ASSERT_EQ(at(a[1], col, e), f.mul_log(f.mul_log(at(in[3], col, e), logs[1]), logs[2])) << col << " " << e;
      ASSERT_EQ(at(a[0], col, e), uint16_t(f.mul_log(at(in[5], col, e), logs[3]) ^ scratch)) << col << " " << e;
    }
  for (unsigned i = 2; i < shards; ++i) EXPECT_EQ(a[i], in[i]) << i;
}

// The decode core's formal derivative: run inside the FFT's first pass where that pass is whole
// and at most an eighth of the points lie past decode_end (one derivative-fused step per group,
// in rising a right after the IFFT, and no XOR step of its own: those left are the transforms'
// skipped multiplies, under half the derivative's); else every slot's XORs as several-source steps,
// their sources the (n / 2) log n single XORs of rs_fft.h's derivative.
TEST(FftSchedule, DerivativeRunsInTheFirstFftPassOrAsSeveralXorsToAStep) {
  struct Case { unsigned k, m; bool radix8, fused; };
  const Case cases[] = {{32, 32, false, true}, {32, 32, true, true},    {128, 128, false, true},
                        {128, 128, true, true}, {1000, 1000, true, true},  // 24 of 2048 points past
                        {4, 4, true, true},
                        {8, 8, true, true},      // the low rate, 16 points
                        {100, 20, false, false}, {100, 20, true, false},  // truncated: 132 points of 256
                        {3, 5, true, false},     // the low rate, truncated: 9 of 16
                        {1, 1, false, false}};   // one layer: no multi-layer step to hold it
  for (const Case &c : cases) {
    auto core = sched::fft_decode_core(c.k, c.m, c.radix8);
    ASSERT_TRUE(core.ok());
    const std::string what = std::to_string(c.k) + ":" + std::to_string(c.m) + (c.radix8 ? " radix8" : "");
    size_t steps = 0, xors = 0, fused = 0, tops = 0, first = core->steps.size();
    uint32_t src[sched::kFftMaxXorSources];
    for (size_t i = 0; i < core->steps.size(); ++i) {
      const sched::FftStep &st = core->steps[i];
      const size_t x = sched::fft_xor_sources(st, src);
      steps += x > 0;
      xors += x;
      if (sched::fft_step_reads_groups(st.kind)) {
        tops += st.kind == sched::kFftStepTop4D || st.kind == sched::kFftStepTop8D;
        if (!fused++) first = i;
        EXPECT_EQ(st.a, fused - 1) << what;  // rising a, one run
        EXPECT_EQ(i, first + fused - 1) << what;
        EXPECT_EQ(size_t(st.dist) * sched::fft_step_slots(st.kind), core->slots) << what;
      }
    }
    const size_t n = core->slots, log_n = size_t(__builtin_ctzll(n));
    if (c.fused) {
      ASSERT_GT(fused, 0u) << what;
      const size_t per = sched::fft_step_slots(core->steps[first].kind);
      EXPECT_EQ(fused, n / per) << what;
      // Folded with the IFFT's last pass: the transforms' mirrored groups (threes from the
      // bottom, a pair or two on top); else the FFT's threes from the top.
      EXPECT_EQ(per, tops ? (c.radix8 && log_n % 3 == 0 ? 8u : 4u) : c.radix8 && log_n >= 3 ? 8u : 4u) << what;
      EXPECT_LT(xors, n / 4 * log_n) << what;  // under half the derivative's
      // With passes of the IFFT before them and of the FFT after, they run the IFFT's last pass
      // as well (kFftStepTop4D / Top8D); else only the FFT's first.
      EXPECT_EQ(tops, n > per ? fused : 0u) << what;
      for (size_t i = 0; i < first; ++i) {  // the IFFT before them, without a pass of their groups
        const sched::FftStep &st = core->steps[i];
        EXPECT_TRUE(st.kind != sched::kFftStepFft4 && st.kind != sched::kFftStepFft8) << what;
        if (tops) EXPECT_FALSE(sched::fft_step_slots(st.kind) == per && st.dist == core->steps[first].dist) << what;
      }
    } else {
      EXPECT_EQ(fused, 0u) << what;
      // The transforms' skipped multiplies are XOR steps too (a truncated layer's single
      // butterflies among them).
      EXPECT_GE(xors, n / 2 * log_n) << what;
      EXPECT_LE(xors, n * log_n + n) << what;
      if (n >= 64) EXPECT_LT(steps * 2, xors) << what;  // several XORs to a step
    }
  }
}

// The decode core's steps (derivative fused or not, truncated or not) compute what
// codes::fft's IFFT, formal derivative and FFT compute, on every point a decode reads (below
// decode_end; one element per slot through the step interpreter: the steps are element-wise).
TEST(FftSchedule, DecodeCoreIsTheReferenceTransforms) {
  std::mt19937_64 rng(0xd0c0);
  const unsigned sizes[][2] = {{1, 1}, {3, 5}, {4, 4}, {8, 8}, {32, 32}, {100, 20}, {20, 100}, {128, 128},
                               {1000, 1000}, {3000, 200}, {16384, 16384}};
  for (fft::Gf gf : {fft::Gf::k16, fft::Gf::k8})
    for (bool radix8 : {false, true})
      for (auto &sz : sizes) {
        const unsigned k = sz[0], m = sz[1];
        auto g = fft::geometry(k, m, gf);
        if (!g.ok()) continue;  // GF(2^8): 256 points at most
        auto core = sched::fft_decode_core(k, m, radix8, gf);
        ASSERT_TRUE(core.ok());
        const size_t n = g->decode_work;
        ASSERT_EQ(core->slots, n);
        const uint16_t mask = gf == fft::Gf::k8 ? 0xff : 0xffff;
        fft::Shards w(n, 1);
        std::vector<uint16_t> v(n, 0);
        for (size_t x = 0; x < g->decode_end; ++x) v[x] = w[x][0] = uint16_t(rng()) & mask;
        fft::ifft(w, 0, n, g->decode_end, 0, gf);
        fft::formal_derivative(w, n);
        fft::fft(w, 0, n, g->decode_end, 0, gf);
        test::fft_run_steps(core->steps, core->tables, v);
        for (size_t x = 0; x < g->decode_end; ++x)
          ASSERT_EQ(v[x], w[x][0]) << k << ":" << m << (radix8 ? " radix8" : "") << " gf " << int(gf) << " slot " << x;
      }
}

// Order::kRadix4's groups of four butterflies become two-layer steps (encode and decode core).
TEST(FftSchedule, ButterfliesAreFusedInPairsOfLayers) {
  auto count = [](const sched::FftSchedule &s, uint32_t kind) {
    return std::count_if(s.steps.begin(), s.steps.end(), [&](const sched::FftStep &st) { return st.kind == kind; });
  };
  for (auto [k, m] : {std::pair{32u, 32u}, {100u, 20u}, {20u, 100u}}) {
    auto enc = sched::fft_encode_schedule(k, m);
    auto core = sched::fft_decode_core(k, m);
    ASSERT_TRUE(enc.ok() && core.ok());
    EXPECT_GT(count(*enc, sched::kFftStepFft4), 0) << k << ":" << m;
    EXPECT_GT(count(*enc, sched::kFftStepIfft4), 0) << k << ":" << m;
    EXPECT_GT(count(*core, sched::kFftStepFft4), 0) << k << ":" << m;
    if (k == 32 && m == 32) {  // no truncation: every butterfly of a pair of layers is fused
      // Two 32-point transforms: 2 pairs of layers x 8 groups each, and one odd layer of 16
      // butterflies each (the FFT's first block there skips its multiply: a XOR step).
      EXPECT_EQ(count(*enc, sched::kFftStepFft4) + count(*enc, sched::kFftStepIfft4), 32);
      EXPECT_EQ(count(*enc, sched::kFftStepFft) + count(*enc, sched::kFftStepIfft), 31);
    }
  }
}

// codes::fft::Order::kRadix8's groups of twelve butterflies become three-layer steps: 32
// points are a three and a pair of layers, so every butterfly of both transforms runs in
// Fft8 / Ifft8 or Fft4 / Ifft4 steps, two fewer tile passes than two-layer steps alone.
TEST(FftSchedule, ButterfliesAreFusedInThreesOfLayers) {
  auto count = [](const sched::FftSchedule &s, uint32_t kind) {
    return std::count_if(s.steps.begin(), s.steps.end(), [&](const sched::FftStep &st) { return st.kind == kind; });
  };
  auto enc = sched::fft_encode_schedule(32, 32, true, true);
  ASSERT_TRUE(enc.ok());
  // Two 32-point transforms: per transform 4 groups of twelve (layers 16, 8, 4 or 1, 2, 4)
  // and 8 groups of four.
  EXPECT_EQ(count(*enc, sched::kFftStepFft8) + count(*enc, sched::kFftStepIfft8), 8);
  EXPECT_EQ(count(*enc, sched::kFftStepFft4) + count(*enc, sched::kFftStepIfft4), 16);
  EXPECT_EQ(count(*enc, sched::kFftStepFft) + count(*enc, sched::kFftStepIfft), 0);
  EXPECT_EQ(sched::fft_multiplies(enc->steps), 2u * 80);
  auto core = sched::fft_decode_core(100, 20, true);  // truncated transforms: groups cut short stay apart
  ASSERT_TRUE(core.ok());
  EXPECT_GT(count(*core, sched::kFftStepFft8), 0);
  EXPECT_GT(count(*core, sched::kFftStepIfft8), 0);
}

// A one-chunk encode's last IFFT pass and first FFT pass cover the same slot groups (the
// transforms group their layers alike, never a single layer on top), and pair_transforms puts
// each group's FFT step right after its IFFT step, where the kernel runs them as one pass;
// the first IFFT pass reads the originals from the shards (no copies). Both steps stay in the
// schedule, so every interpreter still sees two.
TEST(FftSchedule, EncodeTopPassesArePairedOnTheSameSlots) {
  struct Case { unsigned k, m; bool radix8; uint32_t ifft, fft; size_t pairs; };
  const Case cases[] = {
      {32, 32, true, sched::kFftStepIfft4, sched::kFftStepFft4, 8},     // layers 3 + 2: a pair on top
      {64, 64, true, sched::kFftStepIfft8, sched::kFftStepFft8, 8},     // 3 + 3
      {128, 128, true, sched::kFftStepIfft4, sched::kFftStepFft4, 32},  // 3 + 2 + 2, not 3 + 3 + 1
      {16, 16, true, sched::kFftStepIfft4, sched::kFftStepFft4, 4},     // 2 + 2, not 3 + 1
      {10, 8, true, sched::kFftStepIfft8, sched::kFftStepFft8, 1},      // two chunks: the last IFFT is chunk 1's
  };
  for (const Case &c : cases) {
    auto enc = sched::fft_encode_schedule(c.k, c.m, true, c.radix8);
    ASSERT_TRUE(enc.ok());
    size_t pairs = 0, copies = 0;
    for (size_t i = 0; i + 1 < enc->steps.size(); ++i) {
      const sched::FftStep &h = enc->steps[i], &t = enc->steps[i + 1];
      pairs += h.kind == c.ifft && t.kind == c.fft && h.a == t.a && h.dist == t.dist && t.b == 0;
    }
    for (const sched::FftStep &st : enc->steps) copies += st.kind == sched::kFftStepCopy;
    const std::string what = std::to_string(c.k) + ":" + std::to_string(c.m) + (c.radix8 ? " radix8" : " radix4");
    if (c.k == 10) {  // chunk 1 is XORed into chunk 0 before the FFT: nothing to pair
      EXPECT_EQ(pairs, 0u) << what;
      continue;
    }
    EXPECT_EQ(pairs, c.pairs) << what;
    EXPECT_EQ(copies, 0u) << what;
  }
}

// A multi-chunk encode's whole chunks end their IFFTs XORing into chunk 0 (FftStep::into), so
// no XOR step is left but a partial last chunk's, on two- and three-layer steps alike; the interpreter gives the same
// values as the schedule with the folds undone (every into step's results stored in its own
// slots and XORed by single steps), and only chunk 0's slots feed the FFT.
TEST(FftSchedule, MultiChunkEncodesXorIntoChunkZeroInTheirLastPass) {
  for (auto [k, m, radix8] : {std::tuple{100u, 28u, true}, {100u, 28u, false}, {1000u, 24u, true}, {50u, 3u, true},
                              {10u, 4u, true}}) {
    auto enc = sched::fft_encode_schedule(k, m, true, radix8);
    ASSERT_TRUE(enc.ok());
    const std::string what = std::to_string(k) + ":" + std::to_string(m) + (radix8 ? " radix8" : " radix4");
    const size_t C = fft::geometry(k, m)->chunk, partial = k / C * C;  // the partial chunk's first slot
    size_t into = 0, xors = 0;  // xors: XOR steps from a whole chunk's slots into chunk 0's
    std::vector<sched::FftStep> undone;
    for (const sched::FftStep &st : enc->steps) {
      xors += st.kind == sched::kFftStepXor && st.a < C && st.b >= C && st.b < partial;
      if (!st.into) {
        undone.push_back(st);
        continue;
      }
      ++into;
      sched::FftStep own = st;
      own.into = 0;
      undone.push_back(own);
      for (unsigned j = 0; j < sched::fft_step_slots(st.kind); ++j)
        undone.push_back({sched::kFftStepXor, st.into - 1 + j * st.dist, st.a + j * st.dist, 0});
    }
    EXPECT_GE(into, k / C - 1) << what;  // at least a step per whole chunk past the first
    // (A partial last chunk's truncated IFFT keeps single butterflies on top, and its XORs.)
    EXPECT_EQ(xors, 0u) << what;
    size_t pointers = enc->slots + k + m;
    std::vector<uint16_t> a(pointers), b;
    std::mt19937_64 rng(k);
    for (auto &e : a) e = uint16_t(rng());
    b = a;
    test::fft_run_steps(enc->steps, enc->tables, a);
    test::fft_run_steps(undone, enc->tables, b);
    for (uint32_t x = 0; x < enc->slots; ++x)
      if (enc->slot_shard[x] >= 0) ASSERT_EQ(a[x], b[x]) << what << " output slot " << x;
  }
}

TEST(FftSchedule, BadPatternsAreRejected) {
  std::vector<bool> present(6, true), wanted(6, false);
  wanted[1] = true;
  EXPECT_EQ(sched::fft_decode_schedule(4, 2, present, wanted).status().code(), StatusCode::kInvalidArgument);
  present[0] = present[1] = present[2] = false;
  EXPECT_EQ(sched::fft_decode_schedule(4, 2, present, wanted).status().code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(sched::fft_decode_schedule(4, 2, std::vector<bool>(5, true), wanted).status().code(), StatusCode::kShardCount);
  EXPECT_EQ(sched::fft_encode_schedule(0, 2).status().code(), StatusCode::kInvalidSpec);
}

INSTANTIATE_TEST_SUITE_P(Targets, FftSteps, testing::Values("host", "host-avx2", "x86_64-v3", "x86_64-v2"),
                         [](const testing::TestParamInfo<std::string> &i) {
                           std::string s = i.param;  // host-avx2 -> host_avx2
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace ecjit

namespace ecjit {
namespace {

// The transforms' step kernel (FftStepKinds::kTransforms, what a codec compiles first) is the
// kernel of every kind without the decode core's: no function of a derivative-fused kind, well
// under the whole kernel's instructions; and the schedules of the decode core are exactly the
// ones that need the kernel of every kind.
TEST(FftStepKinds, TransformKernelLeavesTheDecodeCoresKindsOut) {
  auto info = test::resolve_target("host");
  ASSERT_TRUE(bool(info)) << err_text(info.takeError());
  if (!ir::fft_kernel_supported(*info)) GTEST_SKIP() << "no byte shuffle";
  size_t instructions[2] = {0, 0};
  for (auto kinds : {sched::FftStepKinds::kAll, sched::FftStepKinds::kTransforms}) {
    llvm::LLVMContext ctx;
    auto mod = ir::build_fft_step_kernel(ctx, "steps", *info, fft::Gf::k16, kinds);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    bool fused = false;
    for (const llvm::Function &f : **mod) {
      fused = fused || f.getName().ends_with(".fft8d") || f.getName().ends_with(".top8d");
      instructions[kinds == sched::FftStepKinds::kTransforms] += f.getInstructionCount();
    }
    EXPECT_EQ(fused, kinds == sched::FftStepKinds::kAll);
  }
  EXPECT_LT(instructions[1] * 10, instructions[0] * 6) << instructions[1] << " of " << instructions[0];
  for (bool radix8 : {false, true})
    for (auto [k, m] : {std::pair{32u, 32u}, {128u, 128u}, {1024u, 1024u}}) {  // cores that fold their derivative
      auto enc = sched::fft_encode_schedule(k, m, true, radix8);
      auto core = sched::fft_decode_core(k, m, radix8);
      ASSERT_TRUE(enc.ok() && core.ok());
      EXPECT_TRUE(sched::fft_steps_are_transforms(enc->steps)) << k << ":" << m;
      EXPECT_FALSE(sched::fft_steps_are_transforms(core->steps)) << k << ":" << m;  // its derivative at least
      for (uint32_t kind = 0; kind <= sched::kFftStepTop8D; ++kind)
        EXPECT_EQ(sched::fft_steps_are_transforms({sched::FftStep{kind, 0, 0, 0}}),
                  kind < sched::kFftStepFft4D) << "kind " << kind;
    }
}

// Foreign targets: the step kernel and an unrolled encoder compile for AArch64 NEON (TBL
// lookups) and 128-bit x86 (PSHUFB) through the same pipeline as the JIT (AOT objects).
TEST(FftKernelTargets, CompileForNeonAndSse) {
  ASSERT_FALSE(bool(jit::init_llvm_targets()));
  for (const char *name : {"aarch64", "x86_64-v2"}) {
    auto spec = jit::TargetSpec::parse(name);
    ASSERT_TRUE(bool(spec)) << err_text(spec.takeError());
    auto info = spec->resolve();
    ASSERT_TRUE(bool(info)) << err_text(info.takeError());
    ASSERT_TRUE(ir::fft_kernel_supported(*info)) << name;
    for (auto kind : {ir::FftKernelDesc::Kind::kSteps, ir::FftKernelDesc::Kind::kEncode}) {
      ir::FftKernelDesc d{kind, 10, 4, "fft_foreign", {}, {}};
      auto asm_text = jit::kernel_code(jit::fft_compile_request(d, *info, jit::OptLevel::kO3), jit::EmitKind::kAssembly);
      ASSERT_TRUE(bool(asm_text)) << name << ": " << err_text(asm_text.takeError());
      EXPECT_NE(asm_text->find(std::string(name) == "aarch64" ? "tbl" : "pshufb"), std::string::npos) << name;
    }
  }
}

}  // namespace
}  // namespace ecjit

namespace ecjit {
namespace {

// ---- GF(2^8) (Leopard-RS's field, rs-fft:...,gf=8): the same kernels multiplying bytes ----

// k + m shards of len bytes, the recovery shards the GF(2^8) reference encode of the originals.
std::vector<std::vector<uint8_t>> encoded8(std::mt19937_64 &rng, unsigned k, unsigned m, size_t len) {
  auto s = random_shards(rng, k + m, len);
  std::vector<const uint8_t *> orig;
  std::vector<uint8_t *> rec;
  for (unsigned i = 0; i < k; ++i) orig.push_back(s[i].data());
  for (unsigned j = 0; j < m; ++j) rec.push_back(s[k + j].data());
  EXPECT_TRUE(fft::encode_bytes(k, m, len, orig.data(), rec.data(), fft::Gf::k8).ok());
  return s;
}

// The GF(2^8) step kernel and unrolled kernels of one target: split tables or GFNI on 256-bit
// planes (host-avx2, host-avx512f: as the machine has GFNI) and whole 512-bit columns (host,
// where the machine has AVX-512BW and GFNI).
class FftSteps8 : public FftStepsOf<fft::Gf::k8> {};

TEST_P(FftSteps8, DerivativeFusedStepsMatchTheInterpreter) { check_derivative_steps(); }
TEST_P(FftSteps8, FoldedEndsMatchTheInterpreter) { check_end_steps(); }

// Encode, the decode core with random losses, a matrix decode and the inverted encoder on the
// encoder's tables: every schedule kind the runtime builds, two- and three-layer steps.
TEST_P(FftSteps8, EverySchedulekindMatchesTheReference) {
  // host: whole 512-bit columns where the target has AVX-512BW; host-avx512f (no BW) and
  // host-avx2: 256-bit planes.
  EXPECT_EQ(ir::fft_whole_column_vectors(target_), GetParam() == "host" && ir::has_feature(target_, "avx512bw"))
      << GetParam();
  std::mt19937_64 rng(0x8f8);
  const unsigned sizes[][2] = {{1, 1}, {3, 5}, {10, 4}, {32, 32}, {100, 20}, {20, 100}, {128, 128}, {190, 50}};
  for (bool radix8 : {false, true})
    for (auto &sz : sizes) {
      const unsigned k = sz[0], m = sz[1], n = k + m;
      const size_t len = 64 * 6, tile = 128;
      const std::string what = std::to_string(k) + ":" + std::to_string(m) + (radix8 ? " radix8" : "");
      const auto want = encoded8(rng, k, m, len);
      auto got = want;
      for (unsigned j = 0; j < m; ++j) std::fill(got[k + j].begin(), got[k + j].end(), 0xEE);
      auto enc = sched::fft_encode_schedule(k, m, true, radix8, fft::Gf::k8);
      ASSERT_TRUE(enc.ok()) << enc.status().to_string();
      run(*enc, got, len, tile);
      ASSERT_EQ(got, want) << what << " encode";
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<bool> present(n, true), wanted(n, false);
        const unsigned lost = trial == 0 ? m : 1 + unsigned(rng() % m);
        for (unsigned e = 0; e < lost; ++e) present[rng() % n] = false;
        std::vector<unsigned> sources, targets;
        for (unsigned s = 0; s < n; ++s) {
          wanted[s] = !present[s];
          (present[s] ? sources : targets).push_back(s);
          if (wanted[s]) std::fill(got[s].begin(), got[s].end(), 0xA5);
        }
        auto dec = sched::fft_decode_schedule(k, m, present, wanted, radix8, fft::Gf::k8);
        ASSERT_TRUE(dec.ok()) << dec.status().to_string();
        run(*dec, got, len, tile);
        ASSERT_EQ(got, want) << what << " core trial " << trial;
        auto coeffs = fft::decode_matrix(k, m, present, sources, targets, fft::Gf::k8);
        ASSERT_TRUE(coeffs.ok()) << coeffs.status().to_string();
        for (unsigned t : targets) std::fill(got[t].begin(), got[t].end(), 0x3C);
        run(sched::fft_matrix_schedule(*coeffs, sources, targets, fft::Gf::k8), got, len, tile);
        ASSERT_EQ(got, want) << what << " matrix trial " << trial;
      }
      // The first chunk of originals lost (where it is whole): the encoder inverted.
      const size_t C = fft::geometry(k, m, fft::Gf::k8)->chunk;
      if (C > k) continue;
      std::vector<bool> present(n, true);
      std::vector<unsigned> targets;
      for (unsigned s = 0; s < C; ++s) present[s] = false, targets.push_back(s);
      auto sources = fft::inverse_decode_sources(k, m, present, targets, fft::Gf::k8);
      if (!sources) continue;
      auto inv = sched::fft_inverse_decode_schedule(k, m, *sources, targets, &*enc, radix8, fft::Gf::k8);
      ASSERT_TRUE(inv) << what;
      for (unsigned t : targets) std::fill(got[t].begin(), got[t].end(), 0x5A);
      run(*inv, got, len, tile, enc->tables.data());
      ASSERT_EQ(got, want) << what << " inverse";
    }
}

// The unrolled kernels (encoder, decode core, an inverse) pass the self-test the disk cache
// applies, which runs them against codes::fft's GF(2^8) reference.
TEST_P(FftSteps8, UnrolledKernelsMatchTheReference) {
  for (auto [k, m] : {std::pair{10u, 4u}, std::pair{3u, 5u}, std::pair{8u, 8u}})
    for (auto kind : {ir::FftKernelDesc::Kind::kEncode, ir::FftKernelDesc::Kind::kDecode,
                      ir::FftKernelDesc::Kind::kInverse}) {
      ir::FftKernelDesc d{kind, k, m, "fft8_unrolled_" + std::to_string(counter_++), {}, {}, fft::Gf::k8};
      if (kind == ir::FftKernelDesc::Kind::kInverse) {
        const size_t C = fft::geometry(k, m, fft::Gf::k8)->chunk;
        if (C > k) continue;
        std::vector<bool> present(k + m, true);
        for (unsigned s = 0; s < C; ++s) present[s] = false, d.targets.push_back(s);
        auto sources = fft::inverse_decode_sources(k, m, present, d.targets, fft::Gf::k8);
        ASSERT_TRUE(sources) << k << ":" << m;
        d.sources = *sources;
      }
      auto kernel = jit::jit_kernel(*session(), jit::fft_compile_request(d, target_, jit::OptLevel::kO3));
      ASSERT_TRUE(bool(kernel)) << err_text(kernel.takeError());
      EXPECT_TRUE(jit::fft_kernel_matches_desc(**kernel, d)) << k << ":" << m << " kind " << int(kind);
      // The GF(2^16) self-test rejects it: the check tells the fields apart.
      ir::FftKernelDesc other = d;
      other.gf = fft::Gf::k16;
      EXPECT_FALSE(jit::fft_kernel_matches_desc(**kernel, other)) << k << ":" << m << " kind " << int(kind);
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, FftSteps8, testing::Values("host", "host-avx2", "host-avx512f"),
                         [](const testing::TestParamInfo<std::string> &i) {
                           std::string s = i.param;
                           for (char &c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace ecjit
