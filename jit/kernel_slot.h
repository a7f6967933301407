// KernelSlot: a kernel entry point the background tuner may replace while calls run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ecjit/codec.h"
#include "ir_builders/strategy.h"

namespace ecjit::jit {

class CompiledKernel;  // jit/jit_session.h

// The kernel ABI: void(const uint8_t *const *in, uint8_t *const *out, size_t len).
using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

// Starts with the static choice; publish() swaps in the tuner's winner. A call loads the
// entry point once (acquire) and runs it to the end, so every kernel ever published is
// kept until the slot goes: a call that started on the old kernel may still be in it.
// Every published kernel computes the same linear map, so output never changes.
class KernelSlot {
 public:
  KernelSlot(std::shared_ptr<const CompiledKernel> code, KernelInfo info);

  KernelFn fn() const { return fn_.load(std::memory_order_acquire); }

  KernelInfo info() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return info_;
  }
  ir::Strategy strategy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return strategy_;
  }
  // `code` null: the running kernel won; only the description changes. Otherwise the new
  // kernel's unroll depth (CompiledKernel::unroll) is described too.
  void publish(std::shared_ptr<const CompiledKernel> code, ir::Strategy strategy,
               const std::string &why);

 private:
  std::atomic<KernelFn> fn_;
  mutable std::mutex mutex_;
  ir::Strategy strategy_;
  KernelInfo info_;
  std::vector<std::shared_ptr<const CompiledKernel>> codes_;
};

}  // namespace ecjit::jit
