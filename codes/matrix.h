// Dense matrices over GF(2^l): products, inversion, sub-matrix selection.
#pragma once

#include <cstddef>
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

// Entries other than 0 and 1: the constant multiplies a kernel for M performs (a 0 is
// skipped, a 1 is a plain XOR).
size_t count_products(const Matrix &M);

// What a constant multiply costs a lowering: its set bits, up to `cap` (0 and 1 cost nothing).
// kProducts (cap 1): the same for every constant (table look-ups, GFNI, carry-less multiply
// instructions); kSetBits (cap 64): one shift-and-XOR pair per set bit (Nešković 2018's
// shift-and-XOR lowering); a cap between: shifts and XORs for short constants, an instruction
// costing `cap` set bits for the others (clmul-mixed). kNoSearch (cap 0, every constant
// free) names no lowering: decode planning keeps the syndromes as its intermediates and
// searches no cheaper basis (schedule_decode), for callers that run the direct map.
struct CostModel {
  unsigned cap = 1;
  static const CostModel kNoSearch, kProducts, kSetBits;
  friend constexpr bool operator==(CostModel a, CostModel b) { return a.cap == b.cap; }
};
inline constexpr CostModel CostModel::kNoSearch{0};
inline constexpr CostModel CostModel::kProducts{1};
inline constexpr CostModel CostModel::kSetBits{64};
inline uint64_t constant_cost(uint64_t a, CostModel model) {
  if (a <= 1) return 0;
  const unsigned bits = unsigned(__builtin_popcountll(a));
  return bits < model.cap ? bits : model.cap;
}
// Sum of constant_cost over M's entries (count_products = product_cost(M, kProducts)).
uint64_t product_cost(const Matrix &M, CostModel model);

// The one-stage map of a two-stage one: post * [I; pre], where pre is t x k (intermediates
// from k inputs) and post is r x (k + t) (outputs from the inputs and the intermediates).
// Precondition (asserted): post.cols == pre.cols + pre.rows.
Matrix compose_stages(const Field &f, const Matrix &pre, const Matrix &post);

// Inverse of a square matrix by Gauss-Jordan elimination; kSingular when it has none.
Result<Matrix> invert(const Field &f, const Matrix &A);

// Whether a square matrix is invertible (same elimination, no inverse kept).
bool is_invertible(const Field &f, const Matrix &A);

}  // namespace ecjit::codes
