// order_fft_steps_by_block: stable sort by block inside each run of block-local steps.
#include "ir_builders/fft_order.h"

#include <algorithm>

namespace ecjit::ir {

namespace {

// The work slots of a step, at most eight (a three-layer step), without an allocation.
struct WorkSlots {
  uint32_t n = 0;
  uint32_t x[8];
};
static_assert(1 + kFftMaxXorSources <= 8, "an XOR step's slots fit WorkSlots");

WorkSlots work_slots(const FftStep &step, uint32_t slots) {
  WorkSlots w;
  auto add = [&](uint32_t p) {
    if (p < slots) w.x[w.n++] = p;
  };
  switch (step.kind) {
    case kFftStepFft4:
    case kFftStepIfft4:
      for (uint32_t j = 0; j < 4; ++j) add(step.a + j * step.dist);
      break;
    case kFftStepFft8:
    case kFftStepIfft8:
      for (uint32_t j = 0; j < 8; ++j) add(step.a + j * step.dist);
      break;
    case kFftStepZero:
      add(step.a);
      break;
    case kFftStepMul3:
    case kFftStepMulAdd3:
      add(step.a);
      add(step.b);
      add(step.dist);
      add(step.b2);
      break;
    case kFftStepXor2:
    case kFftStepXor3:
    case kFftStepXor4:
    case kFftStepXor5:
    case kFftStepXor6: {
      uint32_t src[kFftMaxXorSources];
      add(step.a);
      for (unsigned j = 0, n = fft_xor_sources(step, src); j < n; ++j) add(src[j]);
      break;
    }
    default:  // two-pointer steps: A written, B read (or both, for butterflies)
      add(step.a);
      add(step.b);
      break;
  }
  return w;
}

}  // namespace

std::vector<uint32_t> fft_step_work_slots(const FftStep &step, uint32_t slots) {
  const WorkSlots w = work_slots(step, slots);
  return std::vector<uint32_t>(w.x, w.x + w.n);
}

namespace {

// Union-find over work slots, reset per run (only the slots a run names are touched).
struct Components {
  std::vector<uint32_t> parent, size;
  std::vector<uint32_t> touched;
  explicit Components(uint32_t slots) : parent(slots), size(slots, 1) {
    for (uint32_t i = 0; i < slots; ++i) parent[i] = i;
  }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  // Joins x and y; false when the joined component would pass `limit` slots.
  bool join(uint32_t x, uint32_t y, uint32_t limit) {
    x = find(x), y = find(y);
    if (x == y) return true;
    if (size[x] + size[y] > limit) return false;
    if (size[x] < size[y]) std::swap(x, y);
    parent[y] = x;
    size[x] += size[y];
    touched.push_back(y);
    touched.push_back(x);
    return true;
  }
  void reset() {
    for (uint32_t x : touched) parent[x] = x, size[x] = 1;
    touched.clear();
  }
};

}  // namespace

void order_fft_steps_by_block(std::vector<FftStep> *steps, uint32_t slots, uint32_t block_slots) {
  if (block_slots == 0 || block_slots >= slots) return;
  constexpr uint32_t kGlobal = UINT32_MAX, kBarrier = UINT32_MAX - 1;
  std::vector<uint32_t> block(steps->size());
  std::vector<WorkSlots> work(steps->size());
  for (size_t i = 0; i < steps->size(); ++i) {
    work[i] = work_slots((*steps)[i], slots);
    const WorkSlots &p = work[i];
    uint32_t b = p.n == 0 ? kBarrier : p.x[0] / block_slots;
    for (uint32_t j = 0; j < p.n; ++j)
      if (p.x[j] / block_slots != b) b = kGlobal;
    block[i] = b;  // a step on shards only (no work slot) is no step of a schedule: kept in place
  }
  std::vector<size_t> order(steps->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Runs of local steps: by block.
  for (size_t begin = 0; begin < order.size();) {
    if (block[begin] >= kBarrier) {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < order.size() && block[end] < kBarrier) ++end;
    std::sort(order.begin() + long(begin), order.begin() + long(end),  // stable: ties by index
              [&block](size_t x, size_t y) { return block[x] != block[y] ? block[x] < block[y] : x < y; });
    begin = end;
  }
  // Runs of steps spanning blocks (a transform's upper layers, span >= block_slots): their
  // butterflies connect only slots a multiple of the span apart, so a run falls apart into
  // small sets of slots (the upper 6 layers of 16384 points over blocks of 256: 64 slots
  // each). Each run, cut where a set would pass block_slots, is stably sorted by set: a set's
  // tiles stay in L2 through every layer of the run instead of each layer sweeping them all.
  Components c(slots);
  std::vector<uint32_t> key(steps->size(), 0);
  for (size_t begin = 0; begin < order.size();) {
    if (block[begin] != kGlobal) {
      ++begin;
      continue;
    }
    size_t end = begin;
    for (; end < order.size() && block[end] == kGlobal; ++end) {
      const WorkSlots &p = work[end];
      bool fits = true;
      for (uint32_t j = 1; j < p.n && fits; ++j) fits = c.join(p.x[0], p.x[j], block_slots);
      if (!fits) break;
    }
    if (end == begin) {  // one step alone passes the limit: it stays where it is
      c.reset();
      ++begin;
      continue;
    }
    for (size_t i = begin; i < end; ++i) key[i] = c.find(work[i].x[0]);
    std::sort(order.begin() + long(begin), order.begin() + long(end),  // stable: ties by index
              [&key](size_t x, size_t y) { return key[x] != key[y] ? key[x] < key[y] : x < y; });
    c.reset();
    begin = end;
  }
  std::vector<FftStep> sorted;
  sorted.reserve(steps->size());
  for (size_t i : order) sorted.push_back((*steps)[i]);
  steps->swap(sorted);
}

}  // namespace ecjit::ir
