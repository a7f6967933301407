// Local checks of a matrix code and local repair plans over them.
#include "codes/locality.h"

#include <algorithm>

#include "codes/families.h"

namespace ecjit::codes {

bool LocalCheck::xor_only() const {
  return std::all_of(coeffs.begin(), coeffs.end(), [](uint64_t c) { return c == 1; });
}

std::vector<LocalCheck> local_checks(const LinearCode &code) {
  if (const SymbolFamily *row = symbol_family(code.spec.family); row && row->checks) return row->checks(code.spec);
  std::vector<LocalCheck> checks;
  for (unsigned p = 0; p < code.m; ++p) {
    LocalCheck c;
    for (unsigned d = 0; d < code.k; ++d)
      if (const uint64_t e = code.parity.at(p, d)) {
        c.shards.push_back(d);
        c.coeffs.push_back(e);
      }
    if (c.shards.size() >= code.k) continue;  // a global row
    c.shards.push_back(code.k + p);
    c.coeffs.push_back(1);
    checks.push_back(std::move(c));
  }
  return checks;
}

std::optional<LocalPlan> plan_local(const LinearCode &code, const std::vector<LocalCheck> &checks,
                                    const std::vector<bool> &present, const std::vector<unsigned> &wanted) {
  if (checks.empty() || wanted.empty() || present.size() != code.n()) return std::nullopt;
  std::vector<bool> have = present;  // present, or rebuilt by a step before
  std::vector<bool> read(code.n(), false);
  std::vector<unsigned> left = wanted;
  LocalPlan plan;
  while (!left.empty()) {
    bool progress = false;
    for (size_t w = 0; w < left.size();) {
      const unsigned t = left[w];
      const LocalCheck *best = nullptr;
      for (const LocalCheck &c : checks) {
        const auto at = std::find(c.shards.begin(), c.shards.end(), t);
        if (at == c.shards.end()) continue;
        const bool complete = std::all_of(c.shards.begin(), c.shards.end(), [&](unsigned s) { return s == t || have[s]; });
        if (complete && (!best || c.shards.size() < best->shards.size())) best = &c;
      }
      if (!best) {
        ++w;
        continue;
      }
      // shard t = sum over the others of (c_i / c_t) shard i (characteristic 2: no signs).
      const size_t pos = size_t(std::find(best->shards.begin(), best->shards.end(), t) - best->shards.begin());
      const uint64_t inv = code.field.inv(best->coeffs[pos]);
      LocalRepair step{t, {}, {}};
      for (size_t i = 0; i < best->shards.size(); ++i) {
        if (i == pos) continue;
        const unsigned s = best->shards[i];
        step.sources.push_back(s);
        step.coeffs.push_back(code.field.mul(best->coeffs[i], inv));
        if (present[s]) read[s] = true;
      }
      plan.xor_only = plan.xor_only && best->xor_only();
      plan.steps.push_back(std::move(step));
      have[t] = true;
      left.erase(left.begin() + ptrdiff_t(w));
      progress = true;
    }
    if (!progress) return std::nullopt;
  }
  for (unsigned s = 0; s < code.n(); ++s)
    if (read[s]) plan.reads.push_back(s);
  if (plan.reads.size() > code.k) return std::nullopt;
  return plan;
}

}  // namespace ecjit::codes
