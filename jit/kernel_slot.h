// KernelSlot: a kernel entry point the background tuner may replace while calls run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ecjit/kernel_info.h"
#include "ir_builders/strategy.h"
#include "jit/kernel_choice.h"

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
  // `code` null: the running kernel stays (it won, or tuning failed or is still to come) and
  // only the description changes (choice.unroll unused). Otherwise its entry point is swapped
  // in and its unroll depth described. `choice` replaces the static choice's strategy,
  // sentence, source and candidates; `tuning` says whether tuning is still to come (a
  // deferred tuning just started) or over.
  void publish(std::shared_ptr<const CompiledKernel> code, KernelChoice choice, bool tuning = false);

  // Deferred tuning: `start` runs once, on the call whose note_work() brings the input
  // this slot has processed to `after_bytes`, or at start_deferred(), whichever is first.
  // A kernel is tuned once it has done enough work to pay for it, not because it exists:
  // a codec used only for degraded reads never tunes its encoder, and the tuner's compiles
  // and timing runs do not compete with a program's first calls. Set once, before calls.
  void defer(uint64_t after_bytes, std::function<void()> start);
  // Counts `bytes` of input of one call; cheap (one relaxed load) once nothing is deferred.
  void note_work(size_t bytes) {
    if (!deferred_.load(std::memory_order_relaxed)) return;
    const int64_t b = int64_t(bytes);
    if (work_left_.fetch_sub(b, std::memory_order_relaxed) <= b) start_deferred();
  }
  // Runs the deferred start now (if it has not run). Returns whether it ran here.
  bool start_deferred();

 private:
  std::atomic<KernelFn> fn_;
  std::atomic<bool> deferred_{false};
  std::atomic<int64_t> work_left_{0};
  std::function<void()> start_;  // under mutex_
  mutable std::mutex mutex_;
  ir::Strategy strategy_;
  KernelInfo info_;
  std::vector<std::shared_ptr<const CompiledKernel>> codes_;
};

}  // namespace ecjit::jit
