// split-table tests: nibble-table kernels equal the reference codec; targets, auto choice, asm, errors.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codes/gf.h"
#include "codes/linear_code.h"
#include "codes/matrix.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "guarded_buffer.h"
#include "jit_test_util.h"
#include "kernel_check.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/lowering.h"
#include "ir_builders/split_table.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_features.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit {
namespace {

using test::err_text;
using test::init_session;
using test::Kernel;
using test::resolve_target;
using test::session;

using codes::Field;
using codes::Matrix;
using test::GuardedBuffer;
using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

using test::kLengths;
using test::random_matrix;
using test::symbol_len;

void compile(const Field &f, const Matrix &M, const std::string &target_name,
             jit::OptLevel level, test::Kernel *out, ir::BuildOptions options = {}) {
  test::compile_kernel(f, M, target_name, ir::Strategy::kSplitTable, level, out, options);
}

void check(const Field &f, const Matrix &M, const test::Kernel &kernel, const std::string &what,
           size_t len, size_t gap, uint64_t seed) {
  test::check_kernel(f, M, kernel, what, len, gap, seed);
}


Field field(unsigned l) {
  auto f = Field::make(l);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return *f;
}


ir::TargetInfo target(const std::string &name) {
  auto info = resolve_target(name);
  EXPECT_TRUE(bool(info)) << name;
  if (!info) {
    ADD_FAILURE() << name << ": " << err_text(info.takeError());
    return {};
  }
  return *info;
}

// The host tiers this machine can run split-table on (the 128-bit tier needs SSSE3).
std::vector<std::string> split_table_host_tiers() {
  std::vector<std::string> out;
  for (const char *t : {"host", "host-avx2"})
    if (ir::split_table_shuffle(target(t)) != ir::ByteShuffle::kNone) out.push_back(t);
  return out;
}

// ---------------------------------------------------------------------------------------
// Names, features, shuffle choice, auto, errors (no JIT).

TEST(SplitTableStrategy, NameAndKnownList) {
  EXPECT_STREQ(ir::strategy_name(ir::Strategy::kSplitTable), "split-table");
  ASSERT_TRUE(ir::parse_strategy("split-table").has_value());
  EXPECT_EQ(*ir::parse_strategy("split-table"), ir::Strategy::kSplitTable);
  const std::vector<std::string> known = ir::known_strategies();
  EXPECT_EQ(known, (std::vector<std::string>{"auto", "clmul-shift", "split-table", "gfni", "clmul-insn",
                                              "clmul-mixed"}));
  for (const std::string &name : known) EXPECT_TRUE(ir::parse_strategy(name).has_value()) << name;
}

TEST(SplitTableFeatures, CpuImpliedAndMasked) {
  EXPECT_TRUE(ir::has_feature(target("x86_64-v3"), "avx2"));
  EXPECT_TRUE(ir::has_feature(target("x86_64-v3"), "ssse3"));  // from the CPU name only
  EXPECT_TRUE(ir::has_feature(target("x86_64-v2"), "ssse3"));
  EXPECT_FALSE(ir::has_feature(target("x86_64-v2"), "avx2"));
  EXPECT_FALSE(ir::has_feature(target("x86_64"), "ssse3"));
  EXPECT_TRUE(ir::has_feature(target("x86_64-v4"), "avx512bw"));
  // Masking a feature masks what depends on it, as LLVM does.
  EXPECT_FALSE(ir::has_feature(target("x86_64-v3-sse3"), "ssse3"));
  EXPECT_FALSE(ir::has_feature(target("x86_64-v3-sse3"), "avx2"));
  EXPECT_TRUE(ir::has_feature(target("x86_64+ssse3"), "ssse3"));
  EXPECT_TRUE(ir::has_feature(target("aarch64"), "neon"));
  EXPECT_FALSE(ir::has_feature(target("aarch64-neon"), "neon"));
  EXPECT_FALSE(ir::has_feature(target("host-sse2"), "ssse3"));
}

TEST(SplitTableShuffle, PerTarget) {
  using S = ir::ByteShuffle;
  const std::pair<const char *, S> rows[] = {
      {"x86_64", S::kNone},           {"x86_64+ssse3", S::kSsse3}, {"x86_64-v2", S::kSsse3},
      {"x86_64-v3", S::kAvx2},        {"x86_64-v4", S::kAvx512bw}, {"x86_64-v4-avx512bw", S::kAvx2},
      {"x86_64-v3-sse3", S::kNone},   {"aarch64", S::kNeonTbl},    {"aarch64+neon", S::kNeonTbl},
      {"armv7", S::kNone},            {"riscv64", S::kNone},       {"riscv64-v", S::kNone},
      {"hexagon-v68+hvx", S::kNone},  {"host-sse2", S::kNone},
  };
  for (const auto &[name, want] : rows) {
    auto info = resolve_target(name);
    if (!info) {  // a backend this LLVM lacks
      std::printf("skipping %s: %s\n", name, err_text(info.takeError()).c_str());
      continue;
    }
    EXPECT_EQ(int(ir::split_table_shuffle(*info)), int(want))
        << name << " (vector_bits " << info->vector_bits << ", cpu " << info->cpu << ")";
  }
}

TEST(SplitTableAuto, PicksSplitTableWhereItApplies) {
  for (const char *name : {"x86_64-v2", "x86_64-v3", "x86_64-v4", "aarch64+neon"}) {
    const ir::TargetInfo t = target(name);
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, 8), ir::Strategy::kSplitTable) << name;
    // GF(2^16) only with AVX-512BW (with AVX2, clmul-shift is faster).
    const bool lanes = t.vector_bits >= 512;
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, 16),
              lanes ? ir::Strategy::kSplitTable : ir::Strategy::kClmulShift) << name;
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, 32), ir::Strategy::kClmulShift) << name;
    EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, t, 64), ir::Strategy::kClmulShift) << name;
  }
  for (const char *name : {"x86_64", "host-sse2", "armv7", "riscv64-v"}) {
    auto t = resolve_target(name);
    if (!t) {
      llvm::consumeError(t.takeError());
      continue;
    }
    for (unsigned l : {8u, 16u, 32u, 64u})
      EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kAuto, *t, l), ir::Strategy::kClmulShift)
          << name << " gf" << l;
  }
  // An explicit choice is never overridden.
  EXPECT_EQ(jit::resolve_strategy(ir::Strategy::kClmulShift, target("x86_64-v3"), 8),
            ir::Strategy::kClmulShift);
}

TEST(SplitTableErrors, FieldsAndTargetsItCannotServe) {
  for (unsigned l : {32u, 64u}) {
    auto low = ir::make_lowering(ir::Strategy::kSplitTable, field(l), target("x86_64-v3"));
    ASSERT_FALSE(bool(low)) << l;
    const std::string msg = err_text(low.takeError());
    EXPECT_NE(msg.find("GF(2^" + std::to_string(l) + ")"), std::string::npos) << msg;
  }
  for (const char *name : {"host-sse2", "x86_64"}) {
    auto low = ir::make_lowering(ir::Strategy::kSplitTable, field(8), target(name));
    ASSERT_FALSE(bool(low)) << name;
    const std::string msg = err_text(low.takeError());
    EXPECT_NE(msg.find("split-table"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte shuffle"), std::string::npos) << msg;
  }
  // Through build_kernel: an error, never a crash or an unselectable intrinsic.
  llvm::LLVMContext ctx;
  const Field f = field(8);
  auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, random_matrix(f, 3, 2, 1), "k"},
                              target("host-sse2"), ir::Strategy::kSplitTable);
  ASSERT_FALSE(bool(mod));
  llvm::consumeError(mod.takeError());
  for (unsigned l : {8u, 16u}) {
    auto ok = ir::make_lowering(ir::Strategy::kSplitTable, field(l), target("x86_64-v2"));
    EXPECT_TRUE(bool(ok)) << (ok ? "" : err_text(ok.takeError()));
  }
}

// ---------------------------------------------------------------------------------------
// Assembly for targets this machine may not run: the shuffle instruction is there.

// m x k with every coefficient in [2, 2^l): every entry is a table product.
Matrix dense_matrix(const Field &f, unsigned k, unsigned m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Matrix M(m, k);
  for (uint64_t &a : M.a) a = 2 + rng() % (f.mask() - 1);
  return M;
}

std::string assembly(const std::string &target_name, unsigned l, unsigned k, unsigned m) {
  const Field f = field(l);
  jit::CompileRequest req{ir::KernelDesc{f, dense_matrix(f, k, m, 42), "k"},
                          target(target_name), ir::Strategy::kSplitTable, jit::OptLevel::kO3};
  auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
  EXPECT_TRUE(bool(text)) << target_name;
  if (!text) {
    ADD_FAILURE() << err_text(text.takeError());
    return {};
  }
  return *text;
}

size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// RS(10,4) shape, 40 table products in the vector loop: GF(2^8) two lookups each; GF(2^16)
// four with per-half tables (AVX2, AVX-512, NEON TBL2), eight on SSSE3.
TEST(SplitTableAsm, ShuffleInstructionPerTarget) {
  for (unsigned l : {8u, 16u}) {
    const size_t lookups = 40 * (l == 8 ? 2 : 4);
    const std::string neon = assembly("aarch64+neon", l, 10, 4);
    EXPECT_GE(count(neon, "\ttbl\t"), lookups) << "gf" << l << "\n" << neon;
    const std::string v3 = assembly("x86_64-v3", l, 10, 4);
    EXPECT_GE(count(v3, "vpshufb\t"), lookups) << "gf" << l << "\n" << v3;
    EXPECT_NE(v3.find("%ymm"), std::string::npos);
    const std::string v4 = assembly("x86_64-v4", l, 10, 4);
    EXPECT_GE(count(v4, "vpshufb\t"), lookups) << "gf" << l;
    EXPECT_NE(v4.find("%zmm"), std::string::npos);
    const std::string v2 = assembly("x86_64-v2", l, 10, 4);
    EXPECT_GE(count(v2, "pshufb\t"), l == 8 ? lookups : 2 * lookups) << "gf" << l;
    // Only table lookups, no shift-and-XOR multiply: at most the index shifts (one per
    // input for GF(2^8); the plane split may add a few for GF(2^16)).
    const size_t shifts = count(v3, "vpsrlw\t") + count(v3, "vpsllw\t");
    EXPECT_LE(shifts, 2 * 10u + 8) << "gf" << l;
  }
  // GF(2^16) on NEON looks the two halves up at once: TBL with a two-register table.
  const std::string neon16 = assembly("aarch64+neon", 16, 2, 1);
  size_t tbl2 = 0;
  std::istringstream lines(neon16);
  for (std::string line; std::getline(lines, line);)
    if (line.find("\ttbl\t") != std::string::npos && line.find(".16b, v") != std::string::npos &&
        line.find("{ v") != std::string::npos && line.find(".16b, v") > line.find("{ v"))
      ++tbl2;
  EXPECT_GE(tbl2, 4u) << neon16;
}

// The one-vector loop keeps its buffer pointers where they are. When the k + m pointers
// reached the loop as phis (the caller's or the short-shard stack buffers), LLVM 19's
// register allocator, out of registers past about 12 of them, rotated every pointer one
// register further on each iteration: 23 register moves per vector for RS(10,4).
TEST(SplitTableAsm, VectorLoopDoesNotRotateItsPointers) {
  auto info = resolve_target("x86_64-v3");
  ASSERT_TRUE(bool(info));
  const Field f = field(8);
  struct Row {
    unsigned k, m;
    bool shape;  // run-time coefficients
  };
  for (const Row row : {Row{10, 4, false}, Row{12, 4, false}, Row{10, 1, true},
                        Row{12, 4, true}, Row{8, 4, false}}) {
    jit::CompileRequest req{ir::KernelDesc{f, dense_matrix(f, row.k, row.m, 7), "k"}, *info,
                            ir::Strategy::kSplitTable, jit::OptLevel::kO3};
    req.desc.runtime_coeffs = row.shape;
    auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
    ASSERT_TRUE(bool(text)) << err_text(text.takeError());
    // The vector loop: the largest block that branches back to itself (the others that do
    // are the short-shard byte-copy loops).
    std::istringstream lines(*text);
    std::string label;
    std::vector<std::string> block, loop;
    auto close_block = [&] {
      if (!label.empty() && !block.empty() && block.back().rfind("\tj", 0) == 0 &&
          block.back().find("\t" + label) != std::string::npos && block.size() > loop.size())
        loop = block;
      block.clear();
    };
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(".LBB", 0) == 0 || line.rfind("# %bb.", 0) == 0) {  // a block starts
        close_block();
        label = line.substr(0, line.find(':'));
      } else if (line.rfind("\t", 0) == 0 && line.rfind("\t.", 0) != 0) {
        block.push_back(line);
        if (line.rfind("\tj", 0) == 0) {  // a branch ends the block (the next has no label)
          close_block();
          label.clear();
        }
      }
    }
    close_block();
    ASSERT_GT(loop.size(), 20u) << "no vector loop found\n" << *text;
    size_t moves = 0;  // movq %rXX, %rYY: one general-purpose register copied to another
    for (const std::string &line : loop)
      if (line.rfind("\tmovq\t%r", 0) == 0 && line.find(", %r") != std::string::npos &&
          line.find('(') == std::string::npos)
        ++moves;
    EXPECT_LE(moves, 2u) << "k=" << row.k << " m=" << row.m << " shape=" << row.shape << "\n"
                         << *text;
  }
}

// ---------------------------------------------------------------------------------------
// JIT equivalence with codes::apply_matrix.




using Case = test::KernelCase;
using test::case_name;

// Shapes (1,1)..(20,8): a sample with every k in 1..4 and the typical ones.
std::vector<Case> cases() {
  const std::pair<unsigned, unsigned> shapes[] = {{1, 1}, {2, 1}, {1, 3}, {2, 2}, {3, 2},
                                                  {4, 3}, {6, 3}, {8, 4}, {10, 4}, {12, 4},
                                                  {16, 6}, {20, 8}, {3, 12}};
  std::vector<Case> out;
  for (const std::string &t : split_table_host_tiers())
    for (unsigned l : {8u, 16u})
      for (auto [k, m] : shapes) out.push_back({l, k, m, t});
  return out;
}

class SplitTableVsReference : public testing::TestWithParam<Case> {};

TEST_P(SplitTableVsReference, O3AllLengthsGuarded) {
  const Case &c = GetParam();
  const Field f = field(c.l);
  const uint64_t seed = 7000 + 100 * c.k + c.m + c.l;
  const Matrix M = random_matrix(f, c.k, c.m, seed);
  Kernel kernel;
  ASSERT_NO_FATAL_FAILURE(compile(f, M, c.target, jit::OptLevel::kO3, &kernel));
  for (size_t raw : kLengths) {
    const size_t len = symbol_len(raw, c.l);
    ASSERT_NO_FATAL_FAILURE(check(f, M, kernel, c.target, len, 0, seed));
  }
  // Odd start addresses, one byte between the end and the guard page.
  ASSERT_NO_FATAL_FAILURE(check(f, M, kernel, c.target, symbol_len(4651, c.l), 1, seed + 1));
}

INSTANTIATE_TEST_SUITE_P(Host, SplitTableVsReference, testing::ValuesIn(cases()), case_name<test::KernelCase>);

// Every nonzero constant once (one input, one output per constant: every table), over
// inputs holding every byte value, more outputs than one pass of accumulators holds; O0
// (nothing shared by CSE) and a main loop unrolled to 2 and 3 vectors.
TEST(SplitTableVariants, EveryConstantO0AndUnrolled) {
  const std::vector<std::string> tiers = split_table_host_tiers();
  if (tiers.empty()) GTEST_SKIP() << "no split-table tier on this machine";
  const Field f = field(8);
  Matrix all(255, 1);
  for (unsigned r = 0; r < 255; ++r) all.at(r, 0) = r + 1;
  for (const std::string &t : tiers) {
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(compile(f, all, t, jit::OptLevel::kO3, &kernel));
    for (size_t len : {size_t(256), size_t(1000), size_t(4097)})
      ASSERT_NO_FATAL_FAILURE(check(f, all, kernel, t + " all constants", len, 0, 3));
  }
  for (unsigned l : {8u, 16u}) {
    const Field g = field(l);
    const Matrix M = random_matrix(g, 10, 4, 99 + l);
    for (const std::string &t : tiers) {
      Kernel o0;
      ASSERT_NO_FATAL_FAILURE(compile(g, M, t, jit::OptLevel::kO0, &o0));
      for (unsigned unroll : {2u, 3u}) {
        Kernel unrolled;
        ir::BuildOptions opts;
        opts.unroll = unroll;
        ASSERT_NO_FATAL_FAILURE(compile(g, M, t, jit::OptLevel::kO3, &unrolled, opts));
        for (size_t raw : kLengths)
          ASSERT_NO_FATAL_FAILURE(check(g, M, unrolled, t + " unroll " + std::to_string(unroll),
                                        symbol_len(raw, l), 0, 11));
      }
      for (size_t raw : kLengths)
        ASSERT_NO_FATAL_FAILURE(check(g, M, o0, t + " O0", symbol_len(raw, l), 0, 12));
    }
  }
}

// GF(2^16) products cover every nibble position: one input, constants that are powers of
// two and random, data that walks all 65536 symbols.
TEST(SplitTableVariants, Gf16EverySymbol) {
  const std::vector<std::string> tiers = split_table_host_tiers();
  if (tiers.empty()) GTEST_SKIP() << "no split-table tier on this machine";
  const Field f = field(16);
  Matrix M(20, 1);
  std::mt19937_64 rng(5);
  for (unsigned r = 0; r < 20; ++r) M.at(r, 0) = r < 15 ? uint64_t(2) << r : 2 + rng() % 0xFFFE;
  for (const std::string &t : tiers) {
    Kernel kernel;
    ASSERT_NO_FATAL_FAILURE(compile(f, M, t, jit::OptLevel::kO3, &kernel));
    const size_t len = 2 * 65536;
    GuardedBuffer in(len);
    std::vector<std::unique_ptr<GuardedBuffer>> outs;
    for (unsigned r = 0; r < 20; ++r) outs.push_back(std::make_unique<GuardedBuffer>(len));
    for (size_t s = 0; s < 65536; ++s) {  // little-endian symbols 0..65535
      in.data()[2 * s] = uint8_t(s);
      in.data()[2 * s + 1] = uint8_t(s >> 8);
    }
    const uint8_t *ip[1] = {in.data()};
    uint8_t *op[20];
    for (unsigned r = 0; r < 20; ++r) op[r] = outs[r]->data();
    kernel.fn(ip, op, len);
    for (unsigned r = 0; r < 20; ++r)
      for (size_t s = 0; s < 65536; ++s) {
        const uint64_t got = op[r][2 * s] | uint64_t(op[r][2 * s + 1]) << 8;
        ASSERT_EQ(got, f.mul(M.at(r, 0), s)) << t << " constant " << M.at(r, 0) << " symbol " << s;
      }
  }
}

// ---------------------------------------------------------------------------------------
// Through the public API: what "auto" picks, and the codec's output.

std::shared_ptr<Jit> make_jit(const std::string &t, const std::string &strategy) {
  JitOptions o;
  o.target = t;
  o.strategy = strategy;
  o.tune = false;         // these tests check the static choice of "auto"
  o.disk_cache = false;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << t << ": " << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

// With tuning off, "auto" is jit::resolve_strategy's static choice: split-table wherever it is
// preferred and the CPU has no GFNI (gfni comes first there), clmul-shift without a vector unit.
TEST(SplitTableApi, AutoPicksSplitTableOnHostAndClmulShiftOnScalar) {
  for (const char *t : {"host", "host-gfni", "host-avx2,-gfni"}) {
    auto info = resolve_target(t);
    ASSERT_TRUE(bool(info)) << err_text(info.takeError());
    auto jit = make_jit(t, "auto");
    ASSERT_TRUE(jit);
    for (unsigned l : {8u, 16u, 32u}) {
      auto c = jit->codec("rs-vand:k=10,m=4,gf=" + std::to_string(l));
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      jit->wait_for_tuning();  // the codec's own encoder (built-in kernels serve until then)
      const std::string want =
          ir::strategy_name(jit::resolve_strategy(ir::Strategy::kAuto, *info, l));
      EXPECT_EQ((*c)->encoder_info().strategy, want) << t << " gf" << l;
      if (!ir::has_feature(*info, "gfni") && ir::split_table_preferred(field(l), *info))
        EXPECT_EQ(want, "split-table") << t << " gf" << l;
    }
  }
  auto scalar = make_jit("host-sse2", "auto");
  ASSERT_TRUE(scalar);
  for (const char *spec : {"rs-vand:k=10,m=4,gf=8", "isal-cauchy:k=10,m=4", "rs-vand:k=10,m=4,gf=16"}) {
    auto s = scalar->codec(spec);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ((*s)->encoder_info().strategy, "clmul-shift") << spec;
  }
  if (ir::has_feature(target("host-avx2,-gfni"), "ssse3")) {  // the 128-bit tier: GF(2^8) only
    auto sse = make_jit("host-avx2,-gfni", "auto");
    ASSERT_TRUE(sse);
    auto c8 = sse->codec("rs-vand:k=10,m=4,gf=8");
    auto c16 = sse->codec("rs-vand:k=10,m=4,gf=16");
    ASSERT_TRUE(c8.ok() && c16.ok());
    sse->wait_for_tuning();  // the codecs' own encoders (the 128-bit built-in kernels serve until then)
    EXPECT_EQ((*c8)->encoder_info().strategy, "split-table");
    EXPECT_EQ((*c16)->encoder_info().strategy, "clmul-shift");
  }
}

TEST(SplitTableApi, ForcedOnScalarTierFailsWithMessage) {
  auto jit = make_jit("host-sse2", "split-table");
  ASSERT_TRUE(jit);
  auto c = jit->codec("rs-vand:k=4,m=2,gf=8");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().to_string().find("split-table"), std::string::npos) << c.status().to_string();
  JitOptions bad;
  bad.strategy = "split_table";
  auto j = Jit::create(bad);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(j.status().to_string().find("split-table"), std::string::npos)  // the known list
      << j.status().to_string();
}

TEST(SplitTableApi, EncodeAndReconstructMatchReference) {
  for (const std::string &t : split_table_host_tiers()) {
    auto jit = make_jit(t, "split-table");
    ASSERT_TRUE(jit);
    for (const char *spec : {"isal-cauchy:k=10,m=4", "rs-vand:k=10,m=4,gf=16"}) {
      auto codec = jit->codec(spec);
      ASSERT_TRUE(codec.ok()) << codec.status().to_string();
      const Codec &cd = **codec;
      EXPECT_EQ(cd.encoder_info().strategy, "split-table");
      auto code = codes::build_code(spec);
      ASSERT_TRUE(code.ok());
      for (size_t raw : kLengths) {
        const size_t len = symbol_len(raw, code->field.bits());
        std::vector<std::unique_ptr<GuardedBuffer>> bufs;
        std::vector<const uint8_t *> data;
        std::vector<uint8_t *> parity, all;
        std::mt19937_64 rng(len);
        for (unsigned i = 0; i < cd.n(); ++i) {
          bufs.push_back(std::make_unique<GuardedBuffer>(len));
          for (size_t b = 0; b < len; ++b) bufs.back()->data()[b] = uint8_t(rng());
          all.push_back(bufs.back()->data());
          if (i < cd.k()) data.push_back(bufs.back()->data());
          else parity.push_back(bufs.back()->data());
        }
        std::vector<std::vector<uint8_t>> want(cd.m(), std::vector<uint8_t>(len));
        std::vector<uint8_t *> wp;
        for (auto &w : want) wp.push_back(w.data());
        ASSERT_TRUE(codes::ref_encode(*code, data.data(), wp.data(), len).ok());
        ASSERT_TRUE(cd.encode(data, parity, len).ok());
        for (unsigned r = 0; r < cd.m(); ++r)
          ASSERT_EQ(0, memcmp(parity[r], want[r].data(), len))
              << t << " " << spec << " len " << len << " parity " << r;
        // Lose the first four data shards and rebuild them (a split-table decoder).
        std::vector<std::vector<uint8_t>> saved;
        std::vector<bool> present(cd.n(), true);
        for (unsigned i = 0; i < 4; ++i) {
          saved.emplace_back(all[i], all[i] + len);
          memset(all[i], 0, len);
          present[i] = false;
        }
        ASSERT_TRUE(cd.reconstruct(all, present, len).ok());
        for (unsigned i = 0; i < 4; ++i)
          ASSERT_EQ(0, memcmp(all[i], saved[i].data(), len)) << t << " " << spec << " shard " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ecjit
