// JitImpl: the Jit behind the public interface: codecs by spec over the jit layer's KernelService.
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "codes/matrix.h"
#include "codes/gf.h"
#include "ecjit/jit.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"
#include "jit/kernel_service.h"
#include "runtime/thread_pool.h"

namespace ecjit::runtime {

// The kernels the runtime's codecs run come from the jit layer's KernelService.
using jit::Kernel;
using jit::KernelFn;
using jit::KernelMode;
using jit::KernelSlot;
using jit::ShapeFn;
using jit::VerifyFn;
using jit::kMaxFftKernelSlots;

// The public Jit: codecs by spec over one KernelService (compile policy, caches, tuning)
// and the worker threads of split calls.
class JitImpl final : public Jit, public std::enable_shared_from_this<JitImpl> {
 public:
  static Result<std::shared_ptr<JitImpl>> make(const JitOptions &options);

  Result<std::shared_ptr<const Codec>> codec(const CodeSpec &spec) override;
  Result<std::shared_ptr<const ArrayCodec>> array_codec(const std::string &spec_text) override;
  const JitOptions &options() const override { return options_; }
  JitStats stats() const override;
  void wait_for_tuning() override;

  // The service's kernels (jit/kernel_service.h), under this Jit's code names.
  Result<Kernel> kernel(const CodeSpec &spec, const std::string &what, const codes::Field &field,
                        const codes::Matrix &coeffs, const KernelMode &mode = KernelMode(),
                        const codes::Matrix &pre = codes::Matrix()) {
    return service_->kernel(spec.to_string(), what, field, coeffs, mode, pre);
  }
  Result<Kernel> shape_kernel(const codes::Field &field, unsigned inputs, unsigned outputs,
                              std::optional<ir::Strategy> strategy = std::nullopt,
                              bool accumulate = false) {
    return service_->shape_kernel(field, inputs, outputs, strategy, accumulate);
  }
  std::optional<ir::Strategy> shape_strategy(unsigned field_bits) const {
    return service_->shape_strategy(field_bits);
  }
  bool xor_kernel_ready(const ir::XorKernelDesc &desc) const { return service_->xor_kernel_ready(desc); }
  Result<Kernel> tuned_xor_kernel(const jit::XorPlan &plan) { return service_->tuned_xor_kernel(plan); }
  Result<jit::XorPacketChoice> xor_packet(const CodeSpec &spec) { return service_->xor_packet(spec); }
  bool tuned_xor_kernel_ready(const jit::XorPlan &plan) const { return service_->tuned_xor_kernel_ready(plan); }
  Result<Kernel> xor_kernel(const ir::XorKernelDesc &desc, bool shared) {
    return service_->xor_kernel(desc, shared);
  }
  Result<Kernel> fft_kernel(const ir::FftKernelDesc &desc) { return service_->fft_kernel(desc); }
  bool submit_background(std::function<void()> task, std::function<bool()> still_wanted,
                         bool optional) {
    return service_->submit_background(std::move(task), std::move(still_wanted), optional);
  }
  const ir::TargetInfo &target_info() const { return service_->target_info(); }
  ir::Strategy resolved(unsigned field_bits) const { return service_->resolved(field_bits); }

  // JitOptions::threads resolved (0 -> hardware threads), >= 1.
  unsigned threads() const { return threads_; }
  // The workers behind threads() > 1 (started on first use); null when threads() == 1.
  ThreadPool *pool() const { return pool_.get(); }

 private:
  JitImpl() = default;
  JitOptions options_;
  // Codecs handed out and still alive, by spec string: a repeated request returns the same
  // immutable codec without rebuilding the code or looking up its encoder.
  std::mutex codecs_mutex_;
  std::unordered_map<std::string, std::weak_ptr<const Codec>> codecs_;
  unsigned threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;  // threads_ - 1 workers, joined when the Jit goes
  // Declared last so that it goes first: its background thread may run codecs' tasks.
  std::unique_ptr<jit::KernelService> service_;
};

}  // namespace ecjit::runtime
