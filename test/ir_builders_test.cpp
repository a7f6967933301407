// ir_builders tests: generated kernels (verified, optimized, JIT-compiled) against the reference codec.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codes/constructions.h"
#include "codes/gf.h"
#include "codes/matrix.h"
#include "codes/reference_codec.h"
#include "ir_builders/clmul_shift.h"
#include "ir_builders/ir_stats.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/lowering.h"
#include "jit/decoder_planner.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "jit_test_util.h"
#include "kernel_check.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
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
using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

// The three host tiers: widest vectors, AVX2 masked off, and all SIMD masked off (scalar:
// "-sse2" clears every x86 vector feature, TargetSpec resolves vector_bits = 64).
const char *const kHostTargets[] = {"host", "host-avx2", "host-sse2"};
const size_t kLengths[] = {1, 15, 16, 31, 4651, 10001, 100003};

Field field(unsigned l) {
  auto f = Field::make(l);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return *f;
}


// Rounded down to whole symbols, at least one symbol.
size_t symbol_len(size_t len, unsigned l) {
  const size_t s = l / 8;
  return len < s ? s : len - len % s;
}

// m x k, fixed seed; about 15% zeros and 15% ones so the skeleton's special cases are hit.
Matrix random_matrix(const Field &f, unsigned k, unsigned m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Matrix M(m, k);
  for (uint64_t &a : M.a) {
    const unsigned pick = unsigned(rng() % 100);
    if (pick < 15)
      a = 0;
    else if (pick < 30)
      a = 1;
    else
      a = 2 + rng() % (f.mask() - 1);  // [2, 2^l - 1]
  }
  return M;
}

// A buffer of `len` bytes that ends `slack` bytes before a PROT_NONE page, so any access
// past that end faults. The slack bytes hold a canary.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t len, size_t slack) : len_(len), slack_(slack) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t body = (len + slack + page - 1) / page * page;
    map_len_ = body + page;
    void *p = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      ADD_FAILURE() << "mmap failed";
      return;
    }
    base_ = static_cast<uint8_t *>(p);
    if (mprotect(base_ + body, page, PROT_NONE) != 0) ADD_FAILURE() << "mprotect failed";
    data_ = base_ + body - slack - len;
    memset(base_ + body - slack, kCanary, slack);
  }
  ~GuardedBuffer() {
    if (base_) munmap(base_, map_len_);
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;

  uint8_t *data() const { return data_; }
  bool canary_intact() const {
    for (size_t i = 0; i < slack_; ++i)
      if (data_[len_ + i] != kCanary) return false;
    return true;
  }

 private:
  static constexpr uint8_t kCanary = 0x5C;
  size_t len_, slack_, map_len_ = 0;
  uint8_t *base_ = nullptr;
  uint8_t *data_ = nullptr;
};





// Builds (verified), optimizes at `level` and JIT-compiles one clmul-shift kernel.
void compile(const Field &f, const Matrix &M, const std::string &target_name,
             jit::OptLevel level, Kernel *out, ir::BuildOptions options = {}) {
  test::compile_kernel(f, M, target_name, ir::Strategy::kClmulShift, level, out, options);
}

// Runs the kernel on guarded buffers (ending `slack` bytes before the guard page) and
// compares every output byte with codes::apply_matrix.
void check_against_reference(const Field &f, const Matrix &M, const Kernel &kernel,
                             const std::string &target_name, size_t len, size_t slack,
                             uint64_t seed) {
  const unsigned k = M.cols, m = M.rows;
  std::mt19937_64 rng(seed ^ len);
  std::vector<std::unique_ptr<GuardedBuffer>> in, out;
  std::vector<const uint8_t *> in_ptrs;
  std::vector<uint8_t *> out_ptrs;
  for (unsigned c = 0; c < k; ++c) {
    in.push_back(std::make_unique<GuardedBuffer>(len, slack));
    for (size_t i = 0; i < len; ++i) in.back()->data()[i] = uint8_t(rng());
    in_ptrs.push_back(in.back()->data());
  }
  for (unsigned r = 0; r < m; ++r) {
    out.push_back(std::make_unique<GuardedBuffer>(len, slack));
    memset(out.back()->data(), 0xA5, len);  // kernels must overwrite, never read
    out_ptrs.push_back(out.back()->data());
  }
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
  std::vector<uint8_t *> want_ptrs;
  for (auto &w : want) want_ptrs.push_back(w.data());
  codes::apply_matrix(f, M, in_ptrs.data(), want_ptrs.data(), len);

  kernel.fn(in_ptrs.data(), out_ptrs.data(), len);

  for (unsigned r = 0; r < m; ++r) {
    const uint8_t *got = out_ptrs[r];
    size_t bad = len;
    for (size_t i = 0; i < len && bad == len; ++i)
      if (got[i] != want[r][i]) bad = i;
    ASSERT_EQ(bad, len) << "mismatch: gf(2^" << f.bits() << ") shape k=" << k << " m=" << m
                        << " target=" << target_name << " (vector_bits "
                        << kernel.info.vector_bits << ", cpu " << kernel.info.cpu
                        << ") len=" << len << " slack=" << slack << " output " << r
                        << " byte " << bad << ": got " << int(got[bad]) << " want "
                        << int(want[r][bad]);
    ASSERT_TRUE(out[r]->canary_intact())
        << "write past len: gf(2^" << f.bits() << ") k=" << k << " m=" << m
        << " target=" << target_name << " len=" << len;
  }
}

// The harness itself: one byte past a guarded buffer faults, so over-reads cannot pass silently.
TEST(IrBuildersHarness, GuardPageCatchesOverrun) {
  GuardedBuffer buf(4651, 0);
  buf.data()[4650] = 1;  // last byte is fine
  EXPECT_DEATH(
      {
        volatile uint8_t *p = buf.data();
        p[4651] = 1;
      },
      "");
  GuardedBuffer odd(16, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(odd.data()) % 2, 1u);
  odd.data()[16] = 0;
  EXPECT_FALSE(odd.canary_intact());
}

// ---------------------------------------------------------------------------------------
// Names and symbols.

TEST(IrBuildersStrategy, NamesRoundTrip) {
  for (ir::Strategy s : {ir::Strategy::kAuto, ir::Strategy::kClmulShift}) {
    auto parsed = ir::parse_strategy(ir::strategy_name(s));
    ASSERT_TRUE(parsed.has_value()) << ir::strategy_name(s);
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_STREQ(ir::strategy_name(ir::Strategy::kClmulShift), "clmul-shift");
  EXPECT_STREQ(ir::strategy_name(ir::Strategy::kAuto), "auto");
  EXPECT_FALSE(ir::parse_strategy("clmul_shift").has_value());
  EXPECT_FALSE(ir::parse_strategy("").has_value());
}

TEST(IrBuildersSymbol, DocumentedExample) {
  EXPECT_EQ(ir::kernel_symbol("encode", "rs-vand:k=10,m=4,gf=8", "x86_64-v3"),
            "ecjit_encode__rs_vand_k_10_m_4_gf_8__x86_64_v3");
}

TEST(IrBuildersSymbol, LongNamesAreHashedDeterministically) {
  const std::string spec_a = "rs-vand:k=10,m=4,gf=8," + std::string(300, 'x') + "a";
  const std::string spec_b = "rs-vand:k=10,m=4,gf=8," + std::string(300, 'x') + "b";
  const std::string a = ir::kernel_symbol("encode", spec_a, "host");
  const std::string b = ir::kernel_symbol("encode", spec_b, "host");
  EXPECT_EQ(a.size(), ir::kMaxSymbolLength);
  EXPECT_EQ(b.size(), ir::kMaxSymbolLength);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, ir::kernel_symbol("encode", spec_a, "host"));
  EXPECT_EQ(a.substr(0, 30), "ecjit_encode__rs_vand_k_10_m_4");
  for (char ch : a) EXPECT_TRUE(isalnum(static_cast<unsigned char>(ch)) || ch == '_') << a;
  // Exactly at the limit: unchanged.
  const std::string fits = ir::kernel_symbol("e", std::string(200 - 12, 'y'), "h");
  EXPECT_EQ(fits.size(), 200u);
  EXPECT_EQ(fits.substr(fits.size() - 4), "y__h");
}

// ---------------------------------------------------------------------------------------
// The clmul-shift formula itself, evaluated in C++ exactly as the lowering emits it
// (lo/hi accumulation over several products, one Barrett reduction), against Field::mul.

uint64_t formula_dot(const Field &f, const std::vector<uint64_t> &a, const std::vector<uint64_t> &d) {
  const unsigned l = f.bits();
  const uint64_t mask = f.mask();
  uint64_t lo = 0, hi = 0;
  for (size_t c = 0; c < a.size(); ++c)
    for (unsigned i = 0; i < l; ++i)
      if ((a[c] >> i) & 1) {
        lo ^= (d[c] << i) & mask;
        if (i) hi ^= d[c] >> (l - i);
      }
  uint64_t t = hi;
  for (unsigned j = 1; j < l; ++j)
    if ((f.qplus_low() >> j) & 1) t ^= hi >> (l - j);
  uint64_t u = 0;
  for (unsigned j = 0; j < l; ++j)
    if ((f.poly() >> j) & 1) u ^= (t << j) & mask;
  return lo ^ u;
}

TEST(IrBuildersClmulFormula, Gf8ConstantsMatchNeskovic2018) {
  const Field f = field(8);
  EXPECT_EQ(f.poly(), 0x1Du);       // p* for p = 0x11D
  EXPECT_EQ(f.qplus_low(), 0x1Cu);  // q+ = X^8 + X^4 + X^3 + X^2 (eq. 6.14)
}

TEST(IrBuildersClmulFormula, AllGf8ProductsAndDeferredSums) {
  const Field f = field(8);
  for (uint64_t a = 0; a < 256; ++a)
    for (uint64_t d = 0; d < 256; ++d)
      ASSERT_EQ(formula_dot(f, {a}, {d}), f.mul(a, d)) << a << " * " << d;
  std::mt19937_64 rng(7);
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const Field g = field(l);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<uint64_t> a(1 + trial % 20), d(a.size());
      uint64_t want = 0;
      for (size_t c = 0; c < a.size(); ++c) {
        a[c] = rng() & g.mask();
        d[c] = rng() & g.mask();
        want ^= g.mul(a[c], d[c]);
      }
      ASSERT_EQ(formula_dot(g, a, d), want) << "l=" << l << " trial " << trial;
    }
  }
}

// ---------------------------------------------------------------------------------------
// IR shape and errors (no JIT).

ir::TargetInfo fake_target(const std::string &triple, unsigned bits) {
  ir::TargetInfo t;
  t.triple = triple;
  t.cpu = "generic";
  t.features = "";
  t.vector_bits = bits;
  return t;
}

TEST(IrBuildersBuild, AbiAttributesAndTriple) {
  const Field f = field(8);
  const Matrix M = random_matrix(f, 4, 3, 1);
  for (const auto &[triple, size_bits] :
       std::vector<std::pair<std::string, unsigned>>{{"x86_64-unknown-linux-gnu", 64},
                                                     {"aarch64-unknown-linux-gnu", 64},
                                                     {"armv7a-unknown-linux-gnueabihf", 32},
                                                     {"hexagon-unknown-linux-musl", 32}}) {
    llvm::LLVMContext ctx;
    ir::TargetInfo t = fake_target(triple, 128);
    t.features = "+foo";
    auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, M, "k"}, t, ir::Strategy::kAuto);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    EXPECT_EQ((*mod)->getTargetTriple(), triple);
    llvm::Function *fn = (*mod)->getFunction("k");
    ASSERT_NE(fn, nullptr);
    EXPECT_TRUE(fn->getReturnType()->isVoidTy());
    ASSERT_EQ(fn->arg_size(), 3u);
    EXPECT_TRUE(fn->getArg(2)->getType()->isIntegerTy(size_bits)) << triple;
    for (unsigned i = 0; i < 2; ++i) {
      EXPECT_TRUE(fn->getArg(i)->getType()->isPointerTy());
      EXPECT_TRUE(fn->hasParamAttribute(i, llvm::Attribute::NoAlias));
      EXPECT_TRUE(fn->hasParamAttribute(i, llvm::Attribute::NoCapture));
      EXPECT_TRUE(fn->hasParamAttribute(i, llvm::Attribute::ReadOnly));
    }
    EXPECT_TRUE(fn->hasFnAttribute(llvm::Attribute::NoUnwind));
    EXPECT_EQ(fn->getFnAttribute("target-cpu").getValueAsString(), "generic");
    EXPECT_EQ(fn->getFnAttribute("target-features").getValueAsString(), "+foo");
  }
}

TEST(IrBuildersBuild, RejectsBadInput) {
  const Field f8 = field(8);
  llvm::LLVMContext ctx;
  const ir::TargetInfo t = fake_target("x86_64-unknown-linux-gnu", 128);
  Matrix M = random_matrix(f8, 2, 2, 3);
  M.at(1, 1) = 0x100;  // not in GF(2^8)
  auto bad_coeff = ir::build_kernel(ctx, ir::KernelDesc{f8, M, "k"}, t, ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(bad_coeff));
  EXPECT_NE(err_text(bad_coeff.takeError()).find("not in GF(2^8)"), std::string::npos);

  const Matrix ok = random_matrix(f8, 2, 2, 3);
  auto no_name = ir::build_kernel(ctx, ir::KernelDesc{f8, ok, ""}, t, ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(no_name));
  llvm::consumeError(no_name.takeError());

  const Field f64 = field(64);
  auto narrow = ir::build_kernel(ctx, ir::KernelDesc{f64, random_matrix(f64, 2, 2, 3), "k"},
                                 fake_target("x86_64-unknown-linux-gnu", 32),
                                 ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(narrow));
  llvm::consumeError(narrow.takeError());

  ir::BuildOptions opts;
  opts.unroll = 0;
  auto bad_unroll =
      ir::build_kernel(ctx, ir::KernelDesc{f8, ok, "k"}, t, ir::Strategy::kClmulShift, opts);
  ASSERT_FALSE(bool(bad_unroll));
  llvm::consumeError(bad_unroll.takeError());
}

// A first stage (KernelDesc::pre) only in plain overwrite kernels and only with shapes
// that fit: each misuse gets its own message, never a crash.
TEST(IrBuildersBuild, RejectsBadFirstStage) {
  const Field f8 = field(8);
  llvm::LLVMContext ctx;
  const ir::TargetInfo t = fake_target("x86_64-unknown-linux-gnu", 128);
  auto staged = [&](unsigned k, unsigned tr, unsigned m) {
    ir::KernelDesc d{f8, random_matrix(f8, k + tr, m, 5), "k"};
    d.pre = random_matrix(f8, k, tr, 6);
    return d;
  };
  auto expect_error = [&](const ir::KernelDesc &d, const std::string &needle,
                          const ir::BuildOptions &opts = {}) {
    auto mod = ir::build_kernel(ctx, d, t, ir::Strategy::kClmulShift, opts);
    ASSERT_FALSE(bool(mod)) << needle;
    const std::string text = err_text(mod.takeError());
    EXPECT_NE(text.find(needle), std::string::npos) << text;
  };
  ASSERT_TRUE(bool(ir::build_kernel(ctx, staged(4, 2, 3), t, ir::Strategy::kClmulShift)));

  for (ir::OutputMode mode : {ir::OutputMode::kAccumulate, ir::OutputMode::kVerify}) {
    ir::KernelDesc d = staged(4, 2, 3);
    d.output = mode;
    expect_error(d, "plain overwrite kernels only");
  }
  ir::KernelDesc delta = staged(4, 2, 3);
  delta.input = ir::InputMode::kDelta;
  expect_error(delta, "plain overwrite kernels only");

  ir::KernelDesc cols = staged(4, 2, 3);
  cols.coeffs = random_matrix(f8, 5, 3, 7);  // needs 4 + 2 columns
  expect_error(cols, "needs inputs + intermediates = 6");
  ir::BuildOptions tiled;
  tiled.max_unrolled_products = 0;
  expect_error(cols, "needs inputs + intermediates = 6", tiled);

  ir::KernelDesc no_rows = staged(4, 2, 3);
  no_rows.pre = Matrix(0, 4);
  expect_error(no_rows, "no intermediates or no inputs");

  ir::KernelDesc short_pre = staged(4, 2, 3);
  short_pre.pre.a.pop_back();
  expect_error(short_pre, "first-stage (pre) matrix has 7 entries");

  ir::KernelDesc wide = staged(4, 2, 3);
  wide.pre.at(1, 2) = 0x1FF;
  expect_error(wide, "first-stage (pre) (1, 2) = 511 is not in GF(2^8)");
}

// The unrolled builder keeps the two stages: outputs that are copies of one intermediate
// cost one product pair and one reduction in all, not one per output as the composed map.
TEST(IrBuildersBuild, FirstStageComputedOncePerVector) {
  const Field f = field(8);
  const ir::TargetInfo t = fake_target("x86_64-unknown-linux-gnu", 128);
  ir::KernelDesc staged{f, Matrix(3, 3), "staged"};
  staged.pre = Matrix(1, 2);
  staged.pre.a = {0x02, 0x04};
  for (unsigned r = 0; r < 3; ++r) staged.coeffs.at(r, 2) = 1;  // out[r] = t0
  ir::KernelDesc composed{f, codes::compose_stages(f, staged.pre, staged.coeffs), "composed"};
  ASSERT_EQ(composed.coeffs.cols, 2u);
  EXPECT_EQ(composed.coeffs.at(2, 0), 0x02u);
  ir::IrStats counts[2];
  for (int i = 0; i < 2; ++i) {
    llvm::LLVMContext ctx;
    auto mod = ir::build_kernel(ctx, i ? composed : staged, t, ir::Strategy::kClmulShift);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    counts[i] = ir::count_ir_ops(**mod, ir::kMainLoopBlock);
  }
  EXPECT_EQ(counts[0].loads, 2u);
  EXPECT_EQ(counts[0].stores, 3u);
  EXPECT_GT(counts[0].shifts, 0u);
  EXPECT_EQ(counts[1].shifts, 3 * counts[0].shifts);
}

// Main-loop value types: vectors of iL, packed i64 without a vector unit, and i64 scalars for
// symbols wider than the target's lanes.
TEST(IrBuildersBuild, MainLoopValueTypes) {
  struct Row {
    unsigned l, vector_bits, max_lane_bits;
    const char *type;
  };
  const Row rows[] = {{8, 128, 64, "<16 x i8>"}, {16, 256, 64, "<16 x i16>"},
                      {64, 512, 64, "<8 x i64>"}, {8, 64, 64, "i64"},
                      {16, 64, 64, "i64"},        {64, 64, 64, "i64"},
                      {64, 1024, 32, "i64"},      {32, 1024, 32, "<32 x i32>"}};
  for (const Row &row : rows) {
    const Field f = field(row.l);
    llvm::LLVMContext ctx;
    ir::TargetInfo t = fake_target("x86_64-unknown-linux-gnu", row.vector_bits);
    t.max_lane_bits = row.max_lane_bits;
    auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, random_matrix(f, 3, 2, 5), "k"}, t,
                                ir::Strategy::kClmulShift);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    std::string type;
    for (const llvm::BasicBlock &bb : *(*mod)->getFunction("k"))
      if (bb.getName() == ir::kMainLoopBlock)
        for (const llvm::Instruction &inst : bb)
          if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
            llvm::raw_string_ostream os(type);
            ld->getType()->print(os);
            break;
          }
    EXPECT_EQ(type, row.type) << "l=" << row.l << " vector_bits=" << row.vector_bits
                              << " max_lane_bits=" << row.max_lane_bits;
  }
}

TEST(IrBuildersBuild, LargeShapeBuildsAndVerifies) {
  const Field f = field(16);
  const Matrix M = random_matrix(f, 64, 16, 11);
  llvm::LLVMContext ctx;
  auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, M, "big"},
                              fake_target("x86_64-unknown-linux-gnu", 512), ir::Strategy::kAuto);
  ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
  const ir::IrStats s = ir::count_ir_ops(**mod, ir::kMainLoopBlock);
  EXPECT_EQ(s.loads, 64u);
  EXPECT_EQ(s.stores, 16u);
  EXPECT_GT(s.shifts, 0u);
}

// Redundant shifts disappear under O3 (Nešković 2018, Fig. 5-4): ISA-L's RS 10+4 over GF(2^8).
TEST(IrBuildersBuild, O3RemovesRedundantShifts) {
  init_session();
  const Field f = field(8);
  const Matrix M = codes::isal_rs_parity(f, 10, 4);
  auto info = resolve_target("host");
  ASSERT_TRUE(bool(info)) << err_text(info.takeError());
  ir::IrStats at[2], loop[2];
  const jit::OptLevel levels[2] = {jit::OptLevel::kO0, jit::OptLevel::kO3};
  for (int i = 0; i < 2; ++i) {
    llvm::LLVMContext ctx;
    auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, M, "rs10x4"}, *info,
                                ir::Strategy::kClmulShift);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    auto tm = jit::make_target_machine(*info, levels[i]);
    ASSERT_TRUE(bool(tm)) << err_text(tm.takeError());
    llvm::Error e = jit::optimize(**mod, **tm, levels[i]);
    ASSERT_FALSE(bool(e)) << err_text(std::move(e));
    at[i] = ir::count_ir_ops(**mod);
    loop[i] = ir::count_ir_ops(**mod, ir::kMainLoopBlock);
  }
  std::printf("RS(14,10) GF(2^8) on host, whole module: "
              "O0 shifts=%zu xors=%zu instrs=%zu | O3 shifts=%zu xors=%zu instrs=%zu\n",
              at[0].shifts, at[0].xors, at[0].instructions, at[1].shifts, at[1].xors,
              at[1].instructions);
  std::printf("  main loop block only: O0 shifts=%zu xors=%zu | O3 shifts=%zu xors=%zu\n",
              loop[0].shifts, loop[0].xors, loop[1].shifts, loop[1].xors);
  EXPECT_GT(at[0].shifts, 0u);
  EXPECT_LT(at[1].shifts, at[0].shifts);
  // Per input at most 2(l-1) distinct shifts (lo and hi), per output a bounded reduction;
  // once: the body exists only in the vector loop (no scalar tail).
  EXPECT_LE(at[1].shifts, 10 * 2 * 7 + 4 * 7);
}

// The most shift results live at once in the optimized main loop: clmul-shift orders its
// terms input by input, shift by shift across the outputs of a pass, so a shift is used up
// next to where it is made, and the pipeline must keep that order (LLVM's default O3
// reassociates the XOR trees and hoists every shift ahead of them: dozens live, spilled).
size_t max_live_shifts(llvm::Module &mod) {
  for (llvm::Function &fn : mod)
    for (llvm::BasicBlock &bb : fn) {
      if (!bb.getName().starts_with(ir::kMainLoopBlock)) continue;
      std::vector<llvm::Instruction *> order;
      for (llvm::Instruction &inst : bb) order.push_back(&inst);
      std::vector<int> delta(order.size() + 1, 0);
      auto index = [&](llvm::Instruction *inst) {
        return size_t(std::find(order.begin(), order.end(), inst) - order.begin());
      };
      for (size_t i = 0; i < order.size(); ++i) {
        if (!order[i]->isShift()) continue;
        size_t last = i;
        for (llvm::User *u : order[i]->users())
          if (auto *ui = llvm::dyn_cast<llvm::Instruction>(u); ui && ui->getParent() == &bb)
            last = std::max(last, index(ui));
        ++delta[i];
        --delta[last];
      }
      size_t live = 0, most = 0;
      for (size_t i = 0; i < order.size(); ++i) {
        live += delta[i];
        most = std::max(most, live);
      }
      return most;
    }
  return 0;
}

TEST(IrBuildersBuild, ClmulShiftKeepsShiftsShortLived) {
  init_session();
  auto info = resolve_target("x86_64-v3");
  ASSERT_TRUE(bool(info)) << err_text(info.takeError());
  for (unsigned l : {8u, 16u, 32u}) {
    const Field f = field(l);
    const Matrix M = codes::rs_vandermonde_parity(f, 10, 4);
    llvm::LLVMContext ctx;
    auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, M, "rs10x4"}, *info,
                                ir::Strategy::kClmulShift);
    ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
    auto tm = jit::make_target_machine(*info, jit::OptLevel::kO3);
    ASSERT_TRUE(bool(tm)) << err_text(tm.takeError());
    llvm::Error e = jit::optimize(**mod, **tm, jit::OptLevel::kO3);
    ASSERT_FALSE(bool(e)) << err_text(std::move(e));
    const size_t live = max_live_shifts(**mod);
    std::printf("GF(2^%u) RS(14,10) clmul-shift, x86-64-v3, O3: at most %zu shift results live\n",
                l, live);
    EXPECT_GT(live, 0u);
    EXPECT_LE(live, 3u);
  }
}

// The k x m body is emitted once per unroll variant: loads of the data type appear k times
// (unroll 1) or k + 2k times (unroll 2), however short shards are handled. With the stack
// buffers disallowed, the scalar tail adds a second, scalar copy.
TEST(IrBuildersBuild, BodyEmittedOnce) {
  const Field f = field(16);
  const unsigned k = 6, m = 3;
  const Matrix M = random_matrix(f, k, m, 21);
  auto count_loads = [&](const ir::BuildOptions &opts, const char *type) {
    llvm::LLVMContext ctx;
    auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, M, "k"},
                                fake_target("x86_64-unknown-linux-gnu", 256),
                                ir::Strategy::kClmulShift, opts);
    EXPECT_TRUE(bool(mod)) << err_text(mod.takeError());
    if (!mod) return size_t(0);
    size_t n = 0;
    for (const llvm::BasicBlock &bb : *(*mod)->getFunction("k"))
      for (const llvm::Instruction &inst : bb)
        if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
          std::string t;
          llvm::raw_string_ostream os(t);
          ld->getType()->print(os);
          n += os.str() == type;
        }
    return n;
  };
  ir::BuildOptions one, two, no_stack;
  two.unroll = 2;
  no_stack.max_stack_tail_bytes = 0;
  EXPECT_EQ(count_loads(one, "<16 x i16>"), k);
  EXPECT_EQ(count_loads(one, "i16"), 0u);
  EXPECT_EQ(count_loads(two, "<16 x i16>"), 3 * k);
  EXPECT_EQ(count_loads(no_stack, "<16 x i16>"), k);
  EXPECT_EQ(count_loads(no_stack, "i16"), k);
}

// ---------------------------------------------------------------------------------------
// JIT equivalence over field x shape x target x length.

using test::case_name;
using test::KernelCase;

std::vector<KernelCase> all_cases() {
  std::vector<KernelCase> cases;
  const std::pair<unsigned, unsigned> shapes[] = {{1, 1}, {2, 2}, {4, 3}, {10, 4}, {20, 8}};
  for (const char *target : kHostTargets) {
    for (unsigned l : {8u, 16u, 32u, 64u})
      for (auto [k, m] : shapes) cases.push_back({l, k, m, target});
    cases.push_back({16, 64, 16, target});
  }
  return cases;
}

class IrBuildersVsReference : public testing::TestWithParam<KernelCase> {
 protected:
  static void SetUpTestSuite() { init_session(); }
};

TEST_P(IrBuildersVsReference, O3AllLengths) {
  const KernelCase &c = GetParam();
  const Field f = field(c.l);
  const uint64_t seed = 1000 * c.l + 10 * c.k + c.m;
  const Matrix M = random_matrix(f, c.k, c.m, seed);
  Kernel kernel;
  ASSERT_NO_FATAL_FAILURE(compile(f, M, c.target, jit::OptLevel::kO3, &kernel));
  for (size_t raw : kLengths) {
    const size_t len = symbol_len(raw, c.l);
    ASSERT_NO_FATAL_FAILURE(check_against_reference(f, M, kernel, c.target, len, 0, seed));
  }
  // Odd start address (unaligned everything); one canary byte between the end and the guard.
  ASSERT_NO_FATAL_FAILURE(
      check_against_reference(f, M, kernel, c.target, symbol_len(4651, c.l), 1, seed + 1));
}

INSTANTIATE_TEST_SUITE_P(Host, IrBuildersVsReference, testing::ValuesIn(all_cases()),
                         case_name<test::KernelCase>);

// The redundant (unoptimized) form is itself correct, and so is an unrolled main loop.
TEST(IrBuildersVariants, O0AndUnrolled) {
  init_session();
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const Field f = field(l);
    const Matrix M = random_matrix(f, 10, 4, 77 + l);
    for (const char *target : {"host", "host-sse2"}) {
      Kernel o0, unrolled;
      ASSERT_NO_FATAL_FAILURE(compile(f, M, target, jit::OptLevel::kO0, &o0));
      ir::BuildOptions two;
      two.unroll = 2;
      ASSERT_NO_FATAL_FAILURE(compile(f, M, target, jit::OptLevel::kO3, &unrolled, two));
      for (size_t raw : kLengths) {
        const size_t len = symbol_len(raw, l);
        SCOPED_TRACE("O0");
        ASSERT_NO_FATAL_FAILURE(check_against_reference(f, M, o0, target, len, 0, 5));
        SCOPED_TRACE("unroll 2");
        ASSERT_NO_FATAL_FAILURE(check_against_reference(f, M, unrolled, target, len, 0, 6));
      }
    }
  }
}

// Shapes too large for the stack buffers of short shards fall back to the scalar tail
// (forced here with a zero budget); the overlapped last vector is unaffected.
TEST(IrBuildersVariants, ScalarTailFallback) {
  init_session();
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const Field f = field(l);
    const Matrix M = random_matrix(f, 10, 4, 91 + l);
    for (const char *target : kHostTargets) {
      Kernel kernel;
      ir::BuildOptions opts;
      opts.max_stack_tail_bytes = 0;
      opts.unroll = l == 16 ? 3 : 1;
      ASSERT_NO_FATAL_FAILURE(compile(f, M, target, jit::OptLevel::kO3, &kernel, opts));
      for (size_t raw : kLengths)
        ASSERT_NO_FATAL_FAILURE(
            check_against_reference(f, M, kernel, target, symbol_len(raw, l), 0, 13));
    }
  }
}

// Zero rows write zeros, all-one rows are plain XORs, a single 1 is a copy.
TEST(IrBuildersVariants, SpecialRows) {
  init_session();
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const Field f = field(l);
    Matrix M(4, 5);
    for (unsigned c = 0; c < 5; ++c) {
      M.at(1, c) = 1;
      M.at(3, c) = 2 + c;
    }
    M.at(2, 3) = 1;
    for (const char *target : kHostTargets) {
      Kernel kernel;
      ASSERT_NO_FATAL_FAILURE(compile(f, M, target, jit::OptLevel::kO3, &kernel));
      for (size_t raw : {size_t(1), size_t(31), size_t(4651)})
        ASSERT_NO_FATAL_FAILURE(
            check_against_reference(f, M, kernel, target, symbol_len(raw, l), 0, 9));
    }
  }
}

// KernelDesc::whole_vectors (promoted decoders): no path for shards shorter than a vector -
// no stack buffers, a trap where that path was - and exact at every length from one vector
// on, under the strategy the runtime picks for each host tier. Overwrite kernels only.
TEST(IrBuildersVariants, WholeVectorsKernels) {
  init_session();
  for (unsigned l : {8u, 16u, 32u, 64u}) {
    const Field f = field(l);
    const Matrix M = random_matrix(f, 10, 4, 131 + l);
    for (const char *target : kHostTargets) {
      auto info = resolve_target(target);
      ASSERT_TRUE(bool(info)) << err_text(info.takeError());
      const ir::Strategy strategy = jit::resolve_strategy(ir::Strategy::kAuto, *info, l);
      ir::KernelDesc desc{f, M, "wv"};
      desc.whole_vectors = true;
      const size_t vec = ir::kernel_min_len(desc, *info);
      EXPECT_EQ(vec, size_t(ir::kernel_vector_lanes(f, *info)) * (l / 8));
      ir::KernelDesc plain = desc;
      plain.whole_vectors = false;
      EXPECT_EQ(ir::kernel_min_len(plain, *info), 1u);
      {
        llvm::LLVMContext ctx;
        auto mod = ir::build_kernel(ctx, desc, *info, strategy);
        ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
        size_t allocas = 0, traps = 0;
        for (const llvm::Instruction &inst : llvm::instructions(*(*mod)->getFunction("wv"))) {
          allocas += llvm::isa<llvm::AllocaInst>(inst);
          if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) traps += call->getIntrinsicID() == llvm::Intrinsic::trap;
        }
        EXPECT_EQ(allocas, 0u) << target << " GF(2^" << l << ")";
        EXPECT_EQ(traps, vec > l / 8 ? 1u : 0u) << target << " GF(2^" << l << ")";
      }
      Kernel kernel;
      ASSERT_NO_FATAL_FAILURE(test::compile_desc(desc, target, strategy, jit::OptLevel::kO3, &kernel));
      SCOPED_TRACE(std::string(target) + " " + ir::strategy_name(strategy) + " GF(2^" + std::to_string(l) + ")");
      for (size_t len = vec; len <= 3 * vec + l / 8; len += l / 8)
        ASSERT_NO_FATAL_FAILURE(check_against_reference(f, M, kernel, target, len, 0, 17));
      for (size_t raw : {size_t(4651), size_t(100003)})
        ASSERT_NO_FATAL_FAILURE(check_against_reference(f, M, kernel, target, symbol_len(raw, l), 1, 19));
    }
    ir::KernelDesc acc{f, M, "acc"};
    acc.whole_vectors = true;
    acc.output = ir::OutputMode::kAccumulate;
    llvm::LLVMContext ctx;
    auto bad = ir::build_kernel(ctx, acc, *resolve_target("host"), ir::Strategy::kClmulShift);
    ASSERT_FALSE(bool(bad));
    EXPECT_NE(err_text(bad.takeError()).find("whole_vectors"), std::string::npos);
  }
}

// One planner for the runtime, `ecjit ir/asm/stats` and `ecjit aot`: the request says how the
// decoder is built for its use.
TEST(DecoderPlanner, RequestFollowsTheUse) {
  auto info = test::resolve_target("host");
  ASSERT_TRUE(bool(info)) << test::err_text(info.takeError());
  const codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=8");
  std::vector<bool> present(14, true);
  present[0] = present[3] = false;
  struct Want {
    jit::DecoderUse use;
    bool whole_vectors;
    jit::Codegen codegen;
  };
  for (const Want &w : {Want{jit::DecoderUse::kAheadOfTime, false, jit::Codegen::kFull},
                        Want{jit::DecoderUse::kPerSet, false, jit::Codegen::kNoSchedulers},
                        Want{jit::DecoderUse::kPromoted, true, jit::Codegen::kNoSchedulers}}) {
    auto plan = jit::plan_decoder(code, present, {0, 3}, *info, "host", ir::Strategy::kAuto, w.use);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    EXPECT_EQ(plan->request.desc.whole_vectors, w.whole_vectors) << int(w.use);
    EXPECT_EQ(plan->request.codegen, w.codegen) << int(w.use);
    EXPECT_EQ(plan->op, "decode_t0_3_s1_2_4_5_6_7_8_9_10_11");
  }
  // Shape kernels serve up to kMaxShapeInputs data shards, never a code without parity.
  const ir::Strategy resolved = jit::resolve_strategy(ir::Strategy::kAuto, *info, 8);
  const std::optional<ir::Strategy> shapes = ir::pick_shape_strategy(ir::Strategy::kAuto, resolved, code.field, *info);
  const bool host_has_shapes = shapes.has_value();
  EXPECT_EQ(jit::shape_kernels_serve(code, shapes), host_has_shapes);
  EXPECT_FALSE(jit::shape_kernels_serve(*codes::build_code("rs-vand:k=65,m=2,gf=8"), shapes));
  // A forced strategy without a run-time form (clmul-shift) has no shape kernels: its
  // decoders are compiled per set in it, never served by another strategy's shape kernels.
  EXPECT_FALSE(jit::shape_kernels_serve(
      code, ir::pick_shape_strategy(ir::Strategy::kClmulShift, ir::Strategy::kClmulShift, code.field, *info)));
  EXPECT_FALSE(ir::pick_shape_strategy(ir::Strategy::kClmulShift, ir::Strategy::kClmulShift, code.field, *info));
}

// The same IR compiles for targets this machine cannot run (object emission only).
TEST(IrBuildersVariants, CrossTargetsEmitObjects) {
  for (const char *name : {"aarch64", "armv7", "hexagon-v68+hvx", "x86_64-v4", "riscv64-v"}) {
    auto info = resolve_target(name);
    if (!info) {
      std::printf("skipping %s: %s\n", name, err_text(info.takeError()).c_str());
      continue;
    }
    // HVX has no 64-bit lanes; jit/'s target table is meant to say so (max_lane_bits = 32).
    // Without it the Hexagon backend scalarizes <16 x i64> for over a minute.
    if (llvm::StringRef(info->triple).starts_with("hexagon") && info->max_lane_bits > 32) {
      std::printf("note: %s resolved with max_lane_bits %u; forcing 32\n", name,
                  info->max_lane_bits);
      info->max_lane_bits = 32;
    }
    for (unsigned l : {8u, 64u}) {
      const Field f = field(l);
      llvm::LLVMContext ctx;
      auto mod = ir::build_kernel(ctx, ir::KernelDesc{f, random_matrix(f, 4, 2, 3), "k"}, *info,
                                  ir::Strategy::kClmulShift);
      ASSERT_TRUE(bool(mod)) << name << ": " << err_text(mod.takeError());
      auto tm = jit::make_target_machine(*info, jit::OptLevel::kO3);
      ASSERT_TRUE(bool(tm)) << name << ": " << err_text(tm.takeError());
      llvm::Error e = jit::optimize(**mod, **tm, jit::OptLevel::kO3);
      ASSERT_FALSE(bool(e)) << name << ": " << err_text(std::move(e));
      auto obj = jit::emit(**mod, **tm, jit::EmitKind::kObject);
      ASSERT_TRUE(bool(obj)) << name << ": " << err_text(obj.takeError());
      EXPECT_FALSE(obj->empty()) << name;
    }
  }
}

}  // namespace
}  // namespace ecjit

namespace ecjit {
namespace {

// KernelDesc::streaming_stores: non-temporal vector stores and an SFENCE on x86; refused
// elsewhere and for kernels that read their outputs.
TEST(StreamingStores, NonTemporalStoresOnX86Only) {
  auto f = codes::Field::make(8);
  ASSERT_TRUE(f.ok());
  codes::Matrix M(4, 10);
  for (size_t i = 0; i < M.a.size(); ++i) M.a[i] = 2 + i;
  for (const char *t : {"x86_64-v4", "x86_64-v3", "x86_64-v2"}) {
    auto info = test::resolve_target(t);
    ASSERT_TRUE(bool(info));
    jit::CompileRequest req{ir::KernelDesc{*f, M, "k"}, *info, ir::Strategy::kClmulShift,
                            jit::OptLevel::kO3};
    req.desc.streaming_stores = true;
    auto text = jit::kernel_code(req, jit::EmitKind::kAssembly);
    ASSERT_TRUE(bool(text)) << test::err_text(text.takeError());
    EXPECT_NE(text->find("movntdq"), std::string::npos) << t;
    EXPECT_NE(text->find("sfence"), std::string::npos) << t;
    // Whole 64-byte lines per output: with 256-bit vectors the main loop stores two vectors
    // to one output back to back (same base register), for each of the 4 outputs.
    if (std::string(t) == "x86_64-v3") {
      std::vector<std::string> bases;  // base register of each non-temporal store, in order
      for (size_t at = text->find("vmovnt"); at != std::string::npos;
           at = text->find("vmovnt", at + 1)) {  // vmovntdq / vmovntps
        const size_t open = text->find('(', at), close = text->find(')', at);
        const size_t eol = text->find('\n', at);
        bases.push_back(open < eol && close < eol ? text->substr(open, close - open) : "");
      }
      unsigned pairs = 0;
      for (size_t i = 1; i < bases.size(); ++i)
        if (!bases[i].empty() && bases[i] == bases[i - 1]) ++pairs, ++i;
      EXPECT_GE(pairs, 4u) << "non-temporal stores not grouped into lines:\n" << *text;
    }
  }
  llvm::LLVMContext ctx;
  auto aarch64 = test::resolve_target("aarch64");
  ASSERT_TRUE(bool(aarch64));
  ir::KernelDesc desc{*f, M, "k"};
  desc.streaming_stores = true;
  auto mod = ir::build_kernel(ctx, desc, *aarch64, ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(mod));
  EXPECT_NE(test::err_text(mod.takeError()).find("streaming"), std::string::npos);
  auto v4 = test::resolve_target("x86_64-v4");
  desc.output = ir::OutputMode::kAccumulate;
  auto acc = ir::build_kernel(ctx, desc, *v4, ir::Strategy::kClmulShift);
  ASSERT_FALSE(bool(acc));
  llvm::consumeError(acc.takeError());
}

}  // namespace
}  // namespace ecjit
