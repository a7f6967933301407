// order_fft_steps_by_block against the schedule as built: same values on every pointer, run by a scalar interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fft/mul_tables.h"
#include "fft/order.h"
#include "fft/prune.h"
#include "fft/schedule.h"
#include "fft_step_interpreter.h"

namespace ecjit {
namespace {

using sched::FftStep;
using test::fft_run_steps;

// Consecutive local steps (all work slots in one block) whose blocks differ: what the order
// reduces.
size_t block_switches(const std::vector<FftStep> &steps, uint32_t slots, uint32_t block) {
  size_t switches = 0;
  int64_t last = -1;
  for (const FftStep &s : steps) {
    const sched::FftWorkSlots p = sched::fft_step_work_slots(s, slots);
    if (p.empty()) continue;
    const uint32_t b = p.x[0] / block;
    if (!std::all_of(p.begin(), p.end(), [&](uint32_t x) { return x / block == b; })) {
      last = -1;
      continue;
    }
    if (last >= 0 && int64_t(b) != last) ++switches;
    last = b;
  }
  return switches;
}

// Encode schedules and decode cores of several codes, every block size from 4 slots up: the
// reordered schedule computes the same value on every pointer from random contents, keeps
// every step, and groups the local runs (fewer block switches on codes large enough to have
// several blocks).
TEST(FftOrder, BlockOrderComputesTheSameValues) {
  std::mt19937_64 rng(28);
  for (int which = 0; which < 4; ++which)  // encode, decode core; two- then three-layer steps
  for (auto [k, m] : {std::pair{6u, 20u}, {32u, 32u}, {50u, 3u}, {128u, 128u}, {1000u, 24u}}) {
      const bool radix8 = which >= 2;
      auto s = which % 2 == 0 ? sched::fft_encode_schedule(k, m, true, radix8) : sched::fft_decode_core(k, m, radix8);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      size_t pointers = 0;  // every pointer a step names
      for (const FftStep &st : s->steps)
        pointers = std::max<size_t>(pointers, 1 + std::max(st.a + 7 * st.dist, st.b + (sched::fft_step_slots(st.kind) ? 7 * st.dist : 0)));
      for (uint32_t block = 4; block < s->slots; block *= 4) {
        std::vector<FftStep> ordered = s->steps;
        sched::order_fft_steps_by_block(&ordered, s->slots, block);
        ASSERT_EQ(ordered.size(), s->steps.size());
        std::vector<uint16_t> a(pointers), b;
        for (auto &e : a) e = uint16_t(rng());
        b = a;
        fft_run_steps(s->steps, s->tables, a);
        fft_run_steps(ordered, s->tables, b);
        ASSERT_EQ(a, b) << (which % 2 ? "decode core " : "encode ") << k << ":" << m << " block " << block
                        << (radix8 ? " (three-layer steps)" : "");
        const size_t before = block_switches(s->steps, s->slots, block);
        const size_t after = block_switches(ordered, s->slots, block);
        EXPECT_LE(after, before) << k << ":" << m << " block " << block;
        // (Three-layer steps already run a block's slots together in 128:128's lower layers.)
        if (s->slots >= 256 && block == 16 && !radix8) EXPECT_LT(after, before) << k << ":" << m << " block " << block;
      }
    }
}

// Misses of an LRU cache holding `capacity` work slots, over the slots each step touches:
// how often a tile would come from beyond L2.
size_t lru_misses(const std::vector<FftStep> &steps, uint32_t slots, size_t capacity) {
  std::list<uint32_t> lru;
  std::unordered_map<uint32_t, std::list<uint32_t>::iterator> at;
  size_t misses = 0;
  for (const FftStep &s : steps)
    for (uint32_t x : sched::fft_step_work_slots(s, slots)) {
      auto it = at.find(x);
      if (it != at.end()) {
        lru.erase(it->second);
      } else {
        ++misses;
        if (lru.size() == capacity) {
          at.erase(lru.back());
          lru.pop_back();
        }
      }
      lru.push_front(x);
      at[x] = lru.begin();
    }
  return misses;
}

// The upper layers (steps spanning blocks) run set by set too: with a cache of one block's
// slots, a large transform misses far less than in layer order (which misses every slot of
// every upper layer). Checked to fail with the set ordering taken out (only the local runs
// sorted): 1024:1024 misses 6144 instead of 3072, 4096:4096 32768 instead of 12288 (layer
// order: 11264, 53248), the 1000:24 core 24513 instead of 18623 (28648).
TEST(FftOrder, UpperLayersRunSetBySet) {
  for (auto [k, m, core] : {std::tuple{1024u, 1024u, false}, {4096u, 4096u, false}, {1000u, 24u, true}}) {
    auto s = core ? sched::fft_decode_core(k, m) : sched::fft_encode_schedule(k, m);
    ASSERT_TRUE(s.ok());
    const uint32_t block = 64;
    std::vector<FftStep> ordered = s->steps;
    sched::order_fft_steps_by_block(&ordered, s->slots, block);
    const size_t before = lru_misses(s->steps, s->slots, block), after = lru_misses(ordered, s->slots, block);
    // Encodes: half the misses or fewer, at most ~8 sweeps of all slots. The decode core's
    // formal derivative joins sets across the whole range: a quarter fewer.
    if (core) {
      EXPECT_LT(after * 4, before * 3) << k << ":" << m << " misses " << before << " -> " << after;
    } else {
      EXPECT_LT(after * 2, before) << k << ":" << m << " misses " << before << " -> " << after;
      EXPECT_LE(after, size_t(s->slots) * 8) << k << ":" << m;
    }
  }
}

// A decode's ends interleaved with its core block by block (order_fft_ends_by_block): the
// segments cover every step of the three lists once and compute on every pointer what pre,
// core and post compute run one after the other - for the engine's lists: a shard times a
// multiplier or zero per slot, the core ordered by block and pruned to the restored slots,
// those slots multiplied in place in random order. Where the core has several blocks the ends
// do interleave (more than three segments) and a cache of one block's slots misses less; a
// segment order that runs post first is caught.
TEST(FftOrder, DecodeEndsRunBlockByBlock) {
  std::mt19937_64 rng(33);
  for (bool radix8 : {false, true})
    for (auto [k, m] : {std::pair{6u, 20u}, {32u, 32u}, {128u, 128u}, {1000u, 24u}}) {
      auto s = sched::fft_decode_core(k, m, radix8);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      const uint32_t n = s->slots, tables = uint32_t(s->tables.size() / sched::kFftMulTableBytes);
      for (uint32_t block : {16u, 64u, 4096u}) {
        const std::string what = std::to_string(k) + ":" + std::to_string(m) + " block " + std::to_string(block) +
                                 (radix8 ? " (three-layer steps)" : "");
        std::vector<FftStep> core = s->steps, pre, post;
        sched::order_fft_steps_by_block(&core, n, block);
        std::vector<bool> live(2 * size_t(n), false);
        for (uint32_t x = 0; x < n; ++x)
          pre.push_back(rng() % 3 ? FftStep{sched::kFftStepMul, x, n + x, uint32_t(rng() % tables)}
                                  : FftStep{sched::kFftStepZero, x, 0, 0});
        for (uint32_t x = 0; x < n; ++x)
          if (rng() % 2) post.push_back({sched::kFftStepMul, x, x, uint32_t(rng() % tables)}), live[x] = true;
        std::shuffle(post.begin(), post.end(), rng);
        auto pruned = sched::prune_fft_steps({&pre, &core, &post}, 2 * size_t(n), live);
        pre = pruned[0], core = pruned[1], post = pruned[2];
        std::vector<FftStep> pre2 = pre, post2 = post;
        const std::vector<sched::FftSegment> segs = sched::order_fft_ends_by_block(&pre2, core, &post2, n, block);
        {  // the core's blocks given (as the engine keeps them for a whole core): the same segments
          std::vector<FftStep> pre3 = pre, post3 = post;
          const std::vector<uint32_t> blocks = sched::fft_step_blocks(core, n, block);
          const std::vector<sched::FftSegment> again = sched::order_fft_ends_by_block(&pre3, core, &post3, n, block, &blocks);
          ASSERT_EQ(again.size(), segs.size()) << what;
          for (size_t i = 0; i < segs.size(); ++i)
            ASSERT_TRUE(again[i].list == segs[i].list && again[i].begin == segs[i].begin && again[i].end == segs[i].end);
        }
        const std::vector<FftStep> *lists[3] = {&pre2, &core, &post2};
        std::vector<FftStep> flat;
        std::vector<size_t> covered(3, 0);
        for (const sched::FftSegment &g : segs) {
          ASSERT_LT(g.list, 3u);
          ASSERT_LE(g.end, lists[g.list]->size());
          flat.insert(flat.end(), lists[g.list]->begin() + g.begin, lists[g.list]->begin() + g.end);
          covered[g.list] += g.end - g.begin;
        }
        ASSERT_EQ(covered, (std::vector<size_t>{pre.size(), core.size(), post.size()})) << what;
        std::vector<FftStep> sequential = pre;
        sequential.insert(sequential.end(), core.begin(), core.end());
        sequential.insert(sequential.end(), post.begin(), post.end());
        ASSERT_EQ(flat.size(), sequential.size());
        std::vector<uint16_t> a(2 * size_t(n)), b;
        for (auto &e : a) e = uint16_t(rng());
        b = a;
        fft_run_steps(sequential, s->tables, a);
        fft_run_steps(flat, s->tables, b);
        ASSERT_EQ(a, b) << what;
        if (block * 4 <= n) {
          EXPECT_GT(segs.size(), 3u) << what;
          EXPECT_LT(lru_misses(flat, n, block), lru_misses(sequential, n, block)) << what;
          // Post before the rest: the restored slots multiplied before they are computed.
          std::vector<FftStep> wrong = post2;
          for (const sched::FftSegment &g : segs)
            if (g.list != 2) wrong.insert(wrong.end(), lists[g.list]->begin() + g.begin, lists[g.list]->begin() + g.end);
          std::vector<uint16_t> c(2 * size_t(n));
          for (auto &e : c) e = uint16_t(rng());
          std::vector<uint16_t> d = c;
          fft_run_steps(sequential, s->tables, c);
          fft_run_steps(wrong, s->tables, d);
          EXPECT_NE(c, d) << what;
        } else if (block >= n) {
          EXPECT_LE(segs.size(), 3u) << what;
        }
      }
    }
}

// The interpreter tells orders apart: moving a step of one block past a dependent one of the
// same block (the reverse of a run) changes the values, so the test above can fail.
TEST(FftOrder, AWrongOrderIsCaught) {
  auto s = sched::fft_encode_schedule(32, 32);
  ASSERT_TRUE(s.ok());
  std::vector<FftStep> wrong = s->steps;
  std::reverse(wrong.begin(), wrong.end());
  std::mt19937_64 rng(5);
  std::vector<uint16_t> a(size_t(s->slots) + 64 + 128), b;
  for (auto &e : a) e = uint16_t(rng());
  b = a;
  fft_run_steps(s->steps, s->tables, a);
  fft_run_steps(wrong, s->tables, b);
  EXPECT_NE(a, b);
}

// Nothing to order: a block of every slot, or block 0.
TEST(FftOrder, WholeBlocksLeaveTheOrder) {
  auto s = sched::fft_encode_schedule(128, 128);
  ASSERT_TRUE(s.ok());
  for (uint32_t block : {0u, s->slots, 4 * s->slots}) {
    std::vector<FftStep> same = s->steps;
    sched::order_fft_steps_by_block(&same, s->slots, block);
    ASSERT_EQ(same.size(), s->steps.size());
    for (size_t i = 0; i < same.size(); ++i) ASSERT_EQ(same[i].a, s->steps[i].a) << block;
  }
}

}  // namespace
}  // namespace ecjit
