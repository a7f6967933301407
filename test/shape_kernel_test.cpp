// Shape kernels (coefficients as run-time data) against the reference codec, every strategy with a run-time form on every host tier.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/gf.h"
#include "codes/reference_codec.h"
#include "guarded_buffer.h"
#include "ir_builders/lowering.h"
#include "jit/kernel_compiler.h"
#include "kernel_check.h"
#include "strategy_cases.h"

namespace ecjit::test {
namespace {

using ShapeFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t, const uint8_t *);

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_shape(ShapeFn fn, const uint8_t *const *in, uint8_t *const *out, size_t len,
                const uint8_t *coeffs) {
  fn(in, out, len, coeffs);
}

codes::Field field(unsigned l) { return *codes::Field::make(l); }

// Every (shape strategy, field, host tier) with a run-time form here.
std::vector<StrategyCase> shape_cases() {
  return host_cases([](const ir::TargetInfo &info, unsigned l) {
    std::vector<ir::Strategy> out;
    for (ir::Strategy s : {ir::Strategy::kSplitTable, ir::Strategy::kGfni, ir::Strategy::kClmulInsn})
      if (ir::shape_kernel_supported(s, field(l), info)) out.push_back(s);
    return out;
  });
}

class ShapeKernelTest : public testing::TestWithParam<StrategyCase> {};

// Compiles the k-input, m-output shape kernel of the case with `output` mode.
std::unique_ptr<jit::CompiledKernel> compile_shape(const StrategyCase &c, unsigned k, unsigned m,
                                                   ir::OutputMode output, unsigned unroll = 1) {
  init_session();
  auto info = resolve_target(c.target);
  EXPECT_TRUE(bool(info));
  if (!info) return nullptr;
  jit::CompileRequest req{ir::KernelDesc{field(c.l), codes::Matrix(m, k), ""}, *info, c.strategy};
  static int counter = 0;
  req.desc.symbol = "shape_" + std::to_string(counter++);
  req.desc.runtime_coeffs = true;
  req.desc.output = output;
  req.unroll = unroll;
  auto k_or = jit::jit_kernel(*session(), req);
  EXPECT_TRUE(bool(k_or)) << (k_or ? "" : err_text(k_or.takeError()));
  return k_or ? std::move(*k_or) : nullptr;
}

// Runs the shape kernel with the prepared M on guarded buffers and compares with the
// reference (apply_matrix; accumulate: previous contents XOR the product).
void check_shape(const StrategyCase &c, const jit::CompiledKernel &kernel, const codes::Matrix &M,
                 ir::OutputMode output, size_t len, size_t gap, uint64_t seed) {
  const codes::Field f = field(c.l);
  std::vector<uint8_t> prepared;
  codes::prepare_matrix(ir::runtime_layout(c.strategy), f, M, &prepared);
  std::mt19937_64 rng(seed ^ len);
  std::vector<std::unique_ptr<GuardedBuffer>> in, out;
  std::vector<const uint8_t *> in_ptrs;
  std::vector<uint8_t *> out_ptrs;
  std::vector<std::vector<uint8_t>> want(M.rows, std::vector<uint8_t>(len));
  std::vector<uint8_t *> want_ptrs;
  for (unsigned i = 0; i < M.cols; ++i) {
    in.push_back(std::make_unique<GuardedBuffer>(len, gap));
    for (size_t b = 0; b < len; ++b) in.back()->data()[b] = uint8_t(rng());
    in_ptrs.push_back(in.back()->data());
  }
  for (unsigned r = 0; r < M.rows; ++r) {
    out.push_back(std::make_unique<GuardedBuffer>(len, gap));
    for (size_t b = 0; b < len; ++b) out.back()->data()[b] = uint8_t(rng());
    out_ptrs.push_back(out.back()->data());
    want_ptrs.push_back(want[r].data());
  }
  codes::apply_matrix(f, M, in_ptrs.data(), want_ptrs.data(), len);
  const size_t whole = len - len % f.bytes();  // a trailing partial symbol stays as it was
  for (unsigned r = 0; r < M.rows; ++r)
    for (size_t b = 0; b < len; ++b)
      if (b >= whole) want[r][b] = out_ptrs[r][b];
      else if (output == ir::OutputMode::kAccumulate) want[r][b] ^= out_ptrs[r][b];
  call_shape(reinterpret_cast<ShapeFn>(kernel.address()), in_ptrs.data(), out_ptrs.data(), len,
             prepared.data());
  for (unsigned r = 0; r < M.rows; ++r)
    for (size_t b = 0; b < len; ++b)
      ASSERT_EQ(out_ptrs[r][b], want[r][b])
          << ir::strategy_name(c.strategy) << " gf" << c.l << " " << c.target << " " << M.cols
          << "x" << M.rows << (output == ir::OutputMode::kAccumulate ? " accumulate" : "")
          << " len " << len << " gap " << gap << " output " << r << " byte " << b;
}

TEST_P(ShapeKernelTest, MatchesReferenceForEveryShapeAndLength) {
  const StrategyCase c = GetParam();
  const struct {
    unsigned k, m;
  } shapes[] = {{10, 4}, {1, 1}, {6, 3}, {3, 8}};
  uint64_t seed = 11;
  for (auto s : shapes)
    for (ir::OutputMode mode : {ir::OutputMode::kOverwrite, ir::OutputMode::kAccumulate}) {
      auto kernel = compile_shape(c, s.k, s.m, mode);
      ASSERT_TRUE(kernel);
      // Two matrices per kernel: the same code serves any coefficients.
      for (int round = 0; round < 2; ++round) {
        const codes::Matrix M = random_matrix(field(c.l), s.k, s.m, ++seed);
        for (size_t len : kLengths)
          for (size_t gap : {size_t(0), size_t(3)})
            check_shape(c, *kernel, M, mode, symbol_len(len, c.l), gap, seed);
      }
    }
}

// Unrolled steps: 2 and 4 vectors per input go to a lowering that takes them as one value
// (GFNI: each matrix applied to all of them, ir::shape_unroll's choice on AVX-512), 3 as
// separate copies of the body; shapes with few and many accumulators.
TEST_P(ShapeKernelTest, EveryUnrollMatchesReference) {
  const StrategyCase c = GetParam();
  const struct {
    unsigned unroll, k, m;
    ir::OutputMode mode;
  } cases[] = {{2, 10, 4, ir::OutputMode::kOverwrite},
               {4, 10, 4, ir::OutputMode::kOverwrite},
               {4, 3, 8, ir::OutputMode::kAccumulate},
               {3, 10, 4, ir::OutputMode::kAccumulate}};
  uint64_t seed = 29;
  for (auto s : cases) {
    auto kernel = compile_shape(c, s.k, s.m, s.mode, s.unroll);
    ASSERT_TRUE(kernel);
    const codes::Matrix M = random_matrix(field(c.l), s.k, s.m, ++seed);
    for (size_t len : {size_t(1), size_t(63), size_t(4651), size_t(10001)})  // tails, steps, last vectors
      check_shape(c, *kernel, M, s.mode, symbol_len(len, c.l), 3, seed);
  }
}

INSTANTIATE_TEST_SUITE_P(HostTiers, ShapeKernelTest, testing::ValuesIn(shape_cases()),
                         case_name<StrategyCase>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ShapeKernelTest);

// The layouts against independent definitions: nibble tables and GFNI blocks from Field::mul.
TEST(CoeffLayout, MatchesFieldMultiplication) {
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const codes::Field f = field(l);
    std::mt19937_64 rng(l);
    for (int i = 0; i < 50; ++i) {
      const uint64_t c = rng() & f.mask();
      if (l <= 16) {
        std::vector<uint8_t> t(codes::coeff_bytes(codes::CoeffLayout::kNibbleTables, f));
        codes::prepare_coeff(codes::CoeffLayout::kNibbleTables, f, c, t.data());
        for (unsigned n = 0; n < 2 * f.bytes(); ++n)
          for (uint64_t v = 0; v < 16; ++v) {
            const uint64_t p = f.mul_plain(c, v << (4 * n));
            if (l == 8) ASSERT_EQ(t[16 * n + v], uint8_t(p));
            else {  // pairs: tables i and i + 4 adjacent
              const unsigned lo = 2 * n, hi = 2 * n + 1;
              ASSERT_EQ(t[16 * (2 * (lo % 4) + lo / 4) + v], uint8_t(p));
              ASSERT_EQ(t[16 * (2 * (hi % 4) + hi / 4) + v], uint8_t(p >> 8));
            }
          }
      }
      // Block (i, j) applied to byte j of x gives byte i of c * x, for x with one byte set.
      for (unsigned bi = 0; bi < f.bytes(); ++bi)
        for (unsigned bj = 0; bj < f.bytes(); ++bj) {
          const uint64_t A = codes::gfni_block_matrix(f, c, bi, bj);
          for (unsigned bit = 0; bit < 8; ++bit) {
            const uint64_t p = f.mul_plain(c, uint64_t(1) << (8 * bj + bit));
            for (unsigned t = 0; t < 8; ++t)
              ASSERT_EQ((A >> (8 * (7 - t) + bit)) & 1, (p >> (8 * bi + t)) & 1);
          }
        }
      uint8_t q[8];
      codes::prepare_coeff(codes::CoeffLayout::kClmulConstant, f, c, q);
      uint64_t back = 0;
      for (int b = 7; b >= 0; --b) back = back << 8 | q[b];
      ASSERT_EQ(back, c);
    }
  }
}

// Targets this machine may not run: the shape kernels still compile to the instruction
// the strategy stands for.
TEST(ShapeKernelCodegen, ForeignTargetsUseTheirInstruction) {
  ASSERT_FALSE(bool(jit::init_llvm_targets()));
  const struct {
    const char *target;
    ir::Strategy strategy;
    unsigned l;
    const char *insn;
  } rows[] = {
      {"x86_64-v4+gfni", ir::Strategy::kGfni, 8, "vgf2p8affineqb"},
      {"x86_64-v4+gfni", ir::Strategy::kGfni, 64, "vgf2p8affineqb"},
      {"x86_64-v3+gfni", ir::Strategy::kGfni, 32, "vgf2p8affineqb"},
      {"x86_64-v4", ir::Strategy::kSplitTable, 16, "vpshufb"},
      {"x86_64-v4+vpclmulqdq", ir::Strategy::kClmulInsn, 64, "vpclmulqdq"},
      {"aarch64+neon", ir::Strategy::kSplitTable, 8, "tbl"},
      {"aarch64+aes", ir::Strategy::kClmulInsn, 32, "pmull"},
  };
  for (const auto &row : rows) {
    auto info = resolve_target(row.target);
    ASSERT_TRUE(bool(info)) << row.target;
    ASSERT_TRUE(ir::shape_kernel_supported(row.strategy, field(row.l), *info)) << row.target;
    jit::CompileRequest req{ir::KernelDesc{field(row.l), codes::Matrix(4, 10), "shape"}, *info,
                            row.strategy};
    req.desc.runtime_coeffs = true;
    auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
    ASSERT_TRUE(bool(text)) << row.target << ": " << err_text(text.takeError());
    EXPECT_NE(text->find(row.insn), std::string::npos) << row.target;
  }
}

TEST(ShapeKernelErrors, StrategiesWithoutARuntimeFormAndBadModesAreRejected) {
  auto info = resolve_target("x86_64-v3");
  ASSERT_TRUE(bool(info));
  llvm::LLVMContext ctx;
  ir::KernelDesc d{field(8), codes::Matrix(2, 3), "s"};
  d.runtime_coeffs = true;
  auto mod = ir::build_kernel(ctx, d, *info, ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(mod));
  EXPECT_NE(err_text(mod.takeError()).find("run-time-coefficient"), std::string::npos);
  d.output = ir::OutputMode::kVerify;
  mod = ir::build_kernel(ctx, d, *info, ir::Strategy::kSplitTable);
  ASSERT_FALSE(bool(mod));
  EXPECT_NE(err_text(mod.takeError()).find("shape kernel"), std::string::npos);
  EXPECT_FALSE(ir::shape_kernel_supported(ir::Strategy::kSplitTable, field(32), *info));
  EXPECT_FALSE(ir::shape_kernel_supported(ir::Strategy::kGfni, field(8), *info));
}

}  // namespace
}  // namespace ecjit::test
