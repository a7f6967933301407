// GF(2^l) arithmetic for l = 8, 16, 32, 64: carry-less multiply + Barrett reduction
// (Nešković 2018, ch. 3.1).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ecjit/status.h"

namespace ecjit::codes {

// 128-bit carry-less product of two 64-bit polynomials over GF(2).
struct Clmul128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
};

// Algorithm 3-1: carry-less multiplication, bit-serial (shift b by each set bit of a, XOR).
Clmul128 clmul64(uint64_t a, uint64_t b);

// A binary extension field GF(2^l) defined by a primitive polynomial p(X) of degree l.
// Elements are the integers 0 .. 2^l - 1 (bit i = coefficient of X^i). Immutable value
// type; every method is const and thread-safe.
class Field {
 public:
  // l in {8, 16, 32, 64}. poly: the polynomial, either with its X^l term (l < 64) or with
  // that term implied; 0 selects the default. Fails with kInvalidSpec when l is not
  // supported or the polynomial is not primitive (X does not have order 2^l - 1).
  static Result<Field> make(unsigned l, uint64_t poly = 0);

  unsigned bits() const { return l_; }
  unsigned bytes() const { return l_ / 8; }
  // p*(X): the l low coefficients of p(X) (eq. 3.12). X^l is implied.
  uint64_t poly() const { return pstar_; }
  // q+(X) without its X^l term: floor(X^2l / p(X)) (eq. 3.16), degree exactly l.
  uint64_t qplus_low() const { return qplus_low_; }
  uint64_t mask() const { return mask_; }
  uint64_t order() const { return mask_; }  // size of the multiplicative group, 2^l - 1

  static uint64_t add(uint64_t a, uint64_t b) { return a ^ b; }
  // a * b: carry-less product then Barrett reduction, eq. 3.7 + 3.21.
  uint64_t mul(uint64_t a, uint64_t b) const;
  // a * b by plain shift-and-add with reduction at every step (the test twin of mul).
  uint64_t mul_plain(uint64_t a, uint64_t b) const;
  // Barrett reduction of a 2l-bit carry-less product (hi:lo as a 128-bit value).
  uint64_t reduce(Clmul128 c) const;
  // a^e (e may be 0; 0^0 = 1).
  uint64_t pow(uint64_t a, uint64_t e) const;
  // Multiplicative inverse; a must be nonzero (inv(0) returns 0, like ISA-L's gf_inv).
  uint64_t inv(uint64_t a) const;
  // a / b; b must be nonzero.
  uint64_t div(uint64_t a, uint64_t b) const { return mul(a, inv(b)); }

  bool operator==(const Field &o) const { return l_ == o.l_ && pstar_ == o.pstar_; }

  // Log / antilog tables of GF(2^8) and GF(2^16) (X generates the group: the polynomial is
  // primitive), shared by every Field of the same polynomial. mul and inv use them; the
  // Barrett path (mul of l > 16, and mul_plain) stays the independent twin of the tests.
  struct LogTables {
    std::vector<uint32_t> log;  // log[a] for a in [1, 2^l); log[0] unused
    std::vector<uint32_t> exp;  // exp[i] = X^i for i < 2 (2^l - 1), so log a + log b indexes it
  };

 private:
  Field(unsigned l, uint64_t pstar);
  std::shared_ptr<const LogTables> tables_;  // l <= 16
  unsigned l_ = 8;
  uint64_t pstar_ = 0;
  uint64_t qplus_low_ = 0;
  uint64_t mask_ = 0;
};

// Whether p(X) = X^l + pstar is primitive over GF(2).
bool is_primitive(unsigned l, uint64_t pstar);

}  // namespace ecjit::codes
