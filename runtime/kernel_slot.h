// KernelSlot: a kernel entry point the background tuner may replace while calls run.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "ecjit/codec.h"
#include "ir_builders/strategy.h"
#include "jit/jit_session.h"

namespace ecjit::runtime {

using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

// Starts with the static choice; publish() swaps in the tuner's winner. A call loads the
// entry point once (acquire) and runs it to the end, so every kernel ever published is
// kept until the slot goes: a call that started on the old kernel may still be in it.
// Every published kernel computes the same linear map, so output never changes.
class KernelSlot {
 public:
  KernelSlot(std::shared_ptr<const jit::CompiledKernel> code, KernelInfo info)
      : fn_(reinterpret_cast<KernelFn>(code->address())), strategy_(code->strategy()),
        info_(std::move(info)) {
    codes_.push_back(std::move(code));
  }

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
  void publish(std::shared_ptr<const jit::CompiledKernel> code, ir::Strategy strategy,
               const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex_);
    strategy_ = strategy;
    info_.strategy = ir::strategy_name(strategy);
    info_.why = why;
    if (!code) return;
    info_.unroll = code->unroll();
    const KernelFn fn = reinterpret_cast<KernelFn>(code->address());
    codes_.push_back(std::move(code));
    fn_.store(fn, std::memory_order_release);
  }

 private:
  std::atomic<KernelFn> fn_;
  mutable std::mutex mutex_;
  ir::Strategy strategy_;
  KernelInfo info_;
  std::vector<std::shared_ptr<const jit::CompiledKernel>> codes_;
};

}  // namespace ecjit::runtime
