// Horizontal, vertical and EDP placements; the degraded-read planner (exhaustive chain choice).
#include "codes/edp.h"

#include <algorithm>

namespace ecjit::codes {
namespace {

std::vector<unsigned> data_members(const ArrayLayout &L, unsigned chain) {
  std::vector<unsigned> d;
  for (unsigned c : L.chains[chain].members)
    if (!L.is_parity(c)) d.push_back(c);
  return d;
}

DataPlacement from_order(const ArrayLayout &L, const std::vector<unsigned> &cells) {
  DataPlacement P;
  P.cell_of = cells;
  P.logical_of_cell.assign(L.cells(), -1);
  for (unsigned e = 0; e < cells.size(); ++e) P.logical_of_cell[cells[e]] = int(e);
  return P;
}

}  // namespace

const char *placement_name(Placement p) {
  switch (p) {
    case Placement::kHorizontal: return "horizontal";
    case Placement::kVertical: return "vertical";
    case Placement::kEdp: return "edp";
  }
  return "?";
}

DataPlacement edp_greedy(const ArrayLayout &L) {
  const std::vector<unsigned> data = L.data_cells();
  DataPlacement P;
  P.logical_of_cell.assign(L.cells(), -1);
  std::vector<bool> used(L.chains.size(), false);
  unsigned next = 0;
  int last = -1;
  while (next < data.size()) {
    int best = -1;
    size_t best_overlap = 0;
    for (unsigned i = 0; i < L.chains.size(); ++i) {
      if (used[i]) continue;
      const std::vector<unsigned> mine = data_members(L, i);
      if (std::none_of(mine.begin(), mine.end(), [&](unsigned c) { return P.logical_of_cell[c] < 0; })) continue;
      size_t overlap = 0;
      if (last >= 0)
        for (unsigned c : data_members(L, unsigned(last)))
          overlap += std::count(mine.begin(), mine.end(), c);
      if (best < 0 || overlap > best_overlap) {
        best = int(i);
        best_overlap = overlap;
      }
    }
    if (best < 0) break;  // data cells in no chain (none in these codes): placed below
    for (unsigned c : data_members(L, unsigned(best)))
      if (P.logical_of_cell[c] < 0) P.logical_of_cell[c] = int(next++);
    used[unsigned(best)] = true;
    P.order.push_back(unsigned(best));
    last = best;
  }
  for (unsigned c : data)
    if (P.logical_of_cell[c] < 0) P.logical_of_cell[c] = int(next++);
  P.cell_of.assign(data.size(), 0);
  for (unsigned c : data) P.cell_of[unsigned(P.logical_of_cell[c])] = c;
  return P;
}

void edp_refine(const ArrayLayout &L, DataPlacement *P) {
  std::vector<bool> movable(P->cell_of.size(), true);
  for (size_t t = 0; t + 1 < P->order.size(); ++t) {
    const std::vector<unsigned> cur = data_members(L, P->order[t]), nxt = data_members(L, P->order[t + 1]);
    std::vector<unsigned> elems;
    for (unsigned c : cur) elems.push_back(unsigned(P->logical_of_cell[c]));
    std::sort(elems.begin(), elems.end());
    for (unsigned i : elems) {
      if (!movable[i] || std::find(nxt.begin(), nxt.end(), P->cell_of[i]) == nxt.end()) continue;
      unsigned j = i;
      for (unsigned e : elems)
        if (movable[e] && e > j) j = e;
      std::swap(P->cell_of[i], P->cell_of[j]);
      P->logical_of_cell[P->cell_of[i]] = int(i);
      P->logical_of_cell[P->cell_of[j]] = int(j);
      movable[i] = movable[j] = false;
    }
  }
}

DataPlacement place(const ArrayLayout &L, Placement placement) {
  if (placement == Placement::kEdp) {
    DataPlacement P = edp_greedy(L);
    edp_refine(L, &P);
    return P;
  }
  std::vector<unsigned> cells = L.data_cells();  // row-major
  if (placement == Placement::kVertical)
    std::stable_sort(cells.begin(), cells.end(), [&](unsigned a, unsigned b) { return L.disk_of(a) < L.disk_of(b); });
  return from_order(L, cells);
}

size_t ReadPlan::extra() const { return cells.size() - requested; }

Result<ReadPlan> plan_degraded_read(const ArrayLayout &L, const DataPlacement &P, unsigned failed,
                                    unsigned first, unsigned count) {
  if (failed >= L.disks || uint64_t(first) + count > P.cell_of.size() || count == 0)
    return Status(StatusCode::kInvalidArgument,
                  "degraded read of elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                      ") with disk " + std::to_string(failed) + " lost: a stripe has " +
                      std::to_string(P.cell_of.size()) + " data elements on " + std::to_string(L.disks) + " disks");
  std::vector<bool> lost(L.disks, false);
  lost[failed] = true;
  return plan_cell_read(L, lost, std::vector<unsigned>(P.cell_of.begin() + first, P.cell_of.begin() + first + count));
}

Result<ReadPlan> plan_cell_read(const ArrayLayout &L, const std::vector<bool> &failed,
                                const std::vector<unsigned> &requested) {
  if (requested.empty() || failed.size() != L.disks)
    return Status(StatusCode::kInvalidArgument, "a cell read needs at least one cell and a failed-disk mask of " +
                                                    std::to_string(L.disks) + " disks");
  for (unsigned c : requested)
    if (c >= L.cells())
      return Status(StatusCode::kInvalidArgument,
                    "cell " + std::to_string(c) + " is past the stripe's " + std::to_string(L.cells()));
  auto dead = [&](unsigned c) { return bool(failed[L.disk_of(c)]); };
  const unsigned count = unsigned(requested.size());
  ReadPlan plan;
  plan.chain_used.assign(count, -1);
  std::vector<bool> read(L.cells(), false);
  std::vector<unsigned> lost_idx;  // indices into the request
  for (unsigned i = 0; i < count; ++i) {
    const unsigned c = requested[i];
    if (dead(c)) lost_idx.push_back(i);
    else read[c] = true, ++plan.requested;
  }
  // Each lost cell's usable chains: the cells they read besides the lost one.
  std::vector<std::vector<std::pair<unsigned, std::vector<unsigned>>>> options(lost_idx.size());
  bool fallback = false;
  for (size_t l = 0; l < lost_idx.size(); ++l) {
    const unsigned target = requested[lost_idx[l]];
    for (unsigned ch = 0; ch < L.chains.size(); ++ch) {
      const auto &chain = L.chains[ch];
      const bool is_parity = chain.parity == target;
      if (!is_parity && std::find(chain.members.begin(), chain.members.end(), target) == chain.members.end())
        continue;
      std::vector<unsigned> cells;
      bool clean = true;
      if (!is_parity) clean = !dead(chain.parity), cells.push_back(chain.parity);
      for (unsigned m : chain.members)
        if (m != target) clean &= !dead(m), cells.push_back(m);
      if (clean) options[l].push_back({ch, std::move(cells)});
    }
    fallback |= options[l].empty();
  }
  if (fallback) {
    for (unsigned c = 0; c < L.cells(); ++c) read[c] = !dead(c);
    for (unsigned i : lost_idx) plan.chain_used[i] = -2;
  } else if (!lost_idx.empty()) {
    uint64_t combos = 1;
    for (const auto &o : options) combos = std::min<uint64_t>(combos * o.size(), uint64_t(1) << 20);
    std::vector<size_t> pick(lost_idx.size(), 0), best_pick;
    size_t best = SIZE_MAX;
    auto cost = [&](const std::vector<size_t> &choice) {
      std::vector<bool> r = read;
      size_t n = 0;
      for (size_t l = 0; l < choice.size(); ++l)
        for (unsigned c : options[l][choice[l]].second) r[c] = true;
      for (bool b : r) n += b;
      return n;
    };
    if (combos <= (uint64_t(1) << 16)) {
      for (uint64_t k = 0; k < combos; ++k) {
        uint64_t rest = k;
        for (size_t l = 0; l < pick.size(); ++l) {
          pick[l] = size_t(rest % options[l].size());
          rest /= options[l].size();
        }
        if (const size_t c = cost(pick); c < best) best = c, best_pick = pick;
      }
    } else {  // greedy: each lost element in turn takes its cheapest chain given the others so far
      best_pick.assign(pick.size(), 0);
      for (size_t l = 0; l < pick.size(); ++l) {
        size_t lbest = SIZE_MAX;
        for (size_t o = 0; o < options[l].size(); ++o) {
          std::vector<size_t> trial(best_pick.begin(), best_pick.begin() + long(l));
          trial.push_back(o);  // cost() reads the first trial.size() lost elements' options
          if (const size_t c = cost(trial); c < lbest) lbest = c, best_pick[l] = o;
        }
      }
    }
    for (size_t l = 0; l < lost_idx.size(); ++l) {
      plan.chain_used[lost_idx[l]] = int(options[l][best_pick[l]].first);
      for (unsigned c : options[l][best_pick[l]].second) read[c] = true;
    }
  }
  for (unsigned c = 0; c < L.cells(); ++c)
    if (read[c]) plan.cells.push_back(c);
  return plan;
}

}  // namespace ecjit::codes
