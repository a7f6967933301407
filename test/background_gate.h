// BackgroundGate: holds a Jit's background thread, so a test knows what its calls run.
#pragma once

#include <gtest/gtest.h>

#include <future>

#include "ecjit/jit.h"
#include "runtime/jit_impl.h"

namespace ecjit::test {

// Queues a task that blocks the Jit's background thread until release() (or the gate's
// end): work queued after it (a codec's own kernels, promotions, matrices made in the
// background) cannot land before then. Without it a test that reads what serves a first
// call races the compile it asserts is still pending.
class BackgroundGate {
 public:
  explicit BackgroundGate(Jit &jit) {
    auto &impl = static_cast<runtime::JitImpl &>(jit);
    std::shared_future<void> open = open_.get_future().share();
    EXPECT_TRUE(impl.submit_background([open] { open.wait(); }, nullptr, /*optional=*/false));
  }
  ~BackgroundGate() { release(); }
  BackgroundGate(const BackgroundGate &) = delete;
  BackgroundGate &operator=(const BackgroundGate &) = delete;
  void release() {
    if (!released_) open_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> open_;
  bool released_ = false;
};

}  // namespace ecjit::test
