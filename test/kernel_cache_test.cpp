// kernel_cache_test: KernelCache hits, single compile under concurrency, failures not cached.
#include "jit/kernel_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jit/jit_session.h"
#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "jit_test_util.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::jit {
namespace {

using test::call_kernel;


// A kernel that writes `value` to out[0][0] (len >= 1), compiled in `session`.
llvm::Expected<std::unique_ptr<CompiledKernel>> compile_store(JitSession &session,
                                                              const std::string &symbol,
                                                              uint8_t value) {
  auto spec = TargetSpec::parse("host");
  if (!spec) return spec.takeError();
  auto target = spec->resolve();
  if (!target) return target.takeError();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(symbol, *ctx);
  module->setTargetTriple(target->triple);
  llvm::Type *ptr = llvm::PointerType::get(*ctx, 0);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(*ctx),
                                       {ptr, ptr, llvm::Type::getInt64Ty(*ctx)}, false);
  auto *fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, *module);
  fn->addFnAttr("target-cpu", target->cpu);
  fn->addFnAttr("target-features", target->features);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", fn));
  llvm::Value *out0 = b.CreateLoad(ptr, fn->getArg(1));
  b.CreateStore(b.getInt8(value), out0);
  b.CreateRetVoid();
  auto tm = make_target_machine(*target, OptLevel::kO2);
  if (!tm) return tm.takeError();
  if (auto err = optimize(*module, **tm, OptLevel::kO2)) return std::move(err);
  return session.add(std::move(ctx), std::move(module), symbol);
}

uint8_t run_store(const CompiledKernel &kernel) {
  uint8_t byte = 0;
  uint8_t *out[] = {&byte};
  call_kernel(kernel, nullptr, out, 1);
  return byte;
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto session = JitSession::create();
    ASSERT_TRUE(static_cast<bool>(session)) << llvm::toString(session.takeError());
    session_ = *session;
  }
  std::shared_ptr<JitSession> session_;
};

TEST_F(KernelCacheTest, SameKeyReturnsSamePointer) {
  KernelCache cache;
  int runs = 0;
  auto factory = [&] {
    ++runs;
    return compile_store(*session_, "ecjit_test_store", 42);
  };
  auto first = cache.get_or_compile("k1", factory);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  auto second = cache.get_or_compile("k1", factory);
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.compiles(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find("k1").get(), first->get());
  EXPECT_EQ(cache.find("k2"), nullptr);
  EXPECT_EQ(run_store(**first), 42);

  // Another key compiles its own kernel (same symbol name, both live).
  auto other = cache.get_or_compile(
      "k2", [&] { return compile_store(*session_, "ecjit_test_store", 7); });
  ASSERT_TRUE(static_cast<bool>(other)) << llvm::toString(other.takeError());
  EXPECT_NE(other->get(), first->get());
  EXPECT_EQ(run_store(**other), 7);
  EXPECT_EQ(run_store(**first), 42);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.compiles(), 2u);
}

TEST_F(KernelCacheTest, ConcurrentFirstRequestsCompileOnce) {
  KernelCache cache;
  std::atomic<int> runs{0};
  constexpr int kThreads = 8;
  std::vector<const CompiledKernel *> got(kThreads, nullptr);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      auto kernel = cache.get_or_compile("shared", [&] {
        runs.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return compile_store(*session_, "ecjit_test_store", 9);
      });
      if (!kernel) {
        ADD_FAILURE() << llvm::toString(kernel.takeError());
        return;
      }
      got[t] = kernel->get();
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(cache.compiles(), 1u);
  EXPECT_EQ(cache.hits(), static_cast<uint64_t>(kThreads - 1));
  ASSERT_NE(got[0], nullptr);
  for (const CompiledKernel *kernel : got) EXPECT_EQ(kernel, got[0]);
  EXPECT_EQ(run_store(*got[0]), 9);
}

TEST_F(KernelCacheTest, FailureIsReportedToAllAndRetried) {
  KernelCache cache;
  std::atomic<int> runs{0};
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      auto kernel = cache.get_or_compile(
          "bad", [&]() -> llvm::Expected<std::unique_ptr<CompiledKernel>> {
            runs.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            return llvm::createStringError(llvm::inconvertibleErrorCode(), "backend exploded");
          });
      if (kernel) {
        ADD_FAILURE() << "a failing factory produced a kernel";
        return;
      }
      std::string message = llvm::toString(kernel.takeError());
      EXPECT_NE(message.find("backend exploded"), std::string::npos) << message;
      failures.fetch_add(1);
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(failures.load(), kThreads);
  // Late arrivals may have started a second attempt; every request failed either way.
  EXPECT_GE(runs.load(), 1);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.find("bad"), nullptr);

  // Not cached: the next call runs its factory, which now succeeds.
  const uint64_t compiles_before = cache.compiles();
  auto kernel = cache.get_or_compile("bad", [&] { return compile_store(*session_, "s", 5); });
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  EXPECT_EQ(cache.compiles(), compiles_before + 1);
  EXPECT_EQ(run_store(**kernel), 5);
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(KernelCacheTest, OriginalErrorTypeReachesTheCompilingCaller) {
  KernelCache cache;
  auto kernel = cache.get_or_compile("x", []() -> llvm::Expected<std::unique_ptr<CompiledKernel>> {
    return llvm::createStringError(std::make_error_code(std::errc::not_supported), "no backend");
  });
  ASSERT_FALSE(static_cast<bool>(kernel));
  std::error_code code = llvm::errorToErrorCode(kernel.takeError());
  EXPECT_EQ(code, std::errc::not_supported);
}

TEST_F(KernelCacheTest, NullKernelIsAnError) {
  KernelCache cache;
  auto kernel = cache.get_or_compile(
      "null", []() -> llvm::Expected<std::unique_ptr<CompiledKernel>> { return nullptr; });
  ASSERT_FALSE(static_cast<bool>(kernel));
  EXPECT_NE(llvm::toString(kernel.takeError()).find("no kernel"), std::string::npos);
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(KernelCacheTest, ClearAndDestroyReleaseKernels) {
  std::weak_ptr<const CompiledKernel> weak;
  {
    KernelCache cache;
    auto kernel = cache.get_or_compile(
        "k", [&] { return compile_store(*session_, "ecjit_test_store", 1); });
    ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
    weak = *kernel;
    std::shared_ptr<const CompiledKernel> held = *kernel;
    cache.clear();
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_FALSE(weak.expired());  // the caller still holds it
    EXPECT_EQ(run_store(*held), 1);
    held.reset();
    kernel->reset();
    EXPECT_TRUE(weak.expired());

    auto again = cache.get_or_compile(
        "k", [&] { return compile_store(*session_, "ecjit_test_store", 2); });
    ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
    weak = *again;
  }
  EXPECT_TRUE(weak.expired());  // the cache's destruction released the last reference
}

}  // namespace
}  // namespace ecjit::jit
