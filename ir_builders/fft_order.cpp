// order_fft_steps_by_block: stable sort by block inside each run of block-local steps.
#include "ir_builders/fft_order.h"

#include <algorithm>

namespace ecjit::ir {

std::vector<uint32_t> fft_step_work_slots(const FftStep &step, uint32_t slots) {
  std::vector<uint32_t> p;
  switch (step.kind) {
    case kFftStepFft4:
    case kFftStepIfft4:
      for (uint32_t j = 0; j < 4; ++j) p.push_back(step.a + j * step.dist);
      break;
    case kFftStepZero:
      p.push_back(step.a);
      break;
    default:  // two-pointer steps: A written, B read (or both, for butterflies)
      p.push_back(step.a);
      p.push_back(step.b);
      break;
  }
  p.erase(std::remove_if(p.begin(), p.end(), [slots](uint32_t x) { return x >= slots; }), p.end());
  return p;
}

void order_fft_steps_by_block(std::vector<FftStep> *steps, uint32_t slots, uint32_t block_slots) {
  if (block_slots == 0 || block_slots >= slots) return;
  constexpr uint32_t kGlobal = UINT32_MAX;
  std::vector<uint32_t> block(steps->size());
  for (size_t i = 0; i < steps->size(); ++i) {
    const std::vector<uint32_t> p = fft_step_work_slots((*steps)[i], slots);
    uint32_t b = p.empty() ? kGlobal : p[0] / block_slots;
    for (uint32_t x : p)
      if (x / block_slots != b) b = kGlobal;
    block[i] = b;  // a step on shards only (no work slot) is no step of a schedule: kept in place
  }
  std::vector<size_t> order(steps->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t begin = 0; begin < order.size();) {
    if (block[begin] == kGlobal) {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < order.size() && block[end] != kGlobal) ++end;
    std::stable_sort(order.begin() + long(begin), order.begin() + long(end),
                     [&block](size_t x, size_t y) { return block[x] < block[y]; });
    begin = end;
  }
  std::vector<FftStep> sorted;
  sorted.reserve(steps->size());
  for (size_t i : order) sorted.push_back((*steps)[i]);
  steps->swap(sorted);
}

}  // namespace ecjit::ir
