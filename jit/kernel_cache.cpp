// KernelCache: one compile per key, waiters share the result, failures are not cached.
#include "jit/kernel_cache.h"

#include <system_error>
#include <utility>

namespace ecjit::jit {
namespace {

// Reads the message of `err` and hands the same error back (payloads are re-wrapped, so
// the caller that ran the factory keeps the original error types).
llvm::Error take_message(llvm::Error err, std::string &message) {
  return llvm::handleErrors(
      std::move(err), [&](std::unique_ptr<llvm::ErrorInfoBase> info) -> llvm::Error {
        if (!message.empty()) message += "; ";
        message += info->message();
        return llvm::Error(std::move(info));
      });
}

}  // namespace

llvm::Expected<KernelCache::Kernel> KernelCache::get_or_compile(const std::string &key,
                                                                Factory factory) {
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      entry = it->second;  // keeps the entry alive even if a failure erases it from the map
      entry->ready.wait(lock, [&] { return entry->done; });
      if (entry->kernel) {
        ++hits_;
        return entry->kernel;
      }
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "compiling kernel '%s' failed: %s", key.c_str(),
                                     entry->error.c_str());
    }
    entry = std::make_shared<Entry>();
    entries_.emplace(key, entry);
    ++compiles_;
  }

  // This caller owns the compile; the lock is not held while the factory runs.
  llvm::Expected<std::unique_ptr<CompiledKernel>> compiled = factory();
  llvm::Error failure = llvm::Error::success();
  Kernel kernel;
  if (!compiled) {
    failure = compiled.takeError();
  } else if (!*compiled) {
    failure = llvm::createStringError(std::errc::invalid_argument,
                                      "kernel factory for '%s' returned no kernel", key.c_str());
  } else {
    kernel = std::move(*compiled);
  }
  std::string message;
  if (failure) failure = take_message(std::move(failure), message);

  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry->done = true;
    if (kernel) {
      entry->kernel = kernel;
    } else {
      entry->error = message;
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second == entry) entries_.erase(it);
    }
  }
  entry->ready.notify_all();
  if (failure) return std::move(failure);
  return kernel;
}

KernelCache::Kernel KernelCache::find(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second->done) return nullptr;
  return it->second->kernel;
}

void KernelCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second->done ? entries_.erase(it) : std::next(it);
  }
}

uint64_t KernelCache::compiles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

uint64_t KernelCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto &item : entries_) n += item.second->done ? 1 : 0;
  return n;
}

}  // namespace ecjit::jit
