// GF(2^16) in Cantor-basis coordinates: log/exp tables and the LCH skew table, built once.
#include "codes/rs_fft_field.h"

#include <cassert>
#include <vector>

namespace ecjit::codes::fft {
namespace {

// log(a) + log(b) + ... over a product, reduced to [0, kModulus).
uint32_t reduce_log(uint64_t sum) { return uint32_t(sum % kModulus); }

struct Tables {
  std::vector<uint16_t> log;   // kOrder entries; log[0] = kModulus
  std::vector<uint16_t> exp;   // kOrder entries; exp[kModulus] = exp[0] = 1
  std::vector<uint16_t> skew;  // kSkewCount entries, see skew_logs()

  Tables() : log(kOrder), exp(kOrder), skew(kSkewCount) {
    // Discrete logs in the polynomial basis: walk the powers of X.
    std::vector<uint16_t> poly_log(kOrder, 0);
    uint32_t p = 1;
    for (uint32_t i = 0; i < kModulus; ++i) {
      poly_log[p] = uint16_t(i);
      p <<= 1;
      if (p & kOrder) p ^= kPolynomial;
    }
    assert(p == 1 && "kPolynomial is primitive");
    // Change of basis: phi(e) = XOR of the Cantor basis vectors selected by e.
    std::vector<uint16_t> phi(kOrder, 0);
    for (uint32_t e = 1; e < kOrder; ++e)
      phi[e] = uint16_t(phi[e & (e - 1)] ^ kCantorBasis[__builtin_ctz(e)]);
    log[0] = kModulus;
    for (uint32_t e = 1; e < kOrder; ++e) {
      log[e] = poly_log[phi[e]];
      exp[log[e]] = uint16_t(e);
    }
    exp[kModulus] = exp[0];
    build_skew();
  }

  // log of s_j(x) = prod_{w < 2^j} (x + w), or kModulus when x is in W_j (the product is 0).
  uint32_t log_subspace_poly(unsigned j, uint32_t x) const {
    if (x < (1u << j)) return kModulus;
    uint64_t sum = 0;
    for (uint32_t w = 0; w < (1u << j); ++w) sum += log[x ^ w];
    return reduce_log(sum);
  }

  void build_skew() {
    for (unsigned j = 0; j < kBits; ++j) {
      const uint32_t half = 1u << j;
      const uint32_t log_norm = log_subspace_poly(j, half);  // s_j(v_j), never 0
      for (uint32_t x = 0; x + half - 1 < kSkewCount; x += 2 * half) {
        const uint32_t l = log_subspace_poly(j, x);
        skew[x + half - 1] =
            l == kModulus ? uint16_t(kModulus) : uint16_t(reduce_log(l + kModulus - log_norm));
      }
    }
  }
};

const Tables &tables() {
  // Never destroyed: a Jit's background thread may still compile rs-fft kernels (an erasure
  // set's unrolled inverse) while exit handlers run.
  static const Tables *const t = new Tables();
  return *t;
}

}  // namespace

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
  return t.exp[reduce_log(l + kModulus - norm)];
}

const uint16_t *skew_logs() { return tables().skew.data(); }

}  // namespace ecjit::codes::fft
