// Dense matrices over GF(2^l): products, inversion, sub-matrix selection.
#pragma once

#include <cstdint>
#include <vector>

#include "codes/gf.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// A rows x cols matrix of field elements, row-major. Plain value type.
struct Matrix {
  unsigned rows = 0;
  unsigned cols = 0;
  std::vector<uint64_t> a;

  Matrix() = default;
  Matrix(unsigned r, unsigned c) : rows(r), cols(c), a(size_t(r) * c, 0) {}
  static Matrix identity(unsigned n);

  uint64_t &at(unsigned r, unsigned c) { return a[size_t(r) * cols + c]; }
  uint64_t at(unsigned r, unsigned c) const { return a[size_t(r) * cols + c]; }
  bool operator==(const Matrix &o) const { return rows == o.rows && cols == o.cols && a == o.a; }

  // The rows listed, in that order.
  Matrix select_rows(const std::vector<unsigned> &which) const;
};

// A * B over the field.
Matrix multiply(const Field &f, const Matrix &A, const Matrix &B);

// Inverse of a square matrix by Gauss-Jordan elimination; kSingular when it has none.
Result<Matrix> invert(const Field &f, const Matrix &A);

// Whether a square matrix is invertible (same elimination, no inverse kept).
bool is_invertible(const Field &f, const Matrix &A);

}  // namespace ecjit::codes
