// Decode plans: invert the k x k generator rows of the shards read, map them to the wanted ones.
#include "codes/decode.h"

#include <algorithm>
#include <string>

#include "codes/decode_schedule.h"

namespace ecjit::codes {

Result<DecodePlan> plan_decode(const LinearCode &code, const std::vector<bool> &present,
                               const std::vector<unsigned> &wanted, CostModel lowering,
                               bool schedule) {
  const unsigned n = code.n();
  if (present.size() != n)
    return Status(StatusCode::kShardCount, "present has " + std::to_string(present.size()) +
                                               " entries; the code has " + std::to_string(n) +
                                               " shards");
  std::vector<bool> seen(n, false);
  for (unsigned w : wanted) {
    if (w >= n)
      return Status(StatusCode::kInvalidArgument,
                    "shard " + std::to_string(w) + " is out of range (n = " + std::to_string(n) + ")");
    if (seen[w])
      return Status(StatusCode::kInvalidArgument, "shard " + std::to_string(w) + " listed twice");
    seen[w] = true;
  }
  DecodePlan plan;
  unsigned have = 0;
  for (bool b : present) have += b;
  if (have < code.k)
    return Status(StatusCode::kTooManyErasures,
                  std::to_string(n - have) + " shards missing; " + code.spec.to_string() +
                      " can rebuild at most " + std::to_string(code.m));
  // For an MDS code (and whenever they are independent) the shards read are the first k
  // present ones: invert their rows directly. Otherwise the greedy search below.
  Matrix S(code.k, code.k);
  std::vector<unsigned> first;
  for (unsigned s = 0; s < n && first.size() < code.k; ++s)
    if (present[s]) first.push_back(s);
  auto rows_of = [&](const std::vector<unsigned> &shards) {
    for (unsigned r = 0; r < code.k; ++r) {
      const std::vector<uint64_t> row = code.generator_row(shards[r]);
      for (unsigned c = 0; c < code.k; ++c) S.at(r, c) = row[c];
    }
  };
  rows_of(first);
  Result<Matrix> inv = invert(code.field, S);
  if (inv.ok()) {
    plan.sources = std::move(first);
  } else {
    // Greedy in index order (data shards first): take a present shard when its generator row
    // is independent of the rows already taken. For an MDS code this is simply the first k
    // present shards; for a non-MDS code it still finds k readable shards when any exist.
    std::vector<std::vector<uint64_t>> basis;  // echelon rows
    std::vector<unsigned> pivots;
    for (unsigned s = 0; s < n && plan.sources.size() < code.k; ++s) {
      if (!present[s]) continue;
      std::vector<uint64_t> row = code.generator_row(s);
      for (size_t b = 0; b < basis.size(); ++b) {
        const uint64_t e = row[pivots[b]];
        if (e == 0) continue;
        for (unsigned c = 0; c < code.k; ++c) row[c] ^= code.field.mul(e, basis[b][c]);
      }
      unsigned piv = 0;
      while (piv < code.k && row[piv] == 0) ++piv;
      if (piv == code.k) continue;  // dependent on the shards already chosen
      const uint64_t s_inv = code.field.inv(row[piv]);
      for (unsigned c = 0; c < code.k; ++c) row[c] = code.field.mul(row[c], s_inv);
      basis.push_back(row);
      pivots.push_back(piv);
      plan.sources.push_back(s);
    }
    if (plan.sources.size() < code.k)
      return Status(StatusCode::kSingular,
                    "the " + std::to_string(have) + " present shards of " + code.spec.to_string() +
                        " do not determine the data: the code is not MDS for this erasure set");
    rows_of(plan.sources);
    inv = invert(code.field, S);
    if (!inv.ok()) return Status(StatusCode::kInternal, "independent rows did not invert");
  }
  plan.targets = wanted;
  std::sort(plan.targets.begin(), plan.targets.end());

  // S (the generator rows of the shards read) * data = read shards, so
  // data = inv(S) * read, and any shard t = G[t] * inv(S) * read.
  Matrix T(unsigned(plan.targets.size()), code.k);
  for (unsigned r = 0; r < plan.targets.size(); ++r) {
    std::vector<uint64_t> row = code.generator_row(plan.targets[r]);
    for (unsigned c = 0; c < code.k; ++c) T.at(r, c) = row[c];
  }
  plan.coeffs = multiply(code.field, T, *inv);
  if (schedule) schedule_decode(code, &plan, lowering);
  return plan;
}

Result<DecodePlan> plan_reconstruct(const LinearCode &code, const std::vector<bool> &present,
                                    CostModel lowering) {
  std::vector<unsigned> missing;
  for (unsigned s = 0; s < present.size() && s < code.n(); ++s)
    if (!present[s]) missing.push_back(s);
  return plan_decode(code, present, missing, lowering);
}

}  // namespace ecjit::codes
