// Parity matrices of the supported code families (rs-vand, rs-cauchy, isal-*, jerasure-vand, raidz).
#include "codes/constructions.h"

#include <cassert>
#include <utility>

namespace ecjit::codes {

Matrix rs_vandermonde_parity(const Field &f, unsigned k, unsigned m) {
  const unsigned n = k + m;
  // Eq. 2.25: row i holds i^0, i^1, ..., i^(k-1) on the points 0..n-1 (0^0 = 1).
  Matrix V(n, k);
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < k; ++j) V.at(i, j) = f.pow(i, j);
  // Column operations until the top k x k block is I (eq. 2.27): V * inv(V_top). The top
  // block is a square Vandermonde matrix on distinct points, hence invertible (eq. 2.23).
  std::vector<unsigned> top(k), bottom(m);
  for (unsigned i = 0; i < k; ++i) top[i] = i;
  for (unsigned i = 0; i < m; ++i) bottom[i] = k + i;
  Result<Matrix> inv = invert(f, V.select_rows(top));
  assert(inv.ok());
  return multiply(f, V.select_rows(bottom), *inv);
}

Matrix rs_cauchy_parity(const Field &f, unsigned k, unsigned m) {
  Matrix A(m, k);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) A.at(i, j) = f.inv(uint64_t(i) ^ uint64_t(m + j));
  return A;
}

Matrix isal_rs_parity(const Field &f, unsigned k, unsigned m) {
  Matrix A(m, k);
  uint64_t gen = 1;
  for (unsigned i = 0; i < m; ++i) {
    uint64_t p = 1;
    for (unsigned j = 0; j < k; ++j) {
      A.at(i, j) = p;
      p = f.mul(p, gen);
    }
    gen = f.mul(gen, 2);
  }
  return A;
}

Matrix isal_cauchy_parity(const Field &f, unsigned k, unsigned m) {
  Matrix A(m, k);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) A.at(i, j) = f.inv(uint64_t(k + i) ^ uint64_t(j));
  return A;
}

Matrix jerasure_vandermonde_parity(const Field &f, unsigned k, unsigned m) {
  const unsigned rows = k + m, cols = k;
  // Jerasure's extended Vandermonde matrix: row 0 = e_0, last row = e_(cols-1), row i in
  // between holds i^j.
  Matrix d(rows, cols);
  d.at(0, 0) = 1;
  if (rows > 1) d.at(rows - 1, cols - 1) = 1;
  for (unsigned i = 1; i + 1 < rows; ++i) {
    uint64_t p = 1;
    for (unsigned j = 0; j < cols; ++j) {
      d.at(i, j) = p;
      p = f.mul(p, i);
    }
  }
  // Column elimination exactly as reed_sol_big_vandermonde_distribution_matrix, including
  // its row swaps, so the result is bit-for-bit Jerasure's.
  for (unsigned i = 1; i < cols; ++i) {
    unsigned j = i;
    while (j < rows && d.at(j, i) == 0) ++j;
    assert(j < rows);
    if (j != i)
      for (unsigned c = 0; c < cols; ++c) std::swap(d.at(j, c), d.at(i, c));
    if (d.at(i, i) != 1) {
      const uint64_t t = f.inv(d.at(i, i));
      for (unsigned r = 0; r < rows; ++r) d.at(r, i) = f.mul(t, d.at(r, i));
    }
    for (unsigned c = 0; c < cols; ++c) {
      const uint64_t e = d.at(i, c);
      if (c == i || e == 0) continue;
      for (unsigned r = 0; r < rows; ++r) d.at(r, c) ^= f.mul(e, d.at(r, i));
    }
  }
  // First parity row all ones: scale each column's parity part.
  for (unsigned c = 0; c < cols; ++c) {
    const uint64_t t = d.at(cols, c);
    if (t == 1) continue;
    const uint64_t s = f.inv(t);
    for (unsigned r = cols; r < rows; ++r) d.at(r, c) = f.mul(s, d.at(r, c));
  }
  // First column of every later parity row one: scale the row.
  for (unsigned r = cols + 1; r < rows; ++r) {
    const uint64_t t = d.at(r, 0);
    if (t == 1) continue;
    const uint64_t s = f.inv(t);
    for (unsigned c = 0; c < cols; ++c) d.at(r, c) = f.mul(d.at(r, c), s);
  }
  Matrix A(m, k);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) A.at(i, j) = d.at(k + i, j);
  return A;
}

Matrix raidz_parity(const Field &f, unsigned k, unsigned m) {
  Matrix A(m, k);
  for (unsigned i = 0; i < m; ++i) {
    const uint64_t base = f.pow(2, i);  // alpha^i with alpha = X: 1, alpha, alpha^2
    for (unsigned j = 0; j < k; ++j) A.at(i, j) = f.pow(base, k - 1 - j);
  }
  return A;
}

}  // namespace ecjit::codes
