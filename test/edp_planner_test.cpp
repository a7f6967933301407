// The degraded-read planner against a brute-force search over cell subsets (the codes of
// Shen et al. 2016 at p = 5): labelled slow - 7 s on a 2-core EPYC, minutes under ASan.
#include <gtest/gtest.h>

#include <functional>

#include "codes/array_layout.h"
#include "codes/edp.h"

using namespace ecjit;
using namespace ecjit::codes;

namespace {

// The fewest extra cells that make every lost requested element recoverable (any XOR of
// chains, not only single chains): subsets of the other surviving cells by size.
size_t brute_force_extra(const ArrayLayout &L, const std::vector<unsigned> &requested, unsigned failed) {
  std::vector<bool> known(L.cells(), false);
  std::vector<unsigned> lost, pool;
  for (unsigned c : requested) (L.disk_of(c) == failed ? lost.push_back(c) : (void)(known[c] = true));
  for (unsigned c = 0; c < L.cells(); ++c)
    if (!known[c] && L.disk_of(c) != failed) pool.push_back(c);
  auto ok = [&] {
    for (unsigned t : lost)
      if (!recoverable(L, known, t)) return false;
    return true;
  };
  for (size_t size = 0; size <= pool.size(); ++size) {
    std::function<bool(size_t, size_t)> pick = [&](size_t from, size_t left) -> bool {
      if (left == 0) return ok();
      for (size_t i = from; i + left <= pool.size(); ++i) {
        known[pool[i]] = true;
        const bool found = pick(i + 1, left - 1);
        known[pool[i]] = false;
        if (found) return true;
      }
      return false;
    };
    if (pick(0, size)) return size;
  }
  return SIZE_MAX;
}

// Every sequential read of up to 4 elements inside one stripe, every failed disk, every
// placement, p = 5: the plan's cells rebuild every lost element (checked by elimination), and
// it reads exactly the brute-force minimum.
TEST(DegradedRead, PlansRebuildAndMatchBruteForce) {
  for (const char *f : {"rdp", "xcode", "bpcode"})
    for (Placement pl : {Placement::kHorizontal, Placement::kVertical, Placement::kEdp}) {
      const ArrayLayout L = *array_layout(f, 5);
      const DataPlacement P = place(L, pl);
      size_t reads = 0, equal = 0;
      for (unsigned failed = 0; failed < L.disks; ++failed)
        for (unsigned count = 1; count <= 4; ++count)
          for (unsigned first = 0; first + count <= P.cell_of.size(); ++first) {
            auto plan = plan_degraded_read(L, P, failed, first, count);
            ASSERT_TRUE(plan.ok());
            std::vector<bool> known(L.cells(), false);
            for (unsigned c : plan->cells) {
              ASSERT_NE(L.disk_of(c), failed) << "reads the failed disk";
              known[c] = true;
            }
            std::vector<unsigned> requested;
            for (unsigned e = first; e < first + count; ++e) {
              requested.push_back(P.cell_of[e]);
              ASSERT_TRUE(recoverable(L, known, P.cell_of[e])) << f << " " << placement_name(pl) << " element " << e;
            }
            const size_t brute = brute_force_extra(L, requested, failed);
            ASSERT_GE(plan->extra(), brute) << f << " " << placement_name(pl);
            equal += plan->extra() == brute;
            ++reads;
          }
      // Single chains are the paper's repair model; at p = 5 no XOR of chains does better.
      EXPECT_EQ(equal, reads) << f << " " << placement_name(pl);
    }
}

}  // namespace
