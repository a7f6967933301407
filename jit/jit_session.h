// JitSession: ORC LLJIT for the host; turns optimized modules into callable kernels.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/kernel_choice.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/Error.h"

namespace llvm {
class LLVMContext;
class MemoryBuffer;
class Module;
namespace orc {
class JITDylib;
class LLJIT;
class ResourceTracker;
}  // namespace orc
}  // namespace llvm

namespace ecjit::jit {

class JitSession;

// Machine code for one kernel inside a JitSession. Destroying it releases its JIT memory.
// It holds a shared reference to its session, so the session lives as long as any of its
// kernels. Immutable after creation: address() may be called from any thread; the code
// it points to stays valid until the CompiledKernel is destroyed.
class CompiledKernel {
 public:
  ~CompiledKernel();
  void *address() const { return address_; }
  // The name the kernel was added under (inside the JIT it carries a unique suffix).
  const std::string &symbol() const { return symbol_; }
  // How the code was chosen (KernelChoice): set once by whoever compiled it, before it is shared.
  ir::Strategy strategy() const { return choice_.strategy; }
  unsigned unroll() const { return choice_.unroll; }
  const KernelChoice &choice() const { return choice_; }
  void describe(KernelChoice choice) { choice_ = std::move(choice); }

 private:
  friend class JitSession;
  CompiledKernel() = default;
  std::shared_ptr<JitSession> session_;
  llvm::IntrusiveRefCntPtr<llvm::orc::ResourceTracker> tracker_;
  llvm::orc::JITDylib *dylib_ = nullptr;  // kernels added as objects live in their own dylib
  void *address_ = nullptr;
  std::string symbol_;
  KernelChoice choice_;
};

// One LLJIT for the host process. Code generation uses a TargetMachine for the detected
// host, specialized per function by its "target-cpu"/"target-features" attributes (set
// from TargetSpec::resolve()), so masked tiers ("host-avx2") compile in the same session.
// Thread-safe: add() may run concurrently from many threads (each compiles on its own
// TargetMachine, on the calling thread).
class JitSession : public std::enable_shared_from_this<JitSession> {
 public:
  // Errors: the host has no LLVM backend, or ORC could not set up the process.
  static llvm::Expected<std::shared_ptr<JitSession>> create();
  ~JitSession();

  // Takes ownership of an already-optimized module and its context (see pipeline.h; its
  // data layout must be the host's), compiles it with the functions' own target
  // attributes, and returns the kernel for `symbol`. The module's other external symbols
  // share one namespace with other live kernels' (kernel functions themselves are renamed
  // internally, so two live kernels may have the same `symbol`). Thread-safe.
  // Errors: std::errc::invalid_argument when `symbol` is not defined by the module; ORC
  // errors when code generation or linking fails (nothing is left in the JIT then).
  llvm::Expected<std::unique_ptr<CompiledKernel>> add(std::unique_ptr<llvm::LLVMContext> ctx,
                                                      std::unique_ptr<llvm::Module> module,
                                                      const std::string &symbol);

  // Links an object file (from pipeline.h's emit(kObject) for the host, or the disk cache)
  // into a JITDylib of its own, so two live kernels may define the same symbol, and
  // returns the kernel for `symbol`. The object must not reference external symbols.
  // Thread-safe. Errors: the object does not parse, does not define `symbol`, or fails to
  // link (nothing is left in the JIT then).
  llvm::Expected<std::unique_ptr<CompiledKernel>> add_object(
      std::unique_ptr<llvm::MemoryBuffer> object, const std::string &symbol);

 private:
  friend class CompiledKernel;
  JitSession() = default;
  std::unique_ptr<llvm::orc::LLJIT> lljit_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace ecjit::jit
