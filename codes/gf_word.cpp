// WordField arithmetic and libJerasure's polynomials.
#include "codes/gf_word.h"

#include <string>

namespace ecjit::codes {

uint32_t jerasure_poly(unsigned w) {
  // X^w reduced by libJerasure 2's field for each w (galois_single_multiply(2^(w-1), 2, w)
  // on Debian's libJerasure 2 / libgf-complete 1; gf_word_test checks every w against it).
  static const uint32_t kPoly[33] = {
      0,        0,   0x3,  0x3,  0x3,     0x5, 0x3,  0x9,  0x1d, 0x11, 0x9,
      0x5,      0x53, 0x1b, 0x443, 0x3,   0x100b, 0x9, 0x81, 0x27, 0x9,  0x5,
      0x3,      0x21, 0x87, 0x9,  0x47,   0x27, 0x9,  0x5,  0x800007, 0x9, 0x400007};
  return w <= 32 ? kPoly[w] : 0;
}

namespace {

// Whether X^w + poly is irreducible over GF(2): X^(2^w) = X mod p, and gcd(X^(2^(w/q)) - X,
// p) = 1 for each prime q dividing w (Rabin's test), computed with the field's own multiply.
bool irreducible(const WordField &f) {
  auto frobenius = [&](unsigned times) {  // X^(2^times) mod p
    uint32_t x = 2;
    for (unsigned i = 0; i < times; ++i) x = f.mul(x, x);
    return x;
  };
  if (frobenius(f.w()) != 2) return false;
  // gcd of (X^(2^(w/q)) + X) with p: polynomial gcd over GF(2), p has degree w.
  auto gcd_is_one = [&](uint32_t a) {
    uint64_t u = (uint64_t(1) << f.w()) | f.poly(), v = a;
    while (v != 0) {
      while (u != 0 && 63 - __builtin_clzll(u) >= 63 - __builtin_clzll(v))
        u ^= v << ((63 - __builtin_clzll(u)) - (63 - __builtin_clzll(v)));
      std::swap(u, v);
    }
    return u == 1;
  };
  for (unsigned q = 2; q <= f.w(); ++q) {
    if (f.w() % q != 0) continue;
    bool prime = true;
    for (unsigned d = 2; d * d <= q; ++d) prime = prime && q % d != 0;
    if (!prime) continue;
    const uint32_t t = frobenius(f.w() / q) ^ 2;
    if (t == 0 || !gcd_is_one(t)) return false;
  }
  return true;
}

}  // namespace

Result<WordField> WordField::make(unsigned w, uint32_t poly) {
  if (w < 2 || w > 32)
    return Status(StatusCode::kInvalidSpec, "w=" + std::to_string(w) + " is not supported; use w = 2..32");
  WordField f(w, poly ? poly : jerasure_poly(w));
  if (w < 32 && (f.poly_ >> w) == 1) f.poly_ &= f.mask_;  // X^w given explicitly
  if ((f.poly_ & ~f.mask_) != 0 || !irreducible(f))
    return Status(StatusCode::kInvalidSpec, "polynomial of GF(2^" + std::to_string(w) +
                                                ") is not irreducible over GF(2)");
  return f;
}

uint32_t WordField::mul(uint32_t a, uint32_t b) const {
  uint32_t r = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) r ^= a;
    a = times_x(a);
  }
  return r;
}

uint32_t WordField::inv(uint32_t a) const {
  if (a == 0) return 0;
  // a^(2^w - 2) = product of a^(2^i) for i = 1 .. w-1.
  uint32_t r = 1, sq = a;
  for (unsigned i = 1; i < w_; ++i) {
    sq = mul(sq, sq);
    r = mul(r, sq);
  }
  return r;
}

unsigned WordField::bitmatrix_ones(uint32_t a) const {
  unsigned ones = 0;
  for (unsigned i = 0; i < w_; ++i, a = times_x(a)) ones += unsigned(__builtin_popcount(a));
  return ones;
}

}  // namespace ecjit::codes
