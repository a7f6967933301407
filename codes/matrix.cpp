// Dense matrix products and Gauss-Jordan inversion over GF(2^l).
#include "codes/matrix.h"

#include <cassert>
#include <string>
#include <utility>

namespace ecjit::codes {

Matrix Matrix::identity(unsigned n) {
  Matrix I(n, n);
  for (unsigned i = 0; i < n; ++i) I.at(i, i) = 1;
  return I;
}

Matrix Matrix::select_rows(const std::vector<unsigned> &which) const {
  Matrix R(unsigned(which.size()), cols);
  for (unsigned r = 0; r < which.size(); ++r)
    for (unsigned c = 0; c < cols; ++c) R.at(r, c) = at(which[r], c);
  return R;
}

Matrix multiply(const Field &f, const Matrix &A, const Matrix &B) {
  Matrix C(A.rows, B.cols);
  for (unsigned i = 0; i < A.rows; ++i)
    for (unsigned j = 0; j < B.cols; ++j) {
      uint64_t s = 0;
      for (unsigned t = 0; t < A.cols; ++t) s ^= f.mul(A.at(i, t), B.at(t, j));
      C.at(i, j) = s;
    }
  return C;
}

size_t count_products(const Matrix &M) { return size_t(product_cost(M, CostModel::kProducts)); }

uint64_t product_cost(const Matrix &M, CostModel model) {
  uint64_t n = 0;
  for (uint64_t a : M.a) n += constant_cost(a, model);
  return n;
}

Matrix compose_stages(const Field &f, const Matrix &pre, const Matrix &post) {
  assert(post.cols == pre.cols + pre.rows);
  const unsigned k = pre.cols;
  Matrix C(post.rows, k);
  for (unsigned r = 0; r < post.rows; ++r)
    for (unsigned c = 0; c < k; ++c) {
      uint64_t s = post.at(r, c);
      for (unsigned j = 0; j < pre.rows; ++j) s ^= f.mul(post.at(r, k + j), pre.at(j, c));
      C.at(r, c) = s;
    }
  return C;
}

namespace {

// Reduces [A | B] so A becomes I; B (may be empty) receives the same row operations.
// Returns false when A is singular.
bool gauss_jordan(const Field &f, Matrix &A, Matrix *B) {
  const unsigned n = A.rows;
  for (unsigned col = 0; col < n; ++col) {
    unsigned pivot = col;
    while (pivot < n && A.at(pivot, col) == 0) ++pivot;
    if (pivot == n) return false;
    if (pivot != col) {
      for (unsigned c = 0; c < n; ++c) std::swap(A.at(pivot, c), A.at(col, c));
      if (B)
        for (unsigned c = 0; c < B->cols; ++c) std::swap(B->at(pivot, c), B->at(col, c));
    }
    const uint64_t s = f.inv(A.at(col, col));
    if (s != 1) {
      for (unsigned c = 0; c < n; ++c) A.at(col, c) = f.mul(A.at(col, c), s);
      if (B)
        for (unsigned c = 0; c < B->cols; ++c) B->at(col, c) = f.mul(B->at(col, c), s);
    }
    for (unsigned r = 0; r < n; ++r) {
      if (r == col) continue;
      const uint64_t e = A.at(r, col);
      if (e == 0) continue;
      for (unsigned c = 0; c < n; ++c) A.at(r, c) ^= f.mul(e, A.at(col, c));
      if (B)
        for (unsigned c = 0; c < B->cols; ++c) B->at(r, c) ^= f.mul(e, B->at(col, c));
    }
  }
  return true;
}

}  // namespace

Result<Matrix> invert(const Field &f, const Matrix &A) {
  if (A.rows != A.cols)
    return Status(StatusCode::kInvalidArgument,
                  "cannot invert a " + std::to_string(A.rows) + "x" + std::to_string(A.cols) +
                      " matrix: not square");
  Matrix work = A;
  Matrix inv = Matrix::identity(A.rows);
  if (!gauss_jordan(f, work, &inv))
    return Status(StatusCode::kSingular,
                  "matrix of size " + std::to_string(A.rows) + " is singular");
  return inv;
}

bool is_invertible(const Field &f, const Matrix &A) {
  if (A.rows != A.cols) return false;
  Matrix work = A;
  return gauss_jordan(f, work, nullptr);
}

}  // namespace ecjit::codes
