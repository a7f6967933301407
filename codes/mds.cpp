// MDS check over the square submatrices of the parity matrix, exhaustive or sampled.
#include "codes/mds.h"

#include <algorithm>
#include <random>

namespace ecjit::codes {
namespace {

// C(n, r), saturating at UINT64_MAX.
uint64_t choose(uint64_t n, uint64_t r) {
  if (r > n) return 0;
  r = std::min(r, n - r);
  unsigned __int128 c = 1;
  for (uint64_t i = 1; i <= r; ++i) {
    c = c * (n - r + i) / i;
    if (c > UINT64_MAX) return UINT64_MAX;
  }
  return uint64_t(c);
}

uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t sat_mul(uint64_t a, uint64_t b) {
  return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

// Advances a sorted r-subset of 0..n-1 to the next one in lexicographic order.
bool next_subset(std::vector<unsigned> &s, unsigned n) {
  const unsigned r = unsigned(s.size());
  for (int i = int(r) - 1; i >= 0; --i) {
    if (s[i] < n - r + unsigned(i)) {
      ++s[i];
      for (unsigned j = unsigned(i) + 1; j < r; ++j) s[j] = s[j - 1] + 1;
      return true;
    }
  }
  return false;
}

bool submatrix_ok(const LinearCode &code, const std::vector<unsigned> &rows,
                  const std::vector<unsigned> &cols) {
  const unsigned s = unsigned(rows.size());
  Matrix M(s, s);
  for (unsigned i = 0; i < s; ++i)
    for (unsigned j = 0; j < s; ++j) M.at(i, j) = code.parity.at(rows[i], cols[j]);
  return is_invertible(code.field, M);
}

std::vector<unsigned> random_subset(std::mt19937_64 &rng, unsigned n, unsigned r) {
  std::vector<unsigned> all(n);
  for (unsigned i = 0; i < n; ++i) all[i] = i;
  for (unsigned i = 0; i < r; ++i) {
    std::uniform_int_distribution<unsigned> d(i, n - 1);
    std::swap(all[i], all[d(rng)]);
  }
  all.resize(r);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

MdsReport check_mds(const LinearCode &code, uint64_t budget) {
  MdsReport rep;
  const unsigned k = code.k, m = code.m, smax = std::min(k, m);
  for (unsigned s = 1; s <= smax; ++s) rep.total = sat_add(rep.total, sat_mul(choose(m, s), choose(k, s)));
  rep.exhaustive = rep.total <= budget;
  auto fail = [&](const std::vector<unsigned> &r, const std::vector<unsigned> &c) {
    rep.mds = false;
    rep.bad_rows = r;
    rep.bad_cols = c;
  };
  if (rep.exhaustive) {
    for (unsigned s = 1; s <= smax && rep.mds; ++s) {
      std::vector<unsigned> rows(s);
      for (unsigned i = 0; i < s; ++i) rows[i] = i;
      do {
        std::vector<unsigned> cols(s);
        for (unsigned i = 0; i < s; ++i) cols[i] = i;
        do {
          ++rep.checked;
          if (!submatrix_ok(code, rows, cols)) {
            fail(rows, cols);
            return rep;
          }
        } while (next_subset(cols, k));
      } while (next_subset(rows, m));
    }
    return rep;
  }
  // Sampled: sizes drawn in proportion to how many submatrices each size has is skewed to
  // the largest; draw sizes uniformly so small (cheap, often failing) minors are covered.
  std::mt19937_64 rng(0xEC1172024ULL);
  std::uniform_int_distribution<unsigned> size_dist(1, smax);
  for (uint64_t i = 0; i < budget; ++i) {
    const unsigned s = size_dist(rng);
    std::vector<unsigned> rows = random_subset(rng, m, s), cols = random_subset(rng, k, s);
    ++rep.checked;
    if (!submatrix_ok(code, rows, cols)) {
      fail(rows, cols);
      return rep;
    }
  }
  return rep;
}

MdsReport check_mds(const BitMatrixCode &code, uint64_t budget) {
  MdsReport rep;
  rep.erasure_sets = true;
  const unsigned n = code.n(), m = code.m;
  rep.total = choose(n, m);
  rep.exhaustive = rep.total <= budget;
  auto decodable = [&](const std::vector<unsigned> &lost) {
    std::vector<bool> present(n, true);
    for (unsigned s : lost) present[s] = false;
    return plan_bitmatrix_decode(code, present, lost).ok();
  };
  auto check = [&](const std::vector<unsigned> &lost) {
    ++rep.checked;
    if (decodable(lost)) return true;
    rep.mds = false;
    rep.lost = lost;
    return false;
  };
  if (rep.exhaustive) {
    std::vector<unsigned> lost(m);
    for (unsigned i = 0; i < m; ++i) lost[i] = i;
    do {
      if (!check(lost)) return rep;
    } while (next_subset(lost, n));
  } else {
    std::mt19937_64 rng(0x6d5);
    for (uint64_t i = 0; i < budget; ++i)
      if (!check(random_subset(rng, n, m))) return rep;
  }
  return rep;
}

std::string MdsReport::to_string() const {
  std::string s = mds ? "MDS" : "NOT MDS";
  if (erasure_sets) {
    s += exhaustive ? " (exhaustive, " : " (sampled, ";
    s += std::to_string(checked) + " of " +
         (total == ~uint64_t(0) ? "more than " + std::to_string(total) : std::to_string(total)) +
         " erasure sets of m shards decoded over GF(2))";
    if (!mds) {
      s += "; cannot rebuild lost shards {";
      for (size_t i = 0; i < lost.size(); ++i) s += (i ? "," : "") + std::to_string(lost[i]);
      s += "}";
    }
    return s;
  }
  s += exhaustive ? " (exhaustive, " : " (sampled, ";
  // The count saturates at 2^64 - 1: past that there are "more than" that many.
  s += std::to_string(checked) + " of " +
       (total == ~uint64_t(0) ? "more than " + std::to_string(total) : std::to_string(total)) +
       " square submatrices of A checked)";
  if (!mds) {
    s += "; singular: parity rows {";
    for (size_t i = 0; i < bad_rows.size(); ++i) s += (i ? "," : "") + std::to_string(bad_rows[i]);
    s += "} x data columns {";
    for (size_t i = 0; i < bad_cols.size(); ++i) s += (i ? "," : "") + std::to_string(bad_cols[i]);
    s += "}";
  }
  return s;
}

}  // namespace ecjit::codes
