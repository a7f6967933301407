// Decode plans: invert the k x k generator rows of the shards read, map them to the wanted ones.
#include "codes/decode.h"

#include <algorithm>
#include <string>

#include "codes/decode_schedule.h"

namespace ecjit::codes {

namespace {

// Decode coefficients (targets x k, over `sources` in order) when `sources` are data shards
// (identity rows) followed by parity shards, through the r x r block of the parity rows on
// the data shards not read. Errors: kInvalidArgument when the sources are not of that shape,
// kSingular when the block does not invert (then the general path decides).
Result<Matrix> structured_coeffs(const LinearCode &code, const std::vector<unsigned> &sources,
                                 const std::vector<unsigned> &targets) {
  const unsigned k = code.k;
  std::vector<int> pos(k, -1);  // data shard -> its source position
  std::vector<unsigned> parity;  // source positions of parity shards
  for (unsigned q = 0; q < sources.size(); ++q) {
    if (sources[q] < k) {
      if (!parity.empty()) return Status(StatusCode::kInvalidArgument, "data after parity");
      pos[sources[q]] = int(q);
    } else {
      parity.push_back(q);
    }
  }
  std::vector<unsigned> lost;
  for (unsigned d = 0; d < k; ++d)
    if (pos[d] < 0) lost.push_back(d);
  const unsigned r = unsigned(lost.size());
  if (sources.size() != k || parity.size() != r)
    return Status(StatusCode::kInvalidArgument, "not data + parity sources");
  const Field &f = code.field;
  auto prow = [&](unsigned i, unsigned d) { return code.generator_entry(sources[parity[i]], d); };
  Matrix A(r, r);
  for (unsigned i = 0; i < r; ++i)
    for (unsigned j = 0; j < r; ++j) A.at(i, j) = prow(i, lost[j]);
  Result<Matrix> M = r ? invert(f, A) : Result<Matrix>(Matrix(0, 0));
  if (!M.ok()) return Status(StatusCode::kSingular, "parity block does not invert");
  // X row a (lost data lost[a]) over source positions: on data source d,
  // sum_i M(a, i) A(P_i, d); on parity source P_i, M(a, i).
  Matrix X(r, k);
  for (unsigned a = 0; a < r; ++a)
    for (unsigned i = 0; i < r; ++i) {
      const uint64_t m = M->at(a, i);
      if (!m) continue;
      X.at(a, parity[i]) ^= m;
      for (unsigned d = 0; d < k; ++d)
        if (const uint64_t p = pos[d] >= 0 ? prow(i, d) : 0) X.at(a, unsigned(pos[d])) ^= f.mul(m, p);
    }
  Matrix C(unsigned(targets.size()), k);
  for (unsigned t = 0; t < targets.size(); ++t) {
    for (unsigned d = 0; d < k; ++d)
      if (pos[d] >= 0) C.at(t, unsigned(pos[d])) = code.generator_entry(targets[t], d);
    for (unsigned a = 0; a < r; ++a) {
      const uint64_t e = code.generator_entry(targets[t], lost[a]);
      if (!e) continue;
      for (unsigned q = 0; q < k; ++q)
        if (const uint64_t x = X.at(a, q)) C.at(t, q) ^= f.mul(e, x);
    }
  }
  return C;
}

}  // namespace

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
  std::vector<unsigned> first;
  for (unsigned s = 0; s < n && first.size() < code.k; ++s)
    if (present[s]) first.push_back(s);
  // The usual shape: the k - r present data shards and r parity shards (first is ascending,
  // data first). Then inv(S) is the identity on the data read, and the r lost data shards
  // are M (parity - A_PD data) with M = A_PL^-1 (r x r): the coefficients of any target cost
  // O(r k) instead of a k x k inversion (rs-cauchy:k=4000, 24 lost: seconds -> milliseconds).
  std::vector<unsigned> sorted = wanted;
  std::sort(sorted.begin(), sorted.end());
  if (Result<Matrix> fast = structured_coeffs(code, first, sorted); fast.ok()) {
    plan.sources = std::move(first);
    plan.targets = std::move(sorted);
    plan.coeffs = std::move(*fast);
    if (schedule) schedule_decode(code, &plan, lowering);
    return plan;
  }
  Matrix S(code.k, code.k);  // the general path: k x k (128 MiB at k = 4000)
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
