// Recoverability counts by rank checks of the surviving rows, and single-loss reads from the local checks.
#include "codes/recoverability.h"

#include <algorithm>
#include <random>

#include "codes/locality.h"

namespace ecjit::codes {

double binomial(unsigned n, unsigned e) {
  double c = 1;
  for (unsigned i = 0; i < e; ++i) c = c * (n - i) / (i + 1);
  return c;
}

bool decodes_loss(const Field &f, const Matrix &parity, unsigned k, const std::vector<bool> &lost) {
  std::vector<unsigned> cols, rows;
  for (unsigned d = 0; d < k; ++d)
    if (lost[d]) cols.push_back(d);
  for (unsigned p = 0; p < parity.rows; ++p)
    if (!lost[k + p]) rows.push_back(p);
  const size_t c = cols.size();
  if (rows.size() < c) return false;
  std::vector<std::vector<uint64_t>> m(rows.size(), std::vector<uint64_t>(c));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < c; ++j) m[i][j] = parity.at(rows[i], cols[j]);
  for (size_t j = 0, rank = 0; j < c; ++j, ++rank) {
    size_t p = rank;
    while (p < m.size() && m[p][j] == 0) ++p;
    if (p == m.size()) return false;
    std::swap(m[p], m[rank]);
    const uint64_t inv = f.inv(m[rank][j]);
    for (size_t i = rank + 1; i < m.size(); ++i) {
      if (!m[i][j]) continue;
      const uint64_t e = f.mul(m[i][j], inv);
      for (size_t t = j; t < c; ++t) m[i][t] ^= f.mul(e, m[rank][t]);
    }
  }
  return true;
}

Recoverability recoverability(const LinearCode &code, uint64_t budget) {
  Recoverability rep;
  const unsigned n = code.n();
  std::mt19937_64 rng(0x5eed);
  for (unsigned e = 1; e <= code.m; ++e) {
    LossCount c;
    c.losses = e;
    const double all = binomial(n, e);
    c.patterns = all > 1.8e19 ? UINT64_MAX : uint64_t(all);
    std::vector<bool> lost(n, false);
    auto count = [&] {
      ++c.checked;
      c.recoverable += decodes_loss(code.field, code.parity, code.k, lost);
    };
    if (all <= double(budget)) {  // every pattern: the subsets of e shards in order
      std::vector<unsigned> idx(e);
      for (unsigned i = 0; i < e; ++i) idx[i] = i;
      for (;;) {
        std::fill(lost.begin(), lost.end(), false);
        for (unsigned i : idx) lost[i] = true;
        count();
        int i = int(e) - 1;
        while (i >= 0 && idx[size_t(i)] == n - e + unsigned(i)) --i;
        if (i < 0) break;
        ++idx[size_t(i)];
        for (unsigned j = unsigned(i) + 1; j < e; ++j) idx[j] = idx[j - 1] + 1;
      }
    } else {
      std::vector<unsigned> perm(n);
      for (unsigned i = 0; i < n; ++i) perm[i] = i;
      for (uint64_t t = 0; t < budget; ++t) {
        for (unsigned i = 0; i < e; ++i) std::swap(perm[i], perm[i + rng() % (n - i)]);
        std::fill(lost.begin(), lost.end(), false);
        for (unsigned i = 0; i < e; ++i) lost[perm[i]] = true;
        count();
      }
    }
    rep.by_losses.push_back(c);
  }
  const std::vector<LocalCheck> checks = local_checks(code);
  std::vector<bool> present(n, true);
  uint64_t local_sum = 0, sum = 0;
  for (unsigned s = 0; s < n; ++s) {
    present[s] = false;
    const std::optional<LocalPlan> plan = plan_local(code, checks, present, {s});
    present[s] = true;
    const unsigned reads = plan ? unsigned(plan->reads.size()) : code.k;
    sum += reads;
    if (!plan) continue;
    ++rep.local_shards;
    local_sum += reads;
    rep.local_reads_max = std::max(rep.local_reads_max, reads);
  }
  rep.local_reads_avg = rep.local_shards ? double(local_sum) / rep.local_shards : 0;
  rep.reads_avg = n ? double(sum) / n : 0;
  return rep;
}

}  // namespace ecjit::codes
