// kernel_timing: timing buffers and timing in turns, shared by the strategy tuner and the XOR schedule tuner.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ecjit/kernel_decision.h"

namespace ecjit::jit {

// Buffers for timing kernels `void fn(const uint8_t *const *in, uint8_t *const *out, size_t
// len)`: `inputs` random shards and `outputs` shards of `len` bytes, in two layouts, because
// how a kernel fares depends on where the caller's shards start:
//  0: every shard page-aligned (O_DIRECT and mmap buffers): all start at the same page
//     offset, and a one-vector loop loses most to L1 set conflicts (RS(4,2) gfni on Zen 4:
//     60 GB/s against 74 staggered; unrolled 4x, 74 in both);
//  1: shards staggered to distinct page offsets (heap buffers), where unrolling can cost
//     (RS(10,4) AVX2 split tables: 17.7 GB/s one vector per step, 16.6 unrolled 2x).
class TimingBench {
 public:
  static constexpr int kLayouts = 2;
  TimingBench(unsigned inputs, unsigned outputs, size_t len);
  bool ok() const { return ok_; }  // false when a buffer could not be allocated
  // Input bytes per second of one timing slice of about `ms` (at least 2 calls) in `layout`.
  double slice(void *address, size_t len, double ms, int layout);

 private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<uint8_t, Free>> bufs_;
  std::vector<const uint8_t *> in_[kLayouts];
  std::vector<uint8_t *> out_[kLayouts];
  bool ok_ = true;
};

// A kernel being timed: its entry point and, after time_in_turns, its rates.
struct TimedKernel {
  void *address = nullptr;
  double layout_best[TimingBench::kLayouts] = {};  // best slice per layout, bytes per second
  double best = 0;                                 // their harmonic mean: the score
  // The kernel's score as a value, for KernelDecision::candidates and packets.
  MeasuredCandidate measured(std::string name, unsigned unroll = 1) const { return {std::move(name), unroll, best / 1e9}; }
};

// Times `kernels` on `bench` in turns - each a warm-up call, then kTimingRounds slices per
// layout of budget_ms / (rounds x layouts) - so that a burst of load from another process
// cannot single one out; each keeps its best slice per layout and is scored by the harmonic
// mean of the two. False (scores unset) when `cancel` is raised. One kernel: nothing to do.
constexpr int kTimingRounds = 5;
bool time_in_turns(TimingBench &bench, const std::vector<TimedKernel *> &kernels, size_t len, double budget_ms,
                   const std::atomic<bool> *cancel = nullptr);

}  // namespace ecjit::jit
