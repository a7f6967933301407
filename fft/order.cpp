// order_fft_steps_by_block: stable sort by block inside each run of block-local steps.
#include "fft/order.h"

#include <algorithm>

namespace ecjit::sched {

static_assert(1 + kFftMaxXorSources <= 16, "an XOR step's slots fit FftWorkSlots");

FftWorkSlots fft_step_work_slots(const FftStep &step, uint32_t slots) {
  FftWorkSlots w;
  auto add = [&](uint32_t p) {
    if (p < slots) w.x[w.n++] = p;
  };
  switch (step.kind) {
    case kFftStepFft4:
    case kFftStepIfft4:
    case kFftStepFft8:
    case kFftStepIfft8:
    case kFftStepFft4D:  // its own slots only (fft_order.h)
    case kFftStepFft8D:
    case kFftStepTop4D:
    case kFftStepTop8D:
    case kFftStepIfft4In:  // b: shards (read), b2: a table array
    case kFftStepIfft8In:
    case kFftStepFft4Out:  // b: restored shards (written)
    case kFftStepFft8Out:
      for (uint32_t j = 0, n = fft_step_slots(step.kind); j < n; ++j) {
        add(step.a + j * step.dist);
        if (step.into && step.kind != kFftStepIfft4In && step.kind != kFftStepIfft8In)  // (theirs: a prefetch)
          add(step.into - 1 + j * step.dist);
      }
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

namespace {

constexpr uint32_t kGlobal = kFftBlockSpans, kBarrier = kFftBlockNone;

// A step's block: kBarrier with no work slot, or where nothing may move past it (a
// derivative-fused step reads other groups, which must not have run yet), kGlobal when its
// slots span blocks.
uint32_t step_block(const FftStep &step, uint32_t slots, uint32_t block_slots) {
  if (fft_step_reads_groups(step.kind)) return kBarrier;
  const FftWorkSlots p = fft_step_work_slots(step, slots);
  if (p.n == 0) return kBarrier;
  const uint32_t b = p.x[0] / block_slots;
  for (uint32_t j = 1; j < p.n; ++j)
    if (p.x[j] / block_slots != b) return kGlobal;
  return b;
}

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
  std::vector<uint32_t> block(steps->size());
  std::vector<FftWorkSlots> work(steps->size());
  for (size_t i = 0; i < steps->size(); ++i) {
    work[i] = fft_step_work_slots((*steps)[i], slots);
    block[i] = step_block((*steps)[i], slots, block_slots);  // no work slot: no step of a schedule, kept in place
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
      const FftWorkSlots &p = work[end];
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

std::vector<uint32_t> fft_step_blocks(const std::vector<FftStep> &steps, uint32_t slots, uint32_t block_slots) {
  std::vector<uint32_t> blocks(steps.size(), kGlobal);
  if (block_slots == 0) return blocks;
  for (size_t i = 0; i < steps.size(); ++i) blocks[i] = step_block(steps[i], slots, block_slots);
  return blocks;
}

std::vector<FftSegment> order_fft_ends_by_block(std::vector<FftStep> *pre, const std::vector<FftStep> &core,
                                                std::vector<FftStep> *post, uint32_t slots, uint32_t block_slots,
                                                const std::vector<uint32_t> *core_blocks) {
  std::vector<FftSegment> out;
  auto add = [&out](uint32_t list, size_t begin, size_t end) {
    if (begin == end) return;
    if (!out.empty() && out.back().list == list && out.back().end == begin)
      out.back().end = uint32_t(end);
    else
      out.push_back({list, uint32_t(begin), uint32_t(end)});
  };
  auto whole = [&] {
    out.clear();
    add(0, 0, pre->size());
    add(1, 0, core.size());
    add(2, 0, post->size());
    return out;
  };
  if (block_slots == 0 || block_slots >= slots) return whole();
  // The ends' blocks (every step local), then the lists stably sorted by block.
  auto blocks_of = [&](const std::vector<FftStep> &list, std::vector<uint32_t> *blocks) {
    blocks->resize(list.size());
    for (size_t i = 0; i < list.size(); ++i)
      if (((*blocks)[i] = step_block(list[i], slots, block_slots)) >= kBarrier) return false;
    return true;
  };
  std::vector<uint32_t> pre_block, post_block, own_blocks;
  if (!blocks_of(*pre, &pre_block) || !blocks_of(*post, &post_block)) return whole();
  if (!core_blocks || core_blocks->size() != core.size())
    core_blocks = &(own_blocks = fft_step_blocks(core, slots, block_slots));
  const std::vector<uint32_t> &core_block = *core_blocks;
  // core's first run of local steps [0, first) and last [last, size), each in block order.
  size_t first = 0, last = core.size();
  while (first < core.size() && core_block[first] < kBarrier) ++first;
  while (last > first && core_block[last - 1] < kBarrier) --last;
  if (!std::is_sorted(core_block.begin(), core_block.begin() + long(first)) ||
      !std::is_sorted(core_block.begin() + long(last), core_block.end()))
    return whole();
  auto sort_by_block = [](std::vector<FftStep> *list, std::vector<uint32_t> *blocks) {
    if (std::is_sorted(blocks->begin(), blocks->end())) return;  // pre: slot order already
    std::vector<size_t> order(list->size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return (*blocks)[x] < (*blocks)[y]; });
    std::vector<FftStep> sorted;
    std::vector<uint32_t> sorted_blocks;
    for (size_t i : order) sorted.push_back((*list)[i]), sorted_blocks.push_back((*blocks)[i]);
    list->swap(sorted);
    blocks->swap(sorted_blocks);
  };
  sort_by_block(pre, &pre_block);
  sort_by_block(post, &post_block);
  // Merges block by block: pre's steps of a block, then core's [from, to) of it, then post's
  // (post only where the whole core is one local run; else after the middle, below).
  struct Cursor {
    uint32_t list;
    const std::vector<uint32_t> &blocks;
    size_t at, end;
  };
  auto merge = [&](std::vector<Cursor> cursors) {
    for (;;) {
      uint32_t b = kBarrier;
      for (const Cursor &c : cursors)
        if (c.at < c.end) b = std::min(b, c.blocks[c.at]);
      if (b == kBarrier) return;
      for (Cursor &c : cursors) {
        const size_t from = c.at;
        while (c.at < c.end && c.blocks[c.at] == b) ++c.at;
        add(c.list, from, c.at);
      }
    }
  };
  if (first == core.size()) {  // one local run: every block filled, transformed and finished in turn
    merge({{0, pre_block, 0, pre->size()}, {1, core_block, 0, core.size()}, {2, post_block, 0, post->size()}});
    return out;
  }
  merge({{0, pre_block, 0, pre->size()}, {1, core_block, 0, first}});
  add(1, first, last);
  merge({{1, core_block, last, core.size()}, {2, post_block, 0, post->size()}});
  return out;
}

}  // namespace ecjit::sched
