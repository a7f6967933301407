// jit_session_test: the optimize/emit pipeline and the LLJIT session, on hand-built kernels.
#include "jit/jit_session.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "jit_test_util.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::jit {
namespace {

using test::call_kernel;


// Module with the kernel ABI, target attributes from `target`, and an empty body for
// `body` to fill: (builder, in, out, len).
template <typename Body>
std::unique_ptr<llvm::Module> make_kernel(llvm::LLVMContext &ctx, const ir::TargetInfo &target,
                                          const std::string &symbol, Body body) {
  auto module = std::make_unique<llvm::Module>(symbol, ctx);
  module->setTargetTriple(target.triple);
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, i64}, false);
  auto *fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, *module);
  fn->addFnAttr("target-cpu", target.cpu);
  fn->addFnAttr("target-features", target.features);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  body(b, fn->getArg(0), fn->getArg(1), fn->getArg(2));
  return module;
}

// for (i = 0; i != len; i += step) emit_step(b, in, out, i); ret
template <typename Step>
void counted_loop(llvm::IRBuilder<> &b, llvm::Value *in, llvm::Value *out, llvm::Value *len,
                  uint64_t step, Step emit_step) {
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *entry = b.GetInsertBlock();
  auto *head = llvm::BasicBlock::Create(ctx, "head", fn);
  auto *body = llvm::BasicBlock::Create(ctx, "body", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode *i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  b.CreateCondBr(b.CreateICmpEQ(i, len), exit, body);
  b.SetInsertPoint(body);
  emit_step(b, in, out, i);
  llvm::Value *next = b.CreateAdd(i, b.getInt64(step), "next");
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(head);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

// out[0][i] = in[0][i], byte by byte (O3 turns it into memcpy: a process symbol).
std::unique_ptr<llvm::Module> make_copy(llvm::LLVMContext &ctx, const ir::TargetInfo &target,
                                        const std::string &symbol) {
  return make_kernel(ctx, target, symbol, [](llvm::IRBuilder<> &b, llvm::Value *in,
                                             llvm::Value *out, llvm::Value *len) {
    llvm::Type *ptr = b.getPtrTy();
    llvm::Value *src = b.CreateLoad(ptr, in, "in0");
    llvm::Value *dst = b.CreateLoad(ptr, out, "out0");
    counted_loop(b, in, out, len, 1, [&](llvm::IRBuilder<> &b, llvm::Value *, llvm::Value *,
                                         llvm::Value *i) {
      llvm::Value *byte = b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), src, i));
      b.CreateStore(byte, b.CreateGEP(b.getInt8Ty(), dst, i));
    });
  });
}

// out[0] = in[0] ^ (in[1] << 1 per byte), one vector_bits-wide word per step (len must be
// a multiple of vector_bits / 8). With vector_bits == 64 the word is a plain i64.
std::unique_ptr<llvm::Module> make_xor(llvm::LLVMContext &ctx, const ir::TargetInfo &target,
                                       const std::string &symbol) {
  const unsigned bytes = target.vector_bits / 8;
  return make_kernel(ctx, target, symbol, [&](llvm::IRBuilder<> &b, llvm::Value *in,
                                              llvm::Value *out, llvm::Value *len) {
    llvm::Type *ptr = b.getPtrTy();
    llvm::Type *word = target.vector_bits == 64
                           ? static_cast<llvm::Type *>(b.getInt64Ty())
                           : llvm::FixedVectorType::get(b.getInt8Ty(), bytes);
    llvm::Value *a = b.CreateLoad(ptr, in, "in0");
    llvm::Value *c = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, in, 1), "in1");
    llvm::Value *dst = b.CreateLoad(ptr, out, "out0");
    counted_loop(b, in, out, len, bytes, [&](llvm::IRBuilder<> &b, llvm::Value *,
                                             llvm::Value *, llvm::Value *i) {
      llvm::Value *x = b.CreateAlignedLoad(word, b.CreateGEP(b.getInt8Ty(), a, i), llvm::Align(1));
      llvm::Value *y = b.CreateAlignedLoad(word, b.CreateGEP(b.getInt8Ty(), c, i), llvm::Align(1));
      if (target.vector_bits == 64) {
        // per-byte shift of a packed word: (y << 1) & 0xfefe...
        y = b.CreateAnd(b.CreateShl(y, 1), b.getInt64(0xfefefefefefefefeull));
      } else {
        y = b.CreateShl(y, llvm::ConstantInt::get(word, 1));
      }
      b.CreateAlignedStore(b.CreateXor(x, y), b.CreateGEP(b.getInt8Ty(), dst, i), llvm::Align(1));
    });
  });
}

ir::TargetInfo resolve(const std::string &text) {
  auto spec = TargetSpec::parse(text);
  if (!spec) {
    ADD_FAILURE() << text << ": " << llvm::toString(spec.takeError());
    return {};
  }
  auto info = spec->resolve();
  if (!info) {
    ADD_FAILURE() << text << ": " << llvm::toString(info.takeError());
    return {};
  }
  return *info;
}

std::shared_ptr<JitSession> make_session() {
  auto session = JitSession::create();
  if (!session) {
    ADD_FAILURE() << llvm::toString(session.takeError());
    return nullptr;
  }
  return *session;
}

// Optimizes a module built by `make` for `target` and adds it to `session`.
template <typename Make>
std::unique_ptr<CompiledKernel> jit_kernel(JitSession &session, const ir::TargetInfo &target,
                                           const std::string &symbol, OptLevel level, Make make) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module = make(*ctx, target, symbol);
  auto tm = make_target_machine(target, level);
  if (!tm) {
    ADD_FAILURE() << llvm::toString(tm.takeError());
    return nullptr;
  }
  if (auto err = optimize(*module, **tm, level)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return nullptr;
  }
  auto kernel = session.add(std::move(ctx), std::move(module), symbol);
  if (!kernel) {
    ADD_FAILURE() << symbol << ": " << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return std::move(*kernel);
}

std::vector<uint8_t> pattern(size_t len, uint32_t seed) {
  std::vector<uint8_t> v(len);
  for (size_t i = 0; i < len; ++i) {
    seed = seed * 1103515245u + 12345u;
    v[i] = static_cast<uint8_t>(seed >> 16);
  }
  return v;
}

void check_copy(const CompiledKernel &kernel, size_t len) {
  std::vector<uint8_t> src = pattern(len, 7), dst(len + 1, 0xAA);
  const uint8_t *in[] = {src.data()};
  uint8_t *out[] = {dst.data()};
  call_kernel(kernel, in, out, len);
  EXPECT_TRUE(len == 0 || std::memcmp(src.data(), dst.data(), len) == 0) << "len " << len;
  EXPECT_EQ(dst[len], 0xAA) << "wrote past len " << len;
}

void check_xor(const CompiledKernel &kernel, size_t len) {
  std::vector<uint8_t> a = pattern(len, 1), c = pattern(len, 2), dst(len, 0);
  const uint8_t *in[] = {a.data(), c.data()};
  uint8_t *out[] = {dst.data()};
  call_kernel(kernel, in, out, len);
  for (size_t i = 0; i < len; ++i) {
    ASSERT_EQ(dst[i], static_cast<uint8_t>(a[i] ^ (c[i] << 1))) << "byte " << i;
  }
}

TEST(JitSession, CopyKernelAtO3AndO0) {
  auto session = make_session();
  ASSERT_TRUE(session);
  const ir::TargetInfo host = resolve("host");
  for (OptLevel level : {OptLevel::kO3, OptLevel::kO0, OptLevel::kO2, OptLevel::kO1}) {
    SCOPED_TRACE(static_cast<int>(level));
    auto kernel = jit_kernel(*session, host, "ecjit_test_copy", level, make_copy);
    ASSERT_TRUE(kernel);
    ASSERT_NE(kernel->address(), nullptr);
    EXPECT_EQ(kernel->symbol(), "ecjit_test_copy");
    for (size_t len : {0, 1, 15, 16, 31, 4651, 10001}) check_copy(*kernel, len);
  }
}

// Masked host tiers compile in the same session (per-function target attributes) and run.
TEST(JitSession, MaskedHostTiersRun) {
  auto session = make_session();
  ASSERT_TRUE(session);
  std::vector<std::string> tiers = {"host"};
  if (llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64) {
    tiers.insert(tiers.end(), {"host-avx512f", "host-avx2", "host-avx2,-sse2"});
  }
  for (const std::string &tier : tiers) {
    SCOPED_TRACE(tier);
    const ir::TargetInfo target = resolve(tier);
    auto kernel = jit_kernel(*session, target, "ecjit_test_xor", OptLevel::kO3, make_xor);
    ASSERT_TRUE(kernel);
    check_xor(*kernel, 4096);
    check_xor(*kernel, 0);
  }
}

// The 64-bit tier really leaves the vector registers alone, and the 128-bit tier stays
// below 256 bits (checked on the emitted assembly of the same kernel).
TEST(JitSession, MaskedHostTiersAvoidWiderRegisters) {
  if (llvm::Triple(llvm::sys::getProcessTriple()).getArch() != llvm::Triple::x86_64) {
    GTEST_SKIP() << "x86-64 register names";
  }
  struct Case {
    const char *spec;
    const char *absent;
  };
  for (Case c : {Case{"host-avx2", "%ymm"}, Case{"host-avx2,-sse2", "%xmm"}}) {
    SCOPED_TRACE(c.spec);
    const ir::TargetInfo target = resolve(c.spec);
    llvm::LLVMContext ctx;
    auto module = make_xor(ctx, target, "ecjit_test_xor");
    auto tm = make_target_machine(target, OptLevel::kO3);
    ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
    ASSERT_FALSE(static_cast<bool>(optimize(*module, **tm, OptLevel::kO3)));
    auto text = emit(*module, **tm, EmitKind::kAssembly);
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_EQ(text->find(c.absent), std::string::npos) << *text;
    EXPECT_NE(text->find("xor"), std::string::npos) << *text;
  }
}

TEST(JitSession, EmitsAssemblyForForeignTargets) {
  struct Case {
    const char *spec;
    const char *mnemonic;
  };
  const Case cases[] = {
      {"x86_64-v3", "vpxor"},       {"x86_64-v4", "zmm"},  {"aarch64+neon", "eor\tv"},
      {"armv7", "veor"},            {"hexagon-v68+hvx", "vxor"}, {"riscv64", "xor"},
      {"riscv64-v", "vxor.vv"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    const ir::TargetInfo target = resolve(c.spec);
    llvm::LLVMContext ctx;
    auto module = make_xor(ctx, target, "ecjit_test_xor");
    auto tm = make_target_machine(target, OptLevel::kO3);
    ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
    ASSERT_FALSE(static_cast<bool>(optimize(*module, **tm, OptLevel::kO3)));
    EXPECT_EQ(module->getTargetTriple(), target.triple);
    auto text = emit(*module, **tm, EmitKind::kAssembly);
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_FALSE(text->empty());
    EXPECT_NE(text->find("ecjit_test_xor"), std::string::npos);
    EXPECT_NE(text->find(c.mnemonic), std::string::npos) << *text;
  }
}

TEST(JitSession, EmitsObjectFile) {
  const ir::TargetInfo target = resolve("x86_64-v3");
  llvm::LLVMContext ctx;
  auto module = make_xor(ctx, target, "ecjit_test_xor");
  auto tm = make_target_machine(target, OptLevel::kO2);
  ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
  ASSERT_FALSE(static_cast<bool>(optimize(*module, **tm, OptLevel::kO2)));
  auto object = emit(*module, **tm, EmitKind::kObject);
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  ASSERT_GT(object->size(), 4u);
  EXPECT_EQ(object->substr(0, 4), "\x7f" "ELF");
}

TEST(JitSession, OptimizeRejectsInvalidModule) {
  const ir::TargetInfo target = resolve("host");
  llvm::LLVMContext ctx;
  auto module = make_kernel(ctx, target, "ecjit_test_bad",
                            [](llvm::IRBuilder<> &, llvm::Value *, llvm::Value *, llvm::Value *) {
                              // no terminator: the verifier must catch it
                            });
  auto tm = make_target_machine(target, OptLevel::kO3);
  ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
  llvm::Error err = optimize(*module, **tm, OptLevel::kO3);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("terminator"), std::string::npos);
}

TEST(JitSession, EmitRejectsForeignDataLayout) {
  llvm::LLVMContext ctx;
  auto module = make_xor(ctx, resolve("x86_64-v3"), "ecjit_test_xor");
  auto x86 = make_target_machine(resolve("x86_64-v3"), OptLevel::kO2);
  auto hexagon = make_target_machine(resolve("hexagon-v68"), OptLevel::kO2);
  ASSERT_TRUE(x86 && hexagon);
  ASSERT_FALSE(static_cast<bool>(optimize(*module, **x86, OptLevel::kO2)));
  auto text = emit(*module, **hexagon, EmitKind::kAssembly);
  ASSERT_FALSE(static_cast<bool>(text));
  EXPECT_NE(llvm::toString(text.takeError()).find("data layout"), std::string::npos);
}

TEST(JitSession, AddRejectsMissingSymbol) {
  auto session = make_session();
  ASSERT_TRUE(session);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = make_copy(*ctx, resolve("host"), "ecjit_test_copy");
  auto kernel = session->add(std::move(ctx), std::move(module), "ecjit_test_other");
  ASSERT_FALSE(static_cast<bool>(kernel));
  EXPECT_NE(llvm::toString(kernel.takeError()).find("does not define"), std::string::npos);
}

TEST(JitSession, DestroyThenAddAgainAndSameNameTwice) {
  auto session = make_session();
  ASSERT_TRUE(session);
  const ir::TargetInfo host = resolve("host");
  for (int round = 0; round < 3; ++round) {
    auto kernel = jit_kernel(*session, host, "ecjit_test_copy", OptLevel::kO3, make_copy);
    ASSERT_TRUE(kernel);
    check_copy(*kernel, 100);
    kernel.reset();  // frees the JIT memory; the name is free again
  }
  auto first = jit_kernel(*session, host, "ecjit_test_copy", OptLevel::kO3, make_copy);
  auto second = jit_kernel(*session, host, "ecjit_test_copy", OptLevel::kO0, make_copy);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->address(), second->address());
  check_copy(*first, 333);
  check_copy(*second, 333);
}

TEST(JitSession, KernelsKeepTheSessionAlive) {
  std::unique_ptr<CompiledKernel> kernel;
  {
    auto session = make_session();
    ASSERT_TRUE(session);
    kernel = jit_kernel(*session, resolve("host"), "ecjit_test_copy", OptLevel::kO3, make_copy);
    ASSERT_TRUE(kernel);
  }
  check_copy(*kernel, 64);
  kernel.reset();
}

TEST(JitSession, ConcurrentAdds) {
  auto session = make_session();
  ASSERT_TRUE(session);
  const ir::TargetInfo host = resolve("host");
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<CompiledKernel>> kernels(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string symbol = "ecjit_test_xor_" + std::to_string(t % 2);
      kernels[t] = jit_kernel(*session, host, symbol, OptLevel::kO3, make_xor);
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (const auto &kernel : kernels) {
    ASSERT_TRUE(kernel);
    check_xor(*kernel, 2048);
  }
}

}  // namespace
}  // namespace ecjit::jit
