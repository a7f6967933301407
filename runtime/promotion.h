// promote_in_background: the one way a hot set (erasure set, update / partial set, XOR op) asks for its own kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// Queues work(set) on the Jit's background thread unless `asked` is set already (it is set
// now). The task holds `set` weakly: it runs only while the set lives and alive() holds (the
// codec is not gone). When the queue refuses (optional and the backlog is full), `asked` and
// `bytes` are cleared, so traffic past the threshold asks again later.
template <typename Set>
void promote_in_background(JitImpl &jit, const std::shared_ptr<const Set> &set, std::atomic<bool> &asked,
                           std::atomic<uint64_t> &bytes,
                           std::function<void(const std::shared_ptr<const Set> &)> work,
                           std::function<bool()> alive, bool optional) {
  if (asked.exchange(true)) return;
  std::weak_ptr<const Set> weak = set;
  auto task = [weak, work = std::move(work), alive] {
    if (std::shared_ptr<const Set> s = weak.lock(); s && alive()) work(s);
  };
  auto wanted = [weak, alive] { return !weak.expired() && alive(); };
  if (!jit.submit_background(std::move(task), std::move(wanted), optional)) {
    bytes.store(0, std::memory_order_relaxed);
    asked.store(false, std::memory_order_release);
  }
}

}  // namespace ecjit::runtime
