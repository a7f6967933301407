// kernel_timing: timing buffers in two layouts, candidates timed in turns.
#include "jit/kernel_timing.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace ecjit::jit {

TimingBench::TimingBench(unsigned inputs, unsigned outputs, size_t len) {
  constexpr size_t kPage = 4096, kStagger = 17 * 64;  // 17 lines: another L1 set each time
  const size_t bytes = (len + 2 * kPage - 1) / kPage * kPage;
  std::mt19937 rng(7);
  for (unsigned i = 0; i < inputs + outputs; ++i) {
    auto *p = static_cast<uint8_t *>(std::aligned_alloc(kPage, bytes));
    if (!p) {
      ok_ = false;
      return;
    }
    bufs_.emplace_back(p);
    uint8_t *at[kLayouts] = {p, p + (i * kStagger) % kPage};
    if (i < inputs) {
      for (size_t b = 0; b < bytes; ++b) p[b] = uint8_t(rng());
      for (int l = 0; l < kLayouts; ++l) in_[l].push_back(at[l]);
    } else {
      std::memset(p, 0, bytes);
      for (int l = 0; l < kLayouts; ++l) out_[l].push_back(at[l]);
    }
  }
}

double TimingBench::slice(void *address, size_t len, double ms, int layout) {
  using Fn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);
  Fn fn = reinterpret_cast<Fn>(address);
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  uint64_t runs = 0;
  double elapsed = 0;
  do {
    fn(in_[layout].data(), out_[layout].data(), len);
    ++runs;
    elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  } while (elapsed < ms || runs < 2);
  return double(in_[layout].size()) * double(len) * double(runs) / (elapsed / 1e3);
}

bool time_in_turns(TimingBench &bench, const std::vector<TimedKernel *> &kernels, size_t len, double budget_ms,
                   const std::atomic<bool> *cancel) {
  if (kernels.size() < 2) return true;
  for (TimedKernel *k : kernels) {
    bench.slice(k->address, len, 0, 0);
    for (double &b : k->layout_best) b = 0;
  }
  const double ms = budget_ms / (kTimingRounds * TimingBench::kLayouts);
  for (int round = 0; round < kTimingRounds; ++round)
    for (int layout = 0; layout < TimingBench::kLayouts; ++layout)
      for (TimedKernel *k : kernels) {
        if (cancel && cancel->load(std::memory_order_relaxed)) return false;
        k->layout_best[layout] = std::max(k->layout_best[layout], bench.slice(k->address, len, ms, layout));
      }
  for (TimedKernel *k : kernels) {
    double inverse = 0;
    for (double b : k->layout_best) inverse += 1 / b;
    k->best = TimingBench::kLayouts / inverse;
  }
  return true;
}

}  // namespace ecjit::jit
