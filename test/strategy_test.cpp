// Every strategy x field x host tier the machine runs, JIT-compiled and compared with the reference.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ir_builders/strategy.h"
#include "ir_builders/tiled_kernel.h"
#include "jit/tuner.h"
#include "jit_test_util.h"
#include "kernel_check.h"
#include "strategy_cases.h"

namespace ecjit {
namespace {

using codes::Field;
using codes::Matrix;
using test::Kernel;
using test::host_tiers;
using test::StrategyCase;


Field field(unsigned l) { return *Field::make(l); }


class StrategyVsReference : public testing::TestWithParam<StrategyCase> {};

// Shapes from one product to wider than one pass of accumulators, every odd length, buffers
// flush against a guard page and one byte short of it.
TEST_P(StrategyVsReference, ShapesLengthsGuardPages) {
  const StrategyCase &c = GetParam();
  const Field f = field(c.l);
  const std::pair<unsigned, unsigned> shapes[] = {{1, 1}, {3, 2}, {10, 4}, {16, 6}, {3, 12}};
  for (auto [k, m] : shapes) {
    const uint64_t seed = 9100 + 100 * k + m + c.l;
    const Matrix M = test::random_matrix(f, k, m, seed);
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(
        test::compile_kernel(f, M, c.target, c.strategy, jit::OptLevel::kO3, &kernel));
    const std::string what = std::string(ir::strategy_name(c.strategy)) + " " + c.target;
    for (size_t raw : test::kLengths)
      ASSERT_NO_FATAL_FAILURE(
          test::check_kernel(f, M, kernel, what, test::symbol_len(raw, c.l), 0, seed));
    ASSERT_NO_FATAL_FAILURE(
        test::check_kernel(f, M, kernel, what, test::symbol_len(4651, c.l), 1, seed + 1));
  }
}

// O0 (nothing shared by CSE) and a main loop unrolled to 2, 3 and 4 vectors, RS(10,4) shape
// (and a narrow 4 x 2 one at 4), buffers flush against a guard page and one byte short.
TEST_P(StrategyVsReference, O0AndUnrolled) {
  const StrategyCase &c = GetParam();
  const Field f = field(c.l);
  const Matrix M = test::random_matrix(f, 10, 4, 77 + c.l);
  const std::string what = std::string(ir::strategy_name(c.strategy)) + " " + c.target;
  Kernel o0;
  ASSERT_NO_FATAL_FAILURE(test::compile_kernel(f, M, c.target, c.strategy, jit::OptLevel::kO0, &o0));
  for (size_t raw : test::kLengths)
    ASSERT_NO_FATAL_FAILURE(
        test::check_kernel(f, M, o0, what + " O0", test::symbol_len(raw, c.l), 0, 5));
  // The tuner tries 2 and 4 (jit/tuner.h); 3 leaves a remainder of odd vector counts. The
  // narrow 4 x 2 shape is where 4 is chosen.
  const Matrix narrow = test::random_matrix(f, 4, 2, 78 + c.l);
  for (unsigned unroll : {2u, 3u, 4u}) {
    ir::BuildOptions opts;
    opts.unroll = unroll;
    for (const Matrix *shape : {&M, &narrow}) {
      if (shape == &narrow && unroll != 4) continue;
      Kernel k;
      ASSERT_NO_FATAL_FAILURE(
          test::compile_kernel(f, *shape, c.target, c.strategy, jit::OptLevel::kO3, &k, opts));
      const std::string name = what + " unroll " + std::to_string(unroll);
      for (size_t raw : test::kLengths)
        ASSERT_NO_FATAL_FAILURE(
            test::check_kernel(f, *shape, k, name, test::symbol_len(raw, c.l), 0, 6));
      ASSERT_NO_FATAL_FAILURE(
          test::check_kernel(f, *shape, k, name, test::symbol_len(10001, c.l), 1, 7));
    }
  }
}

// Constants that exercise every bit position: for GF(2^8) every nonzero constant once (255
// outputs of one input); wider fields every power of two, all-ones and random constants.
TEST_P(StrategyVsReference, EveryBitOfTheConstant) {
  const StrategyCase &c = GetParam();
  const Field f = field(c.l);
  std::vector<uint64_t> constants;
  if (c.l == 8) {
    for (uint64_t a = 1; a < 256; ++a) constants.push_back(a);
  } else {
    for (unsigned b = 0; b < c.l; ++b) constants.push_back(uint64_t(1) << b);
    constants.push_back(f.mask());
    std::mt19937_64 rng(c.l);
    for (int i = 0; i < 16; ++i) constants.push_back(1 + rng() % f.mask());
  }
  Matrix M(unsigned(constants.size()), 1);
  for (unsigned r = 0; r < M.rows; ++r) M.at(r, 0) = constants[r];
  Kernel kernel;
  ASSERT_NO_FATAL_FAILURE(
      test::compile_kernel(f, M, c.target, c.strategy, jit::OptLevel::kO3, &kernel));
  for (size_t len : {size_t(256), size_t(1000), size_t(4097)})
    ASSERT_NO_FATAL_FAILURE(test::check_kernel(f, M, kernel,
                                               std::string(ir::strategy_name(c.strategy)) + " " + c.target,
                                               test::symbol_len(len, c.l), 0, 3));
}

// The tiled form for wide codes (coefficients as a table, loops over output tiles and
// inputs), forced on small shapes: one partial tile, full tiles plus a partial one, odd
// lengths, guard pages, the staged path for shards shorter than a vector.
TEST_P(StrategyVsReference, TiledForm) {
  const StrategyCase &c = GetParam();
  const Field f = field(c.l);
  ir::BuildOptions tiled;
  tiled.max_unrolled_products = 0;
  const std::pair<unsigned, unsigned> shapes[] = {{1, 1}, {5, 3}, {10, 4}, {3, 17}, {33, 9}};
  for (auto [k, m] : shapes) {
    const uint64_t seed = 5100 + 100 * k + m + c.l;
    const Matrix M = test::random_matrix(f, k, m, seed);
    ASSERT_TRUE(ir::kernel_is_tiled(ir::KernelDesc{f, M, "k"}, tiled) ||
                std::all_of(M.a.begin(), M.a.end(), [](uint64_t a) { return a < 2; }));
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(
        test::compile_kernel(f, M, c.target, c.strategy, jit::OptLevel::kO3, &kernel, tiled));
    const std::string what = std::string(ir::strategy_name(c.strategy)) + " tiled " + c.target;
    for (size_t raw : test::kLengths)
      ASSERT_NO_FATAL_FAILURE(
          test::check_kernel(f, M, kernel, what, test::symbol_len(raw, c.l), 0, seed));
    ASSERT_NO_FATAL_FAILURE(
        test::check_kernel(f, M, kernel, what, test::symbol_len(4651, c.l), 1, seed + 1));
  }
}

// A first stage (KernelDesc::pre, the two-stage decode): random pre (t x k) and coeffs
// (m x (k + t)) with zeros and ones, against the scalar two-step evaluation: every odd length,
// guard pages, a main loop unrolled to 2, and the tiled form (which composes the stages).
TEST_P(StrategyVsReference, TwoStageForm) {
  const StrategyCase &c = GetParam();
  const Field f = field(c.l);
  const std::string what = std::string(ir::strategy_name(c.strategy)) + " two-stage " + c.target;
  struct Shape {
    unsigned k, t, m;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{10, 4, 4}, Shape{6, 2, 7}}) {
    const uint64_t seed = 7300 + 100 * s.k + 10 * s.t + s.m + c.l;
    ir::KernelDesc desc{f, test::random_matrix(f, s.k + s.t, s.m, seed), ""};
    desc.pre = test::random_matrix(f, s.k, s.t, seed + 1);
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(
        test::compile_desc(desc, c.target, c.strategy, jit::OptLevel::kO3, &kernel));
    for (size_t raw : test::kLengths)
      ASSERT_NO_FATAL_FAILURE(test::check_kernel(f, desc.coeffs, kernel, what,
                                                 test::symbol_len(raw, c.l), 0, seed, desc.pre));
    ASSERT_NO_FATAL_FAILURE(test::check_kernel(f, desc.coeffs, kernel, what,
                                               test::symbol_len(4651, c.l), 1, seed + 1, desc.pre));
  }
  ir::KernelDesc desc{f, test::random_matrix(f, 13, 3, 61 + c.l), ""};
  desc.pre = test::random_matrix(f, 10, 3, 62 + c.l);
  ir::BuildOptions unrolled;
  unrolled.unroll = 2;
  ir::BuildOptions tiled;
  tiled.max_unrolled_products = 0;
  ASSERT_TRUE(ir::kernel_is_tiled(desc, tiled));
  for (const ir::BuildOptions &opts : {unrolled, tiled}) {
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(
        test::compile_desc(desc, c.target, c.strategy, jit::OptLevel::kO3, &kernel, opts));
    const std::string how = what + (opts.unroll > 1 ? " unroll 2" : " tiled");
    for (size_t raw : test::kLengths)
      ASSERT_NO_FATAL_FAILURE(test::check_kernel(f, desc.coeffs, kernel, how,
                                                 test::symbol_len(raw, c.l), 0, 8, desc.pre));
  }
}

INSTANTIATE_TEST_SUITE_P(Host, StrategyVsReference, testing::ValuesIn(test::strategy_cases()), test::case_name<StrategyCase>);

// The sweep is not empty: clmul-shift everywhere, more where the CPU has them.
TEST(StrategyCases, EveryFieldAndTierHasACandidate) {
  for (const std::string &t : host_tiers()) {
    auto info = test::resolve_target(t);
    ASSERT_TRUE(bool(info));
    for (unsigned l : {8u, 16u, 32u, 64u}) {
      const auto s = jit::candidate_strategies(*info, l);
      ASSERT_FALSE(s.empty()) << t << " gf" << l;
      EXPECT_EQ(s.front(), ir::Strategy::kClmulShift) << t << " gf" << l;
    }
  }
  std::printf("%zu strategy x field x tier cases on this machine\n", test::strategy_cases().size());
}

}  // namespace
}  // namespace ecjit
