// The fields of rs-fft: GF(2^16) as reed-solomon-simd represents it, GF(2^8) as Leopard-RS does (Cantor-basis coordinates), and their LCH skew tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ecjit::codes::fft {

// Which field an rs-fft code runs over: reed-solomon-simd's GF(2^16) (the default, up to 65536
// points) or Leopard-RS's GF(2^8) (klauspost/reedsolomon's WithLeopardGF, up to 256 points).
enum class Gf : uint8_t { k16 = 16, k8 = 8 };
// The field of a spec's gf= (CodeSpec::gf of an rs-fft code: 8 or 16).
inline Gf gf_of_bits(unsigned bits) { return bits == 8 ? Gf::k8 : Gf::k16; }

// One of those fields, as every transform uses it: elements are `bits`-bit values in
// Cantor-basis coordinates (below `order`), logarithms in [0, modulus] with the conventions
// the GF(2^16) functions below document (log[0] == modulus; exp[modulus] == exp[0] == 1; a
// log of modulus in a butterfly means "skip"), skew the LCH twiddle logs (modulus entries,
// indexed as skew_logs()). GF(2^8): the field polynomial X^8 + X^4 + X^3 + X^2 + 1 (0x11D),
// Cantor basis {1, 214, 152, 146, 86, 200, 88, 230} in its polynomial basis (Leopard-RS's
// ff8). Immutable, built once on first use; thread-safe.
struct LchField {
  Gf gf;
  unsigned bits;
  uint32_t order;    // 2^bits
  uint32_t modulus;  // 2^bits - 1
  const uint16_t *log;
  const uint16_t *exp;
  const uint16_t *skew;
  // (a + b) mod modulus the way the crates add logs (may give modulus for 0).
  uint16_t add_mod(uint16_t a, uint16_t b) const {
    const uint32_t s = uint32_t(a) + b;
    return uint16_t((s + (s >> bits)) & (order - 1));
  }
  // a * exp(log_b); 0 when a == 0.
  uint16_t mul_log(uint16_t a, uint16_t log_b) const { return a ? exp[add_mod(log[a], log_b)] : 0; }
  uint16_t mul(uint16_t a, uint16_t b) const { return a && b ? exp[add_mod(log[a], log[b])] : 0; }
};
const LchField &lch_field(Gf gf);

// ---- GF(2^16), the default field ----
// Field order and the order of its multiplicative group.
constexpr unsigned kOrder = 65536;
constexpr unsigned kModulus = 65535;
constexpr unsigned kBits = 16;

// The field polynomial in the polynomial basis: X^16 + X^5 + X^3 + X^2 + 1. Primitive; X
// generates the multiplicative group and defines the logarithms below.
constexpr uint32_t kPolynomial = 0x1002D;

// The representation: a 16-bit value e stands for the field element
//   phi(e) = XOR of kCantorBasis[i] over the set bits i of e,
// with kCantorBasis written in the polynomial basis of kPolynomial. The basis is a Cantor
// basis: v0 = 1 and v[i]^2 + v[i] = v[i-1], so e = 1 is the unit and the values below 2^j
// form the subspace W_j = span(v0 .. v[j-1]). Addition is XOR in both representations.
constexpr std::array<uint16_t, kBits> kCantorBasis = {
    0x0001, 0xACCA, 0x3C0E, 0x163E, 0xC582, 0xED2E, 0x914C, 0x4012,
    0x6C98, 0x10D8, 0x6A72, 0xB900, 0xFDB8, 0xFB34, 0xFF38, 0x991E};

// Logarithms are to the base phi^-1(X) (the element that is X in the polynomial basis), in
// [0, kModulus). log_of(0) == kModulus by convention. exp_of(kModulus) == exp_of(0) == 1, so
// kModulus works as a second name for the log of 1 wherever a log is added mod kModulus.
// All functions below are thread-safe; the tables (about 384 KiB) are built once, on first
// use, in function-local statics.
uint16_t log_of(uint16_t a);
uint16_t exp_of(uint16_t l);

// (a + b) mod kModulus for a, b <= kModulus, the way the crate adds logs: the result may be
// kModulus where the canonical value is 0 (both mean the same under exp_of).
inline uint16_t add_mod(uint16_t a, uint16_t b) {
  const uint32_t s = uint32_t(a) + b;
  return uint16_t(s + (s >> kBits));
}

// The tables themselves, kOrder entries each (log_table()[0] == kModulus,
// exp_table()[kModulus] == 1), for inner loops and for code generators.
const uint16_t *log_table();
const uint16_t *exp_table();

// a * b in the representation.
uint16_t mul(uint16_t a, uint16_t b);

// a * exp_of(log_b): the crate's primitive. 0 when a == 0; log_b == kModulus multiplies by
// 1 (not by 0). Multiplying by 0 is not expressible with a log: the butterflies below mean
// "skip the multiply-add" when their twiddle log is kModulus.
uint16_t mul_log(uint16_t a, uint16_t log_b);

// Multiplicative inverse; a must be nonzero (inv(0) returns 0).
uint16_t inv(uint16_t a);

// x -> c * x is GF(2)-linear on the 16-bit representation: column j is c * (1 << j), so
// c * x = XOR of column j over the set bits j of x.
std::array<uint16_t, kBits> mul_columns(uint16_t c);

// The LCH normalised subspace polynomials, s_j(x) = prod_{w in W_j} (x + w) and
// shat_j(x) = s_j(x) / s_j(v_j). Both are GF(2)-linear and vanish exactly on W_j, so shat_j
// is constant on every coset of W_j, and shat_j(x + v_j) = shat_j(x) + 1.
// subspace_poly(j, x) = shat_j(x) for j < 16, by the definition (2^j products).
uint16_t subspace_poly(unsigned j, uint16_t x);

// The twiddles of the transforms, as logs: kSkewCount entries, indexed so that the
// butterfly of the layer of half-width 2^j whose block starts at point index x (x a multiple
// of 2^(j+1)) uses skew_logs()[x + 2^j - 1]. That is, for 0 <= i < kSkewCount, with
// j = ctz(i + 1) and x = i + 1 - 2^j,
//   skew_logs()[i] = log_of(shat_j(x)),
// which is kModulus (twiddle 0) exactly when x == 0. Same values as the crate's Skew table.
constexpr size_t kSkewCount = kModulus;
const uint16_t *skew_logs();

}  // namespace ecjit::codes::fft
