// clmul-insn and clmul-mixed tests: which targets have them, the instruction in the assembly,
// errors (outputs against the reference: strategy_test, two_stage_decode_test).
#include <cstdint>
#include <random>
#include <string>

#include <cstdio>
#include <gtest/gtest.h>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/clmul_insn.h"
#include "ir_builders/lowering.h"
#include "jit/kernel_compiler.h"
#include "jit_test_util.h"

namespace ecjit {
namespace {

using codes::Field;
using test::err_text;

Field field(unsigned l) { return *Field::make(l); }

TEST(ClmulInsnSupport, PerTargetAndField) {
  const struct {
    const char *target;
    bool wide;  // GF(2^32) and GF(2^64)
  } rows[] = {
      {"x86_64-v4+vpclmulqdq", true},  {"x86_64-v3+vpclmulqdq", true},
      {"x86_64-v2+pclmul", true},      {"x86_64-v4", false},  // no VPCLMULQDQ at 512 bits
      {"x86_64-v2", false},            {"aarch64+neon", false},  // PMULL needs +aes
      {"aarch64+aes", true},           {"armv7", false},
  };
  for (const auto &r : rows) {
    auto info = test::resolve_target(r.target);
    if (!info) {
      std::printf("skipping %s: %s\n", r.target, err_text(info.takeError()).c_str());
      continue;
    }
    for (unsigned l : {8u, 16u, 32u, 64u})
      EXPECT_EQ(ir::clmul_insn_supported(field(l), *info), r.wide && l >= 32)
          << r.target << " gf" << l;
  }
}

size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// RS(10,4) shape, 40 products: two multiplies each for GF(2^64), four for GF(2^32), at the
// target's width, with no per-product reduction (the shifts of one Barrett reduction per
// output vector only).
TEST(ClmulInsnAsm, MultipliesPerProductAndOneReductionPerOutput) {
  const struct {
    const char *target;
    const char *reg;
  } rows[] = {{"x86_64-v4+vpclmulqdq", "%zmm"}, {"x86_64-v3+vpclmulqdq", "%ymm"},
              {"x86_64-v2+pclmul", "%xmm"}, {"aarch64+aes", ".1q"}};
  for (const auto &row : rows)
    for (unsigned l : {32u, 64u}) {
      const Field f = field(l);
      std::mt19937_64 rng(l);
      codes::Matrix M(4, 10);
      for (uint64_t &a : M.a) a = 2 + rng() % (f.mask() - 1);
      auto info = test::resolve_target(row.target);
      ASSERT_TRUE(bool(info)) << err_text(info.takeError());
      jit::CompileRequest req{ir::KernelDesc{f, M, "k"}, *info, ir::Strategy::kClmulInsn,
                              jit::OptLevel::kO3};
      auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
      ASSERT_TRUE(bool(text)) << err_text(text.takeError());
      EXPECT_GE(count(*text, "pclmulqdq\t") + count(*text, "\tpmull"), 40u * (l == 64 ? 2 : 4))
          << row.target << " gf" << l;
      EXPECT_NE(text->find(row.reg), std::string::npos) << row.target;
    }
}

// clmul-mixed on RS(10,4) shapes: constants with at most clmul_mixed_short_bits set bits go
// by shifts (no multiply instruction), the others by the instruction (as many as clmul-insn
// takes for them), and a matrix of both takes the instruction for its dense half only.
TEST(ClmulMixedAsm, ShortConstantsByShiftsDenseByTheInstruction) {
  auto info = test::resolve_target("x86_64-v3+vpclmulqdq");
  ASSERT_TRUE(bool(info)) << err_text(info.takeError());
  for (unsigned l : {32u, 64u}) {
    const Field f = field(l);
    const unsigned short_bits = ir::clmul_mixed_short_bits(f);
    ASSERT_GE(short_bits, 2u);
    ASSERT_LT(short_bits, l);
    std::mt19937_64 rng(l);
    auto constant = [&](bool dense) {
      for (;;) {
        const uint64_t a = 2 + rng() % (f.mask() - 1);
        const unsigned bits = unsigned(__builtin_popcountll(a));
        if (dense ? bits > short_bits : bits <= short_bits) return a;
        if (!dense) {  // uniform constants are rarely short: keep the low bits of one
          uint64_t b = a & ((uint64_t(1) << short_bits) - 1);
          if (b >= 2) return b;
        }
      }
    };
    const unsigned per_product = l == 64 ? 2 : 4;
    for (unsigned dense_rows : {0u, 2u, 4u}) {
      codes::Matrix M(4, 10);
      for (unsigned r = 0; r < 4; ++r)
        for (unsigned c = 0; c < 10; ++c) M.at(r, c) = constant(r < dense_rows);
      jit::CompileRequest req{ir::KernelDesc{f, M, "k"}, *info, ir::Strategy::kClmulMixed,
                              jit::OptLevel::kO3};
      auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
      ASSERT_TRUE(bool(text)) << err_text(text.takeError());
      // The main loop and the overlapping last vector share one body; the scalar tail goes to
      // clmul-shift. So the count is a multiple of the dense products' multiplies.
      const size_t n = count(*text, "pclmulqdq\t");
      if (dense_rows == 0) EXPECT_EQ(n, 0u) << "gf" << l;
      else {
        EXPECT_GE(n, 10u * dense_rows * per_product) << "gf" << l << " dense rows " << dense_rows;
        EXPECT_EQ(n % (10u * dense_rows * per_product), 0u) << "gf" << l << " dense rows " << dense_rows;
      }
    }
    // The cost it plans with: set bits for short constants, one more than the limit otherwise.
    auto low = ir::make_lowering(ir::Strategy::kClmulMixed, f, *info);
    ASSERT_TRUE(bool(low)) << err_text(low.takeError());
    const codes::CostModel model = (*low)->cost_model();
    EXPECT_EQ(model, ir::strategy_cost_model(ir::Strategy::kClmulMixed, f));
    EXPECT_EQ(codes::constant_cost(0, model), 0u);
    EXPECT_EQ(codes::constant_cost(1, model), 0u);
    EXPECT_EQ(codes::constant_cost(0b1011, model), 3u);
    EXPECT_EQ(codes::constant_cost(f.mask(), model), short_bits + 1);
  }
}

TEST(ClmulInsnErrors, FieldsAndTargetsItCannotServe) {
  auto v4 = test::resolve_target("x86_64-v4+vpclmulqdq");
  ASSERT_TRUE(bool(v4));
  for (ir::Strategy s : {ir::Strategy::kClmulInsn, ir::Strategy::kClmulMixed})
    for (unsigned l : {8u, 16u}) {
      auto low = ir::make_lowering(s, field(l), *v4);
      ASSERT_FALSE(bool(low));
      const std::string msg = err_text(low.takeError());
      EXPECT_NE(msg.find("GF(2^" + std::to_string(l) + ")"), std::string::npos) << msg;
      EXPECT_NE(msg.find(ir::strategy_name(s)), std::string::npos) << msg;
    }
  for (const char *name : {"x86_64-v4", "aarch64+neon", "armv7", "host-sse2"}) {
    auto info = test::resolve_target(name);
    if (!info) {
      llvm::consumeError(info.takeError());
      continue;
    }
    auto low = ir::make_lowering(ir::Strategy::kClmulInsn, field(64), *info);
    ASSERT_FALSE(bool(low)) << name;
    const std::string msg = err_text(low.takeError());
    EXPECT_NE(msg.find("PCLMULQDQ"), std::string::npos) << msg;
  }
}

// The static choice of "auto" (tuning off): with 512-bit VPCLMULQDQ (and a CPU whose model
// does not say it is dear; the generic x86-64-v4 has none) clmul-insn for GF(2^64), for
// GF(2^32) only without GFNI; clmul-mixed on x86 at 128 and 256 bits; clmul-shift on
// AArch64 (PMULL not measured).
TEST(ClmulInsnAuto, StaticChoice) {
  auto both = test::resolve_target("x86_64-v4+vpclmulqdq,+gfni");
  auto no_gfni = test::resolve_target("x86_64-v4+vpclmulqdq");
  ASSERT_TRUE(bool(both) && bool(no_gfni));
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *both, 64), ir::Strategy::kClmulInsn);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *both, 32), ir::Strategy::kGfni);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *no_gfni, 32), ir::Strategy::kClmulInsn);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *no_gfni, 64), ir::Strategy::kClmulInsn);
  for (const char *name : {"x86_64-v3+vpclmulqdq", "x86_64-v2+pclmul"}) {
    auto narrow = test::resolve_target(name);
    ASSERT_TRUE(bool(narrow)) << name;
    for (unsigned l : {32u, 64u})
      EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *narrow, l), ir::Strategy::kClmulMixed)
          << name << " gf" << l;
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *narrow, 16), ir::Strategy::kClmulShift)
        << name;
  }
  auto arm = test::resolve_target("aarch64+aes");
  ASSERT_TRUE(bool(arm));
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *arm, 64), ir::Strategy::kClmulShift);
}

// The cost of a carry-less multiply comes from the CPU's scheduling model and steers the
// 512-bit choice: clmul-insn where the multiply costs at most 3 XORs (Intel: 2; unknown: 0),
// clmul-mixed where it costs more (Zen 4 / Zen 5: 4).
TEST(ClmulInsnAuto, MultiplyCostFromTheSchedulingModel) {
  auto v4 = test::resolve_target("x86_64-v4+vpclmulqdq");
  ASSERT_TRUE(bool(v4));
  EXPECT_EQ(v4->clmul_cost_xors, 0.0) << "the generic x86-64-v4 CPU has no per-instruction model";
  auto arm = test::resolve_target("aarch64+aes");
  ASSERT_TRUE(bool(arm));
  EXPECT_GT(arm->clmul_cost_xors, 0.0) << "PMULL against EOR in the generic AArch64 model";
  for (auto [cost, want] : {std::pair{0.0, ir::Strategy::kClmulInsn},
                            std::pair{2.0, ir::Strategy::kClmulInsn},
                            std::pair{4.0, ir::Strategy::kClmulMixed}}) {
    ir::TargetInfo t = *v4;
    t.clmul_cost_xors = cost;
    for (unsigned l : {32u, 64u})
      EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, l), want) << cost << " gf" << l;
    t.vector_bits = 256;  // below 512 bits x86 takes clmul-mixed whatever the cost
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, 64), ir::Strategy::kClmulMixed) << cost;
  }
  // This machine's CPU, where its model is one of the measured ones.
  auto host = test::resolve_target("host");
  ASSERT_TRUE(bool(host));
  std::printf("host: cpu %s, %u-bit, a carry-less multiply costs %.2f XORs\n", host->cpu.c_str(),
              host->vector_bits, host->clmul_cost_xors);
  if (host->vector_bits == 512 && (host->cpu == "znver4" || host->cpu == "znver5"))
    EXPECT_EQ(host->clmul_cost_xors, 4.0);
  if (host->vector_bits == 512 && (host->cpu == "icelake-server" || host->cpu == "sapphirerapids" ||
                                   host->cpu == "tigerlake" || host->cpu == "graniterapids"))
    EXPECT_EQ(host->clmul_cost_xors, 2.0);
}

}  // namespace
}  // namespace ecjit
