// clmul-insn tests: which targets have it, the instruction in the assembly, errors.
#include <cstdint>
#include <random>
#include <string>

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

TEST(ClmulInsnErrors, FieldsAndTargetsItCannotServe) {
  auto v4 = test::resolve_target("x86_64-v4+vpclmulqdq");
  ASSERT_TRUE(bool(v4));
  for (unsigned l : {8u, 16u}) {
    auto low = ir::make_lowering(ir::Strategy::kClmulInsn, field(l), *v4);
    ASSERT_FALSE(bool(low));
    const std::string msg = err_text(low.takeError());
    EXPECT_NE(msg.find("GF(2^" + std::to_string(l) + ")"), std::string::npos) << msg;
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

// The static choice of "auto" (tuning off): clmul-insn for GF(2^64) wherever it exists,
// for GF(2^32) only without GFNI.
TEST(ClmulInsnAuto, StaticChoice) {
  auto both = test::resolve_target("x86_64-v4+vpclmulqdq,+gfni");
  auto no_gfni = test::resolve_target("x86_64-v4+vpclmulqdq");
  ASSERT_TRUE(bool(both) && bool(no_gfni));
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *both, 64), ir::Strategy::kClmulInsn);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *both, 32), ir::Strategy::kGfni);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *no_gfni, 32), ir::Strategy::kClmulInsn);
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *no_gfni, 64), ir::Strategy::kClmulInsn);
}

}  // namespace
}  // namespace ecjit
