// JitSession: an ORC LLJIT whose compiler honours each function's target attributes.
#include "jit/jit_session.h"

#include <system_error>
#include <utility>

#include "jit/exec_memory.h"
#include "jit/pipeline.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::jit {
namespace {

// Code generation only (modules arrive optimized). A TargetMachine per module makes
// concurrent compiles safe; its subtarget is chosen per function from the "target-cpu" and
// "target-features" attributes, so one session serves every host tier.
class KernelCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  explicit KernelCompiler(llvm::orc::JITTargetMachineBuilder jtmb)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(jtmb.getOptions())),
        jtmb_(std::move(jtmb)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module &module) override {
    llvm::orc::JITTargetMachineBuilder jtmb = jtmb_;
    auto tm = jtmb.createTargetMachine();
    if (!tm) return tm.takeError();
    llvm::orc::SimpleCompiler compile(**tm);
    return compile(module);
  }

 private:
  const llvm::orc::JITTargetMachineBuilder jtmb_;
};

// Whether this process may make memory executable the way the JIT's linker does; every
// compile would fail at link time otherwise.
llvm::Error probe_executable_memory() {
  const std::string why = executable_memory_refused();
  if (why.empty()) return llvm::Error::success();
  return llvm::createStringError(std::errc::operation_not_permitted,
                                 "this process may not map executable memory (%s): "
                                 "JIT compilation is impossible here; use ahead-of-time objects "
                                 "(ecjit aot) instead",
                                 why.c_str());
}

}  // namespace

CompiledKernel::~CompiledKernel() {
  if (dylib_) {
    if (llvm::Error err = session_->lljit_->getExecutionSession().removeJITDylib(*dylib_))
      session_->lljit_->getExecutionSession().reportError(std::move(err));
    dylib_ = nullptr;
  }
  if (!tracker_) return;
  if (llvm::Error err = tracker_->remove()) {
    session_->lljit_->getExecutionSession().reportError(std::move(err));
  }
  tracker_.reset();  // before session_, which may own the last reference to the JIT
}

llvm::Expected<std::shared_ptr<JitSession>> JitSession::create() {
  if (auto err = init_llvm_targets()) return std::move(err);
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);

  auto lljit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*jtmb))
          .setCompileFunctionCreator(
              [](llvm::orc::JITTargetMachineBuilder builder)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                return std::make_unique<KernelCompiler>(std::move(builder));
              })
          .create();
  if (!lljit) return lljit.takeError();
  if (auto err = probe_executable_memory()) return std::move(err);
  // Failures reach the caller through the lookup that asked for the code; ORC's default
  // reporter would also print them to the host program's stderr ("JIT session error: ...").
  (*lljit)->getExecutionSession().setErrorReporter([](llvm::Error err) { llvm::consumeError(std::move(err)); });

  std::shared_ptr<JitSession> session(new JitSession());
  session->lljit_ = std::move(*lljit);
  return session;
}

JitSession::~JitSession() = default;

llvm::Expected<std::unique_ptr<CompiledKernel>> JitSession::add(
    std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> module,
    const std::string &symbol) {
  if (!ctx || !module) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "JitSession::add: null context or module");
  }
  // Tie their lifetimes first: the module must go before its context on every path (as
  // parameters their destruction order is the compiler's choice; GCC destroyed the context
  // first and the module's destructor then crashed in LLVMContext::removeModule).
  llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(ctx));
  llvm::Module *mod = tsm.getModuleUnlocked();
  llvm::Function *fn = mod->getFunction(symbol);
  if (!fn || fn->isDeclaration()) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "module '%s' does not define '%s'",
                                   mod->getName().str().c_str(), symbol.c_str());
  }
  // Kernels share one JITDylib; a per-kernel suffix lets two live kernels carry the same
  // generated name (e.g. tuner candidates) without a duplicate-definition error.
  const std::string jit_name = symbol + ".k" + std::to_string(next_id_.fetch_add(1));
  fn->setName(jit_name);
  if (fn->getName() != jit_name) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "module '%s' already defines '%s'",
                                   mod->getName().str().c_str(), jit_name.c_str());
  }

  llvm::orc::JITDylib &dylib = lljit_->getMainJITDylib();
  llvm::orc::ResourceTrackerSP tracker = dylib.createResourceTracker();
  if (auto err = lljit_->addIRModule(tracker, std::move(tsm))) {
    return std::move(err);
  }
  // The lookup materializes (compiles and links) the module on this thread.
  auto address = lljit_->lookup(dylib, jit_name);
  if (!address) {
    llvm::Error err = address.takeError();
    if (llvm::Error removed = tracker->remove()) {
      err = llvm::joinErrors(std::move(err), std::move(removed));
    }
    return std::move(err);
  }

  std::unique_ptr<CompiledKernel> kernel(new CompiledKernel());
  kernel->session_ = shared_from_this();
  kernel->tracker_ = std::move(tracker);
  kernel->address_ = address->toPtr<void *>();
  kernel->symbol_ = symbol;
  return std::move(kernel);
}

llvm::Expected<std::unique_ptr<CompiledKernel>> JitSession::add_object(
    std::unique_ptr<llvm::MemoryBuffer> object, const std::string &symbol) {
  if (!object)
    return llvm::createStringError(std::errc::invalid_argument, "JitSession::add_object: null object");
  const std::string name = "ecjit.kernel." + std::to_string(next_id_.fetch_add(1));
  auto dylib = lljit_->createJITDylib(name);
  if (!dylib) return dylib.takeError();
  auto fail = [&](llvm::Error err) -> llvm::Error {
    if (llvm::Error removed = lljit_->getExecutionSession().removeJITDylib(*dylib))
      err = llvm::joinErrors(std::move(err), std::move(removed));
    return err;
  };
  if (llvm::Error err = lljit_->addObjectFile(*dylib, std::move(object))) return fail(std::move(err));
  auto address = lljit_->lookup(*dylib, symbol);
  if (!address) return fail(address.takeError());
  std::unique_ptr<CompiledKernel> kernel(new CompiledKernel());
  kernel->session_ = shared_from_this();
  kernel->dylib_ = &*dylib;
  kernel->address_ = address->toPtr<void *>();
  kernel->symbol_ = symbol;
  return std::move(kernel);
}

}  // namespace ecjit::jit
