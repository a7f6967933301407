// KernelSlot: publishing a tuned kernel into a running slot.
#include "jit/kernel_slot.h"

#include <algorithm>
#include <cstdint>

#include "jit/jit_session.h"

namespace ecjit::jit {

KernelSlot::KernelSlot(std::shared_ptr<const CompiledKernel> code, KernelInfo info)
    : fn_(reinterpret_cast<KernelFn>(code->address())), strategy_(code->strategy()),
      info_(std::move(info)) {
  codes_.push_back(std::move(code));
}

void KernelSlot::publish(std::shared_ptr<const CompiledKernel> code, KernelChoice choice, bool tuning) {
  std::lock_guard<std::mutex> lock(mutex_);
  strategy_ = choice.strategy;
  info_.strategy = ir::strategy_name(choice.strategy);
  info_.why = std::move(choice.why);
  info_.decision.source = choice.source;
  info_.decision.candidates = std::move(choice.measured);
  info_.decision.tuning = tuning;
  info_.decision.tune_after_bytes = 0;
  if (!code) return;
  info_.unroll = code->unroll();
  const KernelFn fn = reinterpret_cast<KernelFn>(code->address());
  codes_.push_back(std::move(code));
  fn_.store(fn, std::memory_order_release);
}

void KernelSlot::defer(uint64_t after_bytes, std::function<void()> start) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    start_ = std::move(start);
    work_left_.store(int64_t(std::min<uint64_t>(after_bytes, uint64_t(INT64_MAX) / 2)),
                     std::memory_order_relaxed);
  }
  deferred_.store(true, std::memory_order_release);
}

bool KernelSlot::start_deferred() {
  std::function<void()> start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!deferred_.exchange(false, std::memory_order_acq_rel)) return false;
    start = std::move(start_);
    start_ = nullptr;
  }
  if (start) start();  // outside the lock: it publishes a description into this slot
  return true;
}

}  // namespace ecjit::jit
