// WordField: GF(2^w) for any w in [2, 32], the fields of bit-matrix codes (Jerasure's words).
#pragma once

#include <cstdint>

#include "ecjit/status.h"

namespace ecjit::codes {

// Low w bits of the polynomial libJerasure 2 uses for GF(2^w) (GF-Complete's defaults:
// 0x1d for w = 8, 0x100b for 16, 0x400007 for 32; see gf_word.cpp), 0 outside [2, 32].
uint32_t jerasure_poly(unsigned w);

// GF(2^w) = GF(2)[X] / p(X), p of degree w, elements 0 .. 2^w - 1. Shift-and-add
// arithmetic: these fields only build coding matrices (k x m products, a few thousand
// inversions), never touch data. Immutable value type.
class WordField {
 public:
  // w in [2, 32]; poly = low w bits of p (0: jerasure_poly(w)). p must be irreducible
  // (checked: kInvalidSpec otherwise), so that every nonzero element has an inverse.
  static Result<WordField> make(unsigned w, uint32_t poly = 0);

  unsigned w() const { return w_; }
  uint32_t poly() const { return poly_; }
  uint32_t mask() const { return mask_; }
  // a * X (one step of the bit-matrix expansion).
  uint32_t times_x(uint32_t a) const {
    const bool carry = (a >> (w_ - 1)) & 1;
    a = (a << 1) & mask_;
    return carry ? a ^ poly_ : a;
  }
  uint32_t mul(uint32_t a, uint32_t b) const;
  // Multiplicative inverse of a nonzero a (a^(2^w - 2)); inv(0) = 0.
  uint32_t inv(uint32_t a) const;
  uint32_t div(uint32_t a, uint32_t b) const { return mul(a, inv(b)); }
  // Ones in the w x w bit-matrix of multiplication by a (Jerasure's cauchy_n_ones): the
  // XORs a bit-matrix code spends on the coefficient.
  unsigned bitmatrix_ones(uint32_t a) const;

 private:
  WordField(unsigned w, uint32_t poly)
      : w_(w), poly_(poly), mask_(w == 32 ? 0xffffffffu : (uint32_t(1) << w) - 1) {}
  unsigned w_;
  uint32_t poly_;
  uint32_t mask_;
};

}  // namespace ecjit::codes
