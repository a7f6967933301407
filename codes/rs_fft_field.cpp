// GF(2^16) and GF(2^8) in Cantor-basis coordinates: log/exp tables and the LCH skew tables, built once.
#include "codes/rs_fft_field.h"

#include <cassert>
#include <vector>

namespace ecjit::codes::fft {
namespace {

constexpr std::array<uint16_t, 8> kCantorBasis8 = {1, 214, 152, 146, 86, 200, 88, 230};
constexpr uint32_t kPolynomial8 = 0x11D;

// The tables of one field: GF(2^bits) over `poly` in the coordinates of `basis` (a Cantor
// basis in the polynomial basis of poly).
struct Tables {
  unsigned bits;
  uint32_t order, modulus;
  std::vector<uint16_t> log;   // order entries; log[0] = modulus
  std::vector<uint16_t> exp;   // order entries; exp[modulus] = exp[0] = 1
  std::vector<uint16_t> skew;  // modulus entries, see skew_logs()
  LchField field;

  Tables(Gf gf, unsigned b, uint32_t poly, const uint16_t *basis)
      : bits(b), order(1u << b), modulus((1u << b) - 1), log(order), exp(order), skew(modulus) {
    // Discrete logs in the polynomial basis: walk the powers of X.
    std::vector<uint16_t> poly_log(order, 0);
    uint32_t p = 1;
    for (uint32_t i = 0; i < modulus; ++i) {
      poly_log[p] = uint16_t(i);
      p <<= 1;
      if (p & order) p ^= poly;
    }
    assert(p == 1 && "the field polynomial is primitive");
    // Change of basis: phi(e) = XOR of the Cantor basis vectors selected by e.
    std::vector<uint16_t> phi(order, 0);
    for (uint32_t e = 1; e < order; ++e) phi[e] = uint16_t(phi[e & (e - 1)] ^ basis[__builtin_ctz(e)]);
    log[0] = uint16_t(modulus);
    for (uint32_t e = 1; e < order; ++e) {
      log[e] = poly_log[phi[e]];
      exp[log[e]] = uint16_t(e);
    }
    exp[modulus] = exp[0];
    build_skew();
    field = LchField{gf, bits, order, modulus, log.data(), exp.data(), skew.data()};
  }

  // log(a) + log(b) + ... over a product, reduced to [0, modulus).
  uint32_t reduce_log(uint64_t sum) const { return uint32_t(sum % modulus); }

  // log of s_j(x) = prod_{w < 2^j} (x + w), or modulus when x is in W_j (the product is 0).
  uint32_t log_subspace_poly(unsigned j, uint32_t x) const {
    if (x < (1u << j)) return modulus;
    uint64_t sum = 0;
    for (uint32_t w = 0; w < (1u << j); ++w) sum += log[x ^ w];
    return reduce_log(sum);
  }

  void build_skew() {
    for (unsigned j = 0; j < bits; ++j) {
      const uint32_t half = 1u << j;
      const uint32_t log_norm = log_subspace_poly(j, half);  // s_j(v_j), never 0
      for (uint32_t x = 0; x + half - 1 < modulus; x += 2 * half) {
        const uint32_t l = log_subspace_poly(j, x);
        skew[x + half - 1] = l == modulus ? uint16_t(modulus) : uint16_t(reduce_log(l + modulus - log_norm));
      }
    }
  }
};

const Tables &tables(Gf gf = Gf::k16) {
  // Never destroyed: a Jit's background thread may still compile rs-fft kernels (an erasure
  // set's unrolled inverse) while exit handlers run.
  if (gf == Gf::k8) {
    static const Tables *const t8 = new Tables(Gf::k8, 8, kPolynomial8, kCantorBasis8.data());
    return *t8;
  }
  static const Tables *const t = new Tables(Gf::k16, kBits, kPolynomial, kCantorBasis.data());
  return *t;
}

}  // namespace

const LchField &lch_field(Gf gf) { return tables(gf).field; }

uint16_t log_of(uint16_t a) { return tables().log[a]; }
uint16_t exp_of(uint16_t l) { return tables().exp[l]; }

const uint16_t *log_table() { return tables().log.data(); }
const uint16_t *exp_table() { return tables().exp.data(); }

uint16_t mul(uint16_t a, uint16_t b) {
  if (a == 0 || b == 0) return 0;
  const Tables &t = tables();
  return t.exp[add_mod(t.log[a], t.log[b])];
}

uint16_t mul_log(uint16_t a, uint16_t log_b) {
  if (a == 0) return 0;
  const Tables &t = tables();
  return t.exp[add_mod(t.log[a], log_b)];
}

uint16_t inv(uint16_t a) {
  if (a == 0) return 0;
  const Tables &t = tables();
  return t.exp[kModulus - t.log[a]];
}

std::array<uint16_t, kBits> mul_columns(uint16_t c) {
  std::array<uint16_t, kBits> cols{};
  for (unsigned j = 0; j < kBits; ++j) cols[j] = mul(c, uint16_t(1u << j));
  return cols;
}

uint16_t subspace_poly(unsigned j, uint16_t x) {
  assert(j < kBits);
  const Tables &t = tables();
  const uint32_t l = t.log_subspace_poly(j, x);
  if (l == kModulus) return 0;
  const uint32_t norm = t.log_subspace_poly(j, 1u << j);
  return t.exp[t.reduce_log(l + kModulus - norm)];
}

const uint16_t *skew_logs() { return tables().skew.data(); }

}  // namespace ecjit::codes::fft
