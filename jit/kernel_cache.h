// KernelCache: compiled kernels by configuration key, each compiled at most once at a time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "jit/jit_session.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

// In-memory map from a configuration key (built by the caller from spec, op, erasure set,
// target, strategy, length class) to a shared compiled kernel.
//
// Thread-safe. Concurrent first requests for one key run the factory exactly once; the
// other callers wait for it (requests for other keys are not blocked: factories run
// without the cache lock, and may themselves use the cache for other keys). A failed
// compile is reported to the caller that ran it (its original llvm::Error) and to every
// waiter (a StringError with the same message), and is not cached: a later call retries.
//
// Ownership: the cache shares each kernel with its callers; a kernel's JIT memory is freed
// when the cache is destroyed or cleared and the last caller's shared_ptr is gone.
class KernelCache {
 public:
  using Kernel = std::shared_ptr<const CompiledKernel>;
  using Factory = llvm::unique_function<llvm::Expected<std::unique_ptr<CompiledKernel>>()>;

  KernelCache() = default;
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;
  // Must not run while a get_or_compile() on this cache is in progress.
  ~KernelCache() = default;

  // The kernel for `key`, compiled by `factory` if no caller has done so yet. A factory
  // that returns a null kernel is reported as an error. Errors: the factory's error.
  llvm::Expected<Kernel> get_or_compile(const std::string &key, Factory factory);

  // The cached kernel for `key`, or null when it is absent or still compiling.
  Kernel find(const std::string &key) const;

  // Drops every finished entry (compiles in progress finish and are kept).
  void clear();

  uint64_t compiles() const;  // factory runs, including failed ones
  uint64_t hits() const;      // calls answered without running the factory
  size_t size() const;        // finished, successful entries

 private:
  struct Entry {
    bool done = false;
    Kernel kernel;        // set when done and the compile succeeded
    std::string error;    // set when done and the compile failed
    std::condition_variable ready;
  };

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
  uint64_t compiles_ = 0;
  uint64_t hits_ = 0;
};

}  // namespace ecjit::jit
