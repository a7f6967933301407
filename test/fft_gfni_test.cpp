// rs-fft's GFNI lowering: its bit-matrices against field multiplication, and its kernels run
// with VGF2P8AFFINEQB emulated in IR (so the wiring is proven on hosts without GFNI).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codes/rs_fft.h"
#include "codes/rs_fft_field.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/schedule.h"
#include "ir_builders/fft_column.h"
#include "ir_builders/fft_kernel.h"
#include "jit/kernel_compiler.h"
#include "jit/kernel_self_test.h"
#include "jit_test_util.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"

namespace ecjit {
namespace {

namespace fft = codes::fft;
using test::err_text;

using test::gfni_affine_byte;

uint64_t qword(const uint8_t *p) {
  uint64_t a = 0;
  for (unsigned i = 0; i < 8; ++i) a |= uint64_t(p[i]) << (8 * i);
  return a;
}

// Every multiplier (all 65536 logs, kModulus being c = 1): plane i of c * x is
// affine(lo, A_i0) ^ affine(hi, A_i1), for the basis bits and random x.
TEST(FftGfniTables, MatricesEqualFieldMultiply) {
  std::mt19937_64 rng(0x6f1);
  std::vector<uint8_t> t(sched::kFftMulTableBytes);
  for (uint32_t log = 0; log <= fft::kModulus; ++log) {
    sched::fft_mul_tables(uint16_t(log), t.data());
    uint64_t a[4];
    for (unsigned q = 0; q < 4; ++q) a[q] = qword(t.data() + sched::kFftGfniOffset + 8 * q);
    for (unsigned trial = 0; trial < 20; ++trial) {
      const uint16_t x = trial < 16 ? uint16_t(1u << trial) : uint16_t(rng());
      const uint8_t lo = uint8_t(x), hi = uint8_t(x >> 8);
      const uint16_t got = uint16_t(gfni_affine_byte(a[0], lo) ^ gfni_affine_byte(a[1], hi)) |
                           uint16_t((gfni_affine_byte(a[2], lo) ^ gfni_affine_byte(a[3], hi)) << 8);
      ASSERT_EQ(got, fft::mul_log(x, uint16_t(log))) << "log " << log << " x " << x;
    }
  }
}

// The nibble tables of the same layout are untouched by the GFNI part: T_h[q][v] = byte h of
// c * (v << 4q), for every multiplier (the tables are built by linearity from the images of
// the 16 bits; this multiplies each entry directly).
TEST(FftGfniTables, NibbleTablesKeepTheirLayout) {
  std::vector<uint8_t> t(sched::kFftMulTableBytes);
  for (uint32_t l = 0; l <= fft::kModulus; ++l) {
    const uint16_t log = uint16_t(l);
    sched::fft_mul_tables(log, t.data());
    for (unsigned q = 0; q < 4; ++q)
      for (unsigned v = 0; v < 16; ++v) {
        const uint16_t p = fft::mul_log(uint16_t(v << (4 * q)), log);
        ASSERT_EQ(t[16 * q + v], uint8_t(p));
        ASSERT_EQ(t[64 + 16 * q + v], uint8_t(p >> 8));
      }
  }
}

// GF(2^8)'s tables (every log): T_lo[0] and T_lo[1] hold c * v and c * (v << 4), the one
// matrix A_00 maps every byte x to c * x, and every other byte is 0 - each entry against the
// field's own multiply.
TEST(FftGfniTables, Gf8TablesEqualFieldMultiply) {
  const fft::LchField &f = fft::lch_field(fft::Gf::k8);
  std::vector<uint8_t> t(sched::kFftMulTableBytes);
  for (uint32_t l = 0; l <= f.modulus; ++l) {
    const uint16_t log = uint16_t(l);
    std::fill(t.begin(), t.end(), 0xa5);
    sched::fft_mul_tables(log, t.data(), fft::Gf::k8);
    for (unsigned q = 0; q < 2; ++q)
      for (unsigned v = 0; v < 16; ++v) ASSERT_EQ(t[16 * q + v], f.mul_log(uint16_t(v << (4 * q)), log)) << "log " << l;
    const uint64_t a = qword(t.data() + sched::kFftGfniOffset);
    for (unsigned x = 0; x < 256; ++x) ASSERT_EQ(gfni_affine_byte(a, uint8_t(x)), f.mul_log(uint16_t(x), log)) << "log " << l;
    for (size_t i = 32; i < sched::kFftGfniOffset; ++i) ASSERT_EQ(t[i], 0) << "log " << l << " byte " << i;
    for (size_t i = sched::kFftGfniOffset + 8; i < sched::kFftMulTableBytes; ++i) ASSERT_EQ(t[i], 0) << "log " << l << " byte " << i;
  }
}

// matrices_only (what a GFNI kernel's run-time multipliers need, made per point of every new
// erasure set): the same matrices as the whole tables, and nothing before them written.
TEST(FftGfniTables, MatricesOnlyWritesTheSameMatricesAlone) {
  for (fft::Gf gf : {fft::Gf::k16, fft::Gf::k8}) {
    std::vector<uint8_t> whole(sched::kFftMulTableBytes), part(sched::kFftMulTableBytes);
    for (uint32_t l = 0; l <= fft::lch_field(gf).modulus; ++l) {
      sched::fft_mul_tables(uint16_t(l), whole.data(), gf);
      std::fill(part.begin(), part.end(), 0x5c);
      sched::fft_mul_tables(uint16_t(l), part.data(), gf, /*matrices_only=*/true);
      for (size_t i = 0; i < sched::kFftGfniOffset; ++i) ASSERT_EQ(part[i], 0x5c) << "log " << l << " byte " << i;
      for (size_t i = sched::kFftGfniOffset; i < sched::kFftMulTableBytes; ++i)
        ASSERT_EQ(part[i], whole[i]) << (gf == fft::Gf::k8 ? "gf8" : "gf16") << " log " << l << " byte " << i;
    }
  }
}

// VGF2P8AFFINEQB's semantics in plain IR: for each output bit t, the matrix row (byte 7 - t of
// each byte's qword) AND the byte, its parity. `flip_rows` reads row t instead: a deliberately
// wrong model, to show the runs below can fail.
llvm::Function *emulated_affine(llvm::Module &mod, bool flip_rows) {
  llvm::LLVMContext &ctx = mod.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *v32 = llvm::FixedVectorType::get(b.getInt8Ty(), 32);
  auto *fty = llvm::FunctionType::get(v32, {v32, v32, b.getInt8Ty()}, false);
  auto *fn = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, "emulated_affine", mod);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *x = fn->getArg(0), *a = fn->getArg(1);
  auto splat = [&](unsigned v) { return llvm::ConstantInt::get(v32, v); };
  llvm::Value *acc = llvm::Constant::getNullValue(v32);
  for (unsigned t = 0; t < 8; ++t) {
    std::vector<int> mask;
    for (unsigned e = 0; e < 32; ++e) mask.push_back(int((e & ~7u) + (flip_rows ? t : 7 - t)));
    llvm::Value *p = b.CreateAnd(b.CreateShuffleVector(a, mask), x);
    p = b.CreateXor(p, b.CreateLShr(p, splat(4)));
    p = b.CreateXor(p, b.CreateLShr(p, splat(2)));
    p = b.CreateXor(p, b.CreateLShr(p, splat(1)));
    acc = b.CreateOr(acc, b.CreateShl(b.CreateAnd(p, splat(1)), splat(t)));
  }
  b.CreateRet(b.CreateXor(acc, b.CreateVectorSplat(32, fn->getArg(2))));
  return fn;
}

// Replaces every VGF2P8AFFINEQB call by the emulation and drops GFNI from the functions'
// features, so the module runs on this host. Returns the number of calls replaced.
size_t emulate_gfni(llvm::Module &mod, bool flip_rows) {
  llvm::Function *emu = emulated_affine(mod, flip_rows);
  std::vector<llvm::CallInst *> calls;
  for (llvm::Function &f : mod)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &i : bb)
        if (auto *c = llvm::dyn_cast<llvm::IntrinsicInst>(&i))
          if (c->getIntrinsicID() == llvm::Intrinsic::x86_vgf2p8affineqb_256) calls.push_back(c);
  for (llvm::CallInst *c : calls) {
    llvm::IRBuilder<> b(c);
    c->replaceAllUsesWith(b.CreateCall(emu, {c->getArgOperand(0), c->getArgOperand(1), c->getArgOperand(2)}));
    c->eraseFromParent();
  }
  for (llvm::Function &f : mod) {
    if (!f.hasFnAttribute("target-features")) continue;
    std::string features = f.getFnAttribute("target-features").getValueAsString().str();
    for (size_t at; (at = features.find("+gfni")) != std::string::npos;) features.replace(at, 5, "-gfni");
    f.addFnAttr("target-features", features);
  }
  return calls.size();
}

class FftGfniEmulated : public testing::Test {
 protected:
  void SetUp() override {
    test::init_session();
    auto info = test::resolve_target("x86_64-v3+gfni");
    ASSERT_TRUE(bool(info)) << err_text(info.takeError());
    gfni_ = *info;
    if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "host without AVX2";
  }

  // The kernel for gfni_, built and optimized as the JIT builds it, then emulated.
  std::unique_ptr<jit::CompiledKernel> compile(const ir::FftKernelDesc &d, bool flip_rows = false) {
    auto built = jit::build_module(jit::fft_compile_request(d, gfni_, jit::OptLevel::kO3));
    if (!built) {
      ADD_FAILURE() << err_text(built.takeError());
      return nullptr;
    }
    EXPECT_GT(emulate_gfni(*built->module, flip_rows), 0u) << "no affine transform in " << d.symbol;
    auto k = test::session()->add(std::move(built->ctx), std::move(built->module), d.symbol);
    if (!k) {
      ADD_FAILURE() << err_text(k.takeError());
      return nullptr;
    }
    return std::move(*k);
  }

  ir::TargetInfo gfni_;
};

// The unrolled encoder and the decode core (constant and loaded multipliers) pass the same
// self-test the disk cache applies; the wrong model fails it.
TEST_F(FftGfniEmulated, UnrolledKernelsMatchTheReference) {
  for (auto kind : {ir::FftKernelDesc::Kind::kEncode, ir::FftKernelDesc::Kind::kDecode}) {
    const ir::FftKernelDesc d{kind, 10, 4, std::string("gfni_emu_") + (kind == ir::FftKernelDesc::Kind::kEncode ? "enc" : "dec"), {}, {}};
    auto k = compile(d);
    ASSERT_TRUE(k);
    EXPECT_TRUE(jit::fft_kernel_matches_desc(*k, d)) << d.symbol;
    const ir::FftKernelDesc wrong{kind, 10, 4, d.symbol + "_flipped", {}, {}};
    auto w = compile(wrong, /*flip_rows=*/true);
    ASSERT_TRUE(w);
    EXPECT_FALSE(jit::fft_kernel_matches_desc(*w, wrong)) << "the flipped model passed: the check proves nothing";
  }
}

// The step kernel on every step kind: encode schedules (two-layer steps, copies, XORs), a
// transform decode (Mul, zero) and a matrix decode (MulAdd), against codes::fft.
TEST_F(FftGfniEmulated, StepKernelRunsEverySchedule) {
  const ir::FftKernelDesc d{ir::FftKernelDesc::Kind::kSteps, 0, 0, "gfni_emu_steps", {}, {}};
  auto k = compile(d);
  ASSERT_TRUE(k);
  EXPECT_TRUE(jit::fft_kernel_matches_desc(*k, d));
  std::mt19937_64 rng(0x9f);
  const size_t len = 64 * 5;
  for (auto [kk, mm] : {std::pair{32u, 32u}, std::pair{6u, 20u}, std::pair{50u, 3u}}) {
    const unsigned n = kk + mm;
    std::vector<std::vector<uint8_t>> want(n, std::vector<uint8_t>(len));
    for (unsigned i = 0; i < kk; ++i)
      for (auto &b : want[i]) b = uint8_t(rng());
    std::vector<const uint8_t *> orig;
    std::vector<uint8_t *> rec;
    for (unsigned i = 0; i < kk; ++i) orig.push_back(want[i].data());
    for (unsigned j = 0; j < mm; ++j) rec.push_back(want[kk + j].data());
    ASSERT_TRUE(fft::encode_bytes(kk, mm, len, orig.data(), rec.data()).ok());
    auto got = want;
    for (unsigned j = 0; j < mm; ++j) std::fill(got[kk + j].begin(), got[kk + j].end(), 0x5a);
    auto enc = sched::fft_encode_schedule(kk, mm);
    ASSERT_TRUE(enc.ok()) << enc.status().message();
    jit::run_fft_schedule(k->address(), *enc, got, len);
    ASSERT_EQ(got, want) << "encode " << kk << ":" << mm;

    // Lose min(k, m) shards spread over originals and recovery: by the transforms, then the
    // first two lost as a matrix.
    std::vector<bool> present(n, true), wanted(n, false);
    std::vector<unsigned> lost;
    for (unsigned s = 0; s < n && lost.size() < std::min(kk, mm); s += 2) lost.push_back(s);
    for (unsigned s : lost) {
      present[s] = false;
      wanted[s] = true;
      std::fill(got[s].begin(), got[s].end(), 0xa5);
    }
    auto dec = sched::fft_decode_schedule(kk, mm, present, wanted);
    ASSERT_TRUE(dec.ok()) << dec.status().message();
    jit::run_fft_schedule(k->address(), *dec, got, len);
    ASSERT_EQ(got, want) << "transform decode " << kk << ":" << mm;

    std::vector<unsigned> sources, targets = {lost[0], lost[1]};
    for (unsigned s = 0; s < n; ++s)
      if (present[s]) sources.push_back(s);
    auto coeffs = fft::decode_matrix(kk, mm, present, sources, targets);
    ASSERT_TRUE(coeffs.ok()) << coeffs.status().message();
    for (unsigned s : targets) std::fill(got[s].begin(), got[s].end(), 0x3c);
    jit::run_fft_schedule(k->address(), sched::fft_matrix_schedule(*coeffs, sources, targets), got, len);
    ASSERT_EQ(got, want) << "matrix decode " << kk << ":" << mm;
  }
}

// The assembly of rs-fft (10, 4)'s kernel of `kind` for a named target (empty where it fails,
// with the failure reported); the target in *info.
std::string fft_kernel_asm(const char *target, ir::FftKernelDesc::Kind kind, ir::TargetInfo *info) {
  auto resolved = test::resolve_target(target);
  if (!resolved) {
    ADD_FAILURE() << target << ": " << err_text(resolved.takeError());
    return "";
  }
  *info = *resolved;
  const ir::FftKernelDesc d{kind, 10, 4, "asm_fft_" + std::to_string(int(kind)), {}, {}};
  auto text = jit::kernel_code(jit::fft_compile_request(d, *info, jit::OptLevel::kO3), jit::EmitKind::kAssembly);
  if (!text) {
    ADD_FAILURE() << target << ": " << err_text(text.takeError());
    return "";
  }
  return *text;
}

// With GFNI every multiply is four affine transforms and no byte shuffle is left; without
// it, nibble lookups.
TEST(FftGfniAsm, StepKernelUsesAffineTransformsOnlyWithGfni) {
  test::init_session();
  for (const char *name : {"x86_64-v3+gfni", "x86_64-v3"}) {
    ir::TargetInfo info;
    const std::string text = fft_kernel_asm(name, ir::FftKernelDesc::Kind::kSteps, &info);
    ASSERT_FALSE(text.empty());
    const bool gfni = std::string(name).find("gfni") != std::string::npos;
    EXPECT_EQ(std::string(ir::fft_multiply_name(info)), gfni ? "gfni" : "split-table");
    EXPECT_EQ(text.find("vgf2p8affineqb") != std::string::npos, gfni) << name;
    EXPECT_EQ(text.find("vpshufb") != std::string::npos, !gfni) << name;
  }
}

// With AVX-512BW the step kernel and the unrolled kernels multiply whole 64-byte columns:
// their affine transforms are on zmm registers, two per multiply; with AVX2 on ymm planes.
// (FftSteps and FftKernel run this machine's kernels against the field; on an AVX-512
// machine those are the whole-column ones.)
TEST(FftGfniAsm, KernelsTakeWholeColumnsWithAvx512) {
  test::init_session();
  for (const char *name : {"x86_64-v4+gfni", "x86_64-v3+gfni"}) {
    const bool wide = std::string(name).find("v4") != std::string::npos;
    for (auto kind : {ir::FftKernelDesc::Kind::kSteps, ir::FftKernelDesc::Kind::kEncode, ir::FftKernelDesc::Kind::kDecode}) {
      ir::TargetInfo info;
      const std::string text = fft_kernel_asm(name, kind, &info);
      ASSERT_FALSE(text.empty());
      EXPECT_EQ(ir::fft_whole_column_vectors(info), wide) << name;
      size_t zmm = 0, ymm = 0;
      for (size_t at = 0; (at = text.find("vgf2p8affineqb", at)) != std::string::npos; ++at) {
        const std::string line = text.substr(at, text.find('\n', at) - at);
        zmm += line.find("zmm") != std::string::npos;
        ymm += line.find("ymm") != std::string::npos;
      }
      EXPECT_EQ(zmm > 0, wide) << name << " kind " << int(kind);
      EXPECT_EQ(ymm > 0, !wide) << name << " kind " << int(kind);
    }
  }
}

}  // namespace
}  // namespace ecjit
