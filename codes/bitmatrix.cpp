// BitMatrix products and inversion over GF(2).
#include "codes/bitmatrix.h"

namespace ecjit::codes {

BitMatrix BitMatrix::identity(unsigned n) {
  BitMatrix I(n, n);
  for (unsigned i = 0; i < n; ++i) I.set(i, i);
  return I;
}

size_t BitMatrix::row_ones(unsigned r) const {
  size_t n = 0;
  for (unsigned w = 0; w < words(); ++w) n += size_t(__builtin_popcountll(row(r)[w]));
  return n;
}

size_t BitMatrix::ones() const {
  size_t n = 0;
  for (uint64_t x : bits) n += size_t(__builtin_popcountll(x));
  return n;
}

BitMatrix BitMatrix::select_rows(const std::vector<unsigned> &which) const {
  BitMatrix S(unsigned(which.size()), cols);
  for (size_t i = 0; i < which.size(); ++i)
    for (unsigned w = 0; w < words(); ++w) S.row(unsigned(i))[w] = row(which[i])[w];
  return S;
}

bool BitBasis::add(const uint64_t *row) {
  const unsigned cols = rows_.cols, words = rows_.words();
  std::vector<uint64_t> v(row, row + words);
  for (unsigned c = 0; c < cols; ++c)
    if (((v[c / 64] >> (c % 64)) & 1) && pivot_[c] >= 0)
      for (unsigned w = 0; w < words; ++w) v[w] ^= rows_.row(unsigned(pivot_[c]))[w];
  unsigned c = 0;
  while (c < cols && !((v[c / 64] >> (c % 64)) & 1)) ++c;
  if (c == cols) return false;
  for (unsigned w = 0; w < words; ++w) rows_.row(rank_)[w] = v[w];
  pivot_[c] = int(rank_++);
  return true;
}

BitMatrix multiply(const BitMatrix &A, const BitMatrix &B) {
  BitMatrix C(A.rows, B.cols);
  for (unsigned r = 0; r < A.rows; ++r)
    for (unsigned c = 0; c < A.cols; ++c)
      if (A.get(r, c))
        for (unsigned w = 0; w < C.words(); ++w) C.row(r)[w] ^= B.row(c)[w];
  return C;
}

Result<BitMatrix> invert(const BitMatrix &A) {
  if (A.rows != A.cols) return Status(StatusCode::kInvalidArgument, "invert: matrix is not square");
  const unsigned n = A.rows;
  BitMatrix M = A, I = BitMatrix::identity(n);
  const unsigned words = M.words();
  for (unsigned c = 0; c < n; ++c) {
    unsigned p = c;
    while (p < n && !M.get(p, c)) ++p;
    if (p == n) return Status(StatusCode::kSingular, "bit-matrix is singular");
    if (p != c)
      for (unsigned w = 0; w < words; ++w) {
        std::swap(M.row(p)[w], M.row(c)[w]);
        std::swap(I.row(p)[w], I.row(c)[w]);
      }
    for (unsigned r = 0; r < n; ++r)
      if (r != c && M.get(r, c))
        for (unsigned w = 0; w < words; ++w) {
          M.row(r)[w] ^= M.row(c)[w];
          I.row(r)[w] ^= I.row(c)[w];
        }
  }
  return I;
}

}  // namespace ecjit::codes
