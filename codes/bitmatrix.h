// BitMatrix: a dense matrix over GF(2), the form of XOR codes (Jerasure's bit-matrices).
#pragma once

#include <cstdint>
#include <vector>

#include "codes/gf_word.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// rows x cols bits, each row packed into words() 64-bit words (bit c of a row is bit c % 64
// of word c / 64). Plain value type.
struct BitMatrix {
  unsigned rows = 0;
  unsigned cols = 0;
  std::vector<uint64_t> bits;

  BitMatrix() = default;
  BitMatrix(unsigned r, unsigned c) : rows(r), cols(c), bits(size_t(r) * words(), 0) {}
  static BitMatrix identity(unsigned n);

  unsigned words() const { return (cols + 63) / 64; }
  uint64_t *row(unsigned r) { return bits.data() + size_t(r) * words(); }
  const uint64_t *row(unsigned r) const { return bits.data() + size_t(r) * words(); }
  bool get(unsigned r, unsigned c) const { return (row(r)[c / 64] >> (c % 64)) & 1; }
  void set(unsigned r, unsigned c, bool v = true) {
    const uint64_t bit = uint64_t(1) << (c % 64);
    row(r)[c / 64] = v ? row(r)[c / 64] | bit : row(r)[c / 64] & ~bit;
  }
  size_t ones() const;
  size_t row_ones(unsigned r) const;
  bool operator==(const BitMatrix &o) const {
    return rows == o.rows && cols == o.cols && bits == o.bits;
  }
  // The rows listed, in that order.
  BitMatrix select_rows(const std::vector<unsigned> &which) const;
};

// An incremental basis of GF(2) row vectors of `cols` bits, in echelon form (each stored
// row's lowest set bit is its pivot): add() reduces a row by the stored ones in ascending
// column order and keeps it when something is left.
class BitBasis {
 public:
  explicit BitBasis(unsigned cols) : rows_(cols, cols), pivot_(cols, -1) {}
  // Whether `row` (words() words) is independent of the rows added so far; kept if so.
  bool add(const uint64_t *row);
  unsigned rank() const { return rank_; }
  bool full() const { return rank_ == rows_.cols; }

 private:
  BitMatrix rows_;
  std::vector<int> pivot_;  // column -> stored row whose pivot it is
  unsigned rank_ = 0;
};

// A * B over GF(2).
BitMatrix multiply(const BitMatrix &A, const BitMatrix &B);
// Inverse by Gauss-Jordan elimination over GF(2); kSingular when there is none.
Result<BitMatrix> invert(const BitMatrix &A);

// The (m w) x (k w) bit-matrix of an m x k matrix over GF(2^w), row-major `symbols`, as
// Jerasure's jerasure_matrix_to_bitmatrix lays it out: block (i, j) holds the w x w matrix
// of multiplication by e = symbols[i k + j], its column x the bits of e X^x (bit l in row l).
// times_x(e) = e * X in the field.
template <typename TimesX>
BitMatrix expand_symbols(const std::vector<uint64_t> &symbols, unsigned m, unsigned k,
                         unsigned w, TimesX times_x) {
  BitMatrix B(m * w, k * w);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) {
      uint64_t e = symbols[size_t(i) * k + j];
      for (unsigned x = 0; x < w; ++x, e = times_x(e))
        for (unsigned l = 0; l < w; ++l)
          if ((e >> l) & 1) B.set(i * w + l, j * w + x);
    }
  return B;
}

}  // namespace ecjit::codes
