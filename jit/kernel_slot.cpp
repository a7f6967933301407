// KernelSlot: publishing a tuned kernel into a running slot.
#include "jit/kernel_slot.h"

#include "jit/jit_session.h"

namespace ecjit::jit {

KernelSlot::KernelSlot(std::shared_ptr<const CompiledKernel> code, KernelInfo info)
    : fn_(reinterpret_cast<KernelFn>(code->address())), strategy_(code->strategy()),
      info_(std::move(info)) {
  codes_.push_back(std::move(code));
}

void KernelSlot::publish(std::shared_ptr<const CompiledKernel> code, ir::Strategy strategy,
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

}  // namespace ecjit::jit
