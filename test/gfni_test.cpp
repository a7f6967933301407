// gfni tests: the block bit-matrices against field multiplication, target support, assembly, errors.
#include <cstdint>
#include <random>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/gfni_affine.h"
#include "ir_builders/lowering.h"
#include "ir_builders/kernel_builder.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "jit_test_util.h"

namespace ecjit {
namespace {

using codes::Field;
using test::err_text;

Field field(unsigned l) { return *Field::make(l); }

ir::TargetInfo target(const std::string &name) {
  auto info = test::resolve_target(name);
  if (!info) {
    ADD_FAILURE() << name << ": " << err_text(info.takeError());
    return {};
  }
  return *info;
}

using test::gfni_affine_byte;

// c * x through the block matrices: output byte i = XOR_j affine(A_ij, byte j of x).
uint64_t block_multiply(const Field &f, uint64_t c, uint64_t x) {
  const unsigned L = f.bits() / 8;
  uint64_t y = 0;
  for (unsigned i = 0; i < L; ++i) {
    uint8_t out = 0;
    for (unsigned j = 0; j < L; ++j)
      out ^= gfni_affine_byte(ir::gfni_block_matrix(f, c, i, j), uint8_t(x >> (8 * j)));
    y |= uint64_t(out) << (8 * i);
  }
  return y;
}

TEST(GfniMatrix, EveryGf8ProductEqualsFieldMultiply) {
  const Field f = field(8);
  for (uint64_t c = 0; c < 256; ++c)
    for (uint64_t x = 0; x < 256; ++x)
      ASSERT_EQ(block_multiply(f, c, x), f.mul(c, x)) << "c=" << c << " x=" << x;
}

TEST(GfniMatrix, WideFieldsEqualFieldMultiply) {
  for (unsigned l : {16u, 32u, 64u}) {
    const Field f = field(l);
    std::mt19937_64 rng(l);
    for (int i = 0; i < 4000; ++i) {
      const uint64_t c = rng() & f.mask(), x = rng() & f.mask();
      ASSERT_EQ(block_multiply(f, c, x), f.mul(c, x)) << "gf" << l << " c=" << c << " x=" << x;
    }
    // Every single input bit through every block.
    for (unsigned b = 0; b < l; ++b)
      ASSERT_EQ(block_multiply(f, 0x1d, uint64_t(1) << b), f.mul(0x1d, uint64_t(1) << b)) << l;
  }
  // Another polynomial: the matrices follow the field, not 0x11d.
  auto g = Field::make(8, 0x187);
  ASSERT_TRUE(g.ok());
  for (uint64_t x = 0; x < 256; ++x) ASSERT_EQ(block_multiply(*g, 0x53, x), g->mul(0x53, x));
}

TEST(GfniSupport, PerTargetAndField) {
  struct Row {
    const char *target;
    bool gf8, gf16, gf32, gf64;
  };
  const Row rows[] = {
      {"x86_64-v4+gfni", true, true, true, true},   // 512-bit: every field
      {"x86_64-v3+gfni", true, true, true, false},  // 256-bit: up to 4-byte symbols
      {"x86_64-v2+gfni", true, true, false, false}, // 128-bit: up to 2-byte symbols
      {"x86_64-v4", false, false, false, false},    // no GFNI
      {"x86_64+gfni", true, true, false, false},    // baseline x86-64: SSE2, 128-bit
      {"aarch64+neon", false, false, false, false},
  };
  for (const Row &r : rows) {
    auto info = test::resolve_target(r.target);
    if (!info) {
      std::printf("skipping %s: %s\n", r.target, err_text(info.takeError()).c_str());
      continue;
    }
    const bool want[] = {r.gf8, r.gf16, r.gf32, r.gf64};
    unsigned i = 0;
    for (unsigned l : {8u, 16u, 32u, 64u}) {
      EXPECT_EQ(ir::gfni_supported(field(l), *info), want[i++])
          << r.target << " gf" << l << " (" << info->vector_bits << "-bit)";
    }
  }
}

size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

std::string assembly(const std::string &target_name, unsigned l, unsigned k, unsigned m) {
  const Field f = field(l);
  std::mt19937_64 rng(42);
  codes::Matrix M(m, k);
  for (uint64_t &a : M.a) a = 2 + rng() % (f.mask() - 1);  // every entry a real product
  jit::CompileRequest req{ir::KernelDesc{f, M, "k"}, target(target_name), ir::Strategy::kGfni,
                          jit::OptLevel::kO3};
  auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
  if (!text) {
    ADD_FAILURE() << target_name << ": " << err_text(text.takeError());
    return {};
  }
  return *text;
}

// RS(10,4) shape, 40 products in the vector loop: L affine transforms each (L = l / 8), at
// the target's register width, and no shift-and-XOR multiply.
TEST(GfniAsm, AffinePerProductAtEveryWidth) {
  const struct {
    const char *target;
    const char *reg;
    unsigned max_l;
  } rows[] = {{"x86_64-v4+gfni", "%zmm", 64}, {"x86_64-v3+gfni", "%ymm", 32},
              {"x86_64-v2+gfni", "%xmm", 16}};
  for (const auto &row : rows)
    for (unsigned l = 8; l <= row.max_l; l *= 2) {
      const std::string text = assembly(row.target, l, 10, 4);
      EXPECT_GE(count(text, "gf2p8affineqb\t"), 40u * (l / 8)) << row.target << " gf" << l;
      EXPECT_NE(text.find(row.reg), std::string::npos) << row.target;
      EXPECT_EQ(count(text, "vpsllw\t") + count(text, "psllw\t"), 0u) << row.target << " gf" << l;
    }
}

// LLVM 19 encodes the compressed displacement of an EVEX {1toN} broadcast operand of
// VGF2P8AFFINEQB scaled by the vector size instead of 8, so "40(%rcx){1to8}" reads 320
// bytes further. Kernels must never fold a broadcast with a base register and an offset
// (constant-pool operands are RIP-relative with a 32-bit displacement, which is not
// compressed). Checked on the unrolled and the tiled forms, wide enough to spill matrices.
TEST(GfniAsm, NoBroadcastOperandWithCompressedDisplacement) {
  const std::regex bad(R"(gf2p8affineqb\t\$0, -?[0-9]+\(%r[a-z0-9]+(,%r[a-z0-9]+,[0-9])?\)\{1to)");
  for (uint64_t max_products : {uint64_t(4096), uint64_t(0)})
    for (unsigned l : {8u, 16u}) {
      const Field f = field(l);
      std::mt19937_64 rng(9);
      codes::Matrix M(16, 64);
      for (uint64_t &a : M.a) a = 2 + rng() % (f.mask() - 1);
      jit::CompileRequest req{ir::KernelDesc{f, M, "k"}, target("x86_64-v4+gfni"),
                              ir::Strategy::kGfni, jit::OptLevel::kO3};
      llvm::LLVMContext ctx;
      ir::BuildOptions opts;
      opts.max_unrolled_products = max_products;
      auto mod = ir::build_kernel(ctx, req.desc, req.target, req.strategy, opts);
      ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
      auto tm = jit::make_target_machine(req.target, jit::OptLevel::kO3);
      ASSERT_TRUE(bool(tm));
      ASSERT_FALSE(bool(jit::optimize(**mod, **tm, jit::OptLevel::kO3)));
      auto text = jit::emit(**mod, **tm, jit::EmitKind::kAssembly);
      ASSERT_TRUE(bool(text)) << err_text(text.takeError());
      EXPECT_GE(count(*text, "gf2p8affineqb\t"), 1u);
      std::smatch hit;
      EXPECT_FALSE(std::regex_search(*text, hit, bad))
          << "gf" << l << (max_products ? " unrolled" : " tiled") << ": " << hit.str();
    }
}

TEST(GfniErrors, TargetsAndFieldsItCannotServe) {
  for (const char *name : {"x86_64-v4", "x86_64-v3", "aarch64+neon", "host-sse2"}) {
    auto info = test::resolve_target(name);
    if (!info) {
      llvm::consumeError(info.takeError());
      continue;
    }
    auto low = ir::make_lowering(ir::Strategy::kGfni, field(8), *info);
    ASSERT_FALSE(bool(low)) << name;
    const std::string msg = err_text(low.takeError());
    EXPECT_NE(msg.find("'gfni'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GFNI"), std::string::npos) << msg;
  }
  auto low = ir::make_lowering(ir::Strategy::kGfni, field(64), target("x86_64-v3+gfni"));
  ASSERT_FALSE(bool(low));
  const std::string msg = err_text(low.takeError());
  EXPECT_NE(msg.find("GF(2^64)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("512-bit"), std::string::npos) << msg;
  // Through the compiler: an error, never an unselectable intrinsic.
  jit::CompileRequest req{ir::KernelDesc{field(8), codes::Matrix(1, 1), "k"}, target("x86_64-v3"),
                          ir::Strategy::kGfni, jit::OptLevel::kO3};
  req.desc.coeffs.at(0, 0) = 3;
  auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
  ASSERT_FALSE(bool(text));
  llvm::consumeError(text.takeError());
}

}  // namespace
}  // namespace ecjit
