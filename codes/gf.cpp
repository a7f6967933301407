// GF(2^l) arithmetic: Algorithm 3-1 carry-less multiply and the Barrett reduction of eq. 3.21.
#include "codes/gf.h"

#include <map>
#include <mutex>
#include <utility>

#include <cstdio>
#include <string>
#include <utility>

#include "ecjit/code_spec.h"

namespace ecjit::codes {
namespace {

uint64_t mask_for(unsigned l) { return l == 64 ? ~uint64_t(0) : (uint64_t(1) << l) - 1; }

// Bit `i` of a 3-word (192-bit) polynomial.
bool bit3(const uint64_t w[3], unsigned i) { return (w[i / 64] >> (i % 64)) & 1; }

// q+(X) = floor(X^2l / p(X)), returned without its X^l term (eq. 3.16). Long division on a
// 192-bit remainder so l = 64 (X^128) fits.
uint64_t compute_qplus_low(unsigned l, uint64_t pstar) {
  uint64_t r[3] = {0, 0, 0};
  r[(2 * l) / 64] |= uint64_t(1) << ((2 * l) % 64);
  uint64_t q = 0;  // quotient bits 0..l-1 (bit l is always set)
  for (int shift = int(l); shift >= 0; --shift) {
    unsigned top = unsigned(shift) + l;  // degree of p(X) * X^shift
    if (!bit3(r, top)) continue;
    if (unsigned(shift) < l) q |= uint64_t(1) << shift;
    // r ^= p(X) << shift  ==  (X^l + pstar) << shift
    r[top / 64] ^= uint64_t(1) << (top % 64);
    unsigned s = unsigned(shift);
    r[s / 64] ^= pstar << (s % 64);
    if (s % 64 != 0 && s / 64 + 1 < 3) r[s / 64 + 1] ^= pstar >> (64 - s % 64);
  }
  return q;
}

// Multiplication modulo p by shift-and-add, reducing at every step (independent of Barrett).
uint64_t mulmod_plain(unsigned l, uint64_t pstar, uint64_t a, uint64_t b) {
  const uint64_t top = uint64_t(1) << (l - 1);
  const uint64_t mask = mask_for(l);
  uint64_t r = 0;
  for (unsigned i = 0; i < l; ++i) {
    if (b & 1) r ^= a;
    b >>= 1;
    bool carry = (a & top) != 0;
    a = (a << 1) & mask;
    if (carry) a ^= pstar;
  }
  return r;
}

uint64_t powmod_plain(unsigned l, uint64_t pstar, uint64_t a, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r = mulmod_plain(l, pstar, r, a);
    a = mulmod_plain(l, pstar, a, a);
    e >>= 1;
  }
  return r;
}

// Distinct prime factors of 2^l - 1 for the supported l.
const uint64_t kFactors8[] = {3, 5, 17};
const uint64_t kFactors16[] = {3, 5, 17, 257};
const uint64_t kFactors32[] = {3, 5, 17, 257, 65537};
const uint64_t kFactors64[] = {3, 5, 17, 257, 641, 65537, 6700417};

}  // namespace

Clmul128 clmul64(uint64_t a, uint64_t b) {
  Clmul128 r;
  for (; a != 0; a &= a - 1) {  // for each set bit i of a: r ^= b << i
    unsigned i = unsigned(__builtin_ctzll(a));
    r.lo ^= b << i;
    if (i) r.hi ^= b >> (64 - i);
  }
  return r;
}

bool is_primitive(unsigned l, uint64_t pstar) {
  if (l != 8 && l != 16 && l != 32 && l != 64) return false;
  if ((pstar & 1) == 0) return false;  // X divides p(X)
  const uint64_t order = mask_for(l);
  const uint64_t x = 2;
  if (powmod_plain(l, pstar, x, order) != 1) return false;
  const uint64_t *f = nullptr;
  size_t nf = 0;
  switch (l) {
    case 8: f = kFactors8; nf = 3; break;
    case 16: f = kFactors16; nf = 4; break;
    case 32: f = kFactors32; nf = 5; break;
    default: f = kFactors64; nf = 7; break;
  }
  for (size_t i = 0; i < nf; ++i)
    if (powmod_plain(l, pstar, x, order / f[i]) == 1) return false;
  return true;
}

namespace {

// The tables of GF(2^l) mod X^l + pstar (l <= 16, primitive), built once per polynomial.
std::shared_ptr<const Field::LogTables> log_tables(unsigned l, uint64_t pstar) {
  // Never destroyed (as every lazily made static a Jit's background thread may reach while
  // exit handlers run).
  static std::mutex mutex;
  static auto *const built = new std::map<std::pair<unsigned, uint64_t>, std::shared_ptr<const Field::LogTables>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto &t = (*built)[{l, pstar}];
  if (t) return t;
  auto tables = std::make_shared<Field::LogTables>();
  const uint64_t order = mask_for(l);
  tables->log.assign(size_t(order) + 1, 0);
  tables->exp.resize(2 * size_t(order));
  uint64_t x = 1;
  for (uint64_t i = 0; i < order; ++i) {
    tables->exp[i] = tables->exp[i + order] = uint32_t(x);
    tables->log[x] = uint32_t(i);
    x <<= 1;
    if (x >> l) x = (x & order) ^ pstar;
  }
  t = std::move(tables);
  return t;
}

}  // namespace

Field::Field(unsigned l, uint64_t pstar)
    : l_(l), pstar_(pstar), qplus_low_(compute_qplus_low(l, pstar)), mask_(mask_for(l)) {
  if (l <= 16) tables_ = log_tables(l, pstar);
}

Result<Field> Field::make(unsigned l, uint64_t poly) {
  if (l != 8 && l != 16 && l != 32 && l != 64)
    return Status(StatusCode::kInvalidSpec,
                  "unsupported field GF(2^" + std::to_string(l) + "); use gf=8, 16, 32 or 64");
  if (poly == 0) poly = default_poly(l);
  if (l < 64 && (poly >> l) != 0) {
    if ((poly >> l) != 1) {
      char buf[64];
      snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)poly);
      return Status(StatusCode::kInvalidSpec, std::string("polynomial ") + buf +
                                                  " has degree above " + std::to_string(l));
    }
    poly &= mask_for(l);
  }
  if (!is_primitive(l, poly)) {
    char buf[64];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)poly);
    return Status(StatusCode::kInvalidSpec,
                  std::string("polynomial X^") + std::to_string(l) + " + " + buf +
                      " is not primitive over GF(2) (X does not generate GF(2^" +
                      std::to_string(l) + ")*)");
  }
  return Field(l, poly);
}

uint64_t Field::reduce(Clmul128 c) const {
  // c = c_dag * X^l + c_star (eq. 3.7).
  uint64_t c_star, c_dag;
  if (l_ == 64) {
    c_star = c.lo;
    c_dag = c.hi;
  } else {
    c_star = c.lo & mask_;
    c_dag = c.lo >> l_;  // a 2l-bit product of l-bit values fits in 64 bits for l <= 32
  }
  // Step 1: q = M^l(c_dag x q+), with q+ = X^l + qplus_low (eq. 3.20).
  Clmul128 t = clmul64(c_dag, qplus_low_);
  uint64_t q = (l_ == 64 ? t.hi : (t.lo >> l_)) ^ c_dag;
  // Steps 2-3: u = L^l(p* x q) (eq. 3.21).
  uint64_t u = clmul64(pstar_, q).lo & mask_;
  return c_star ^ u;
}

uint64_t Field::mul(uint64_t a, uint64_t b) const {
  a &= mask_;
  b &= mask_;
  if (tables_) return a && b ? tables_->exp[size_t(tables_->log[a]) + tables_->log[b]] : 0;
  // clmul64 loops over the set bits of its first operand: give it the sparser one.
  if (__builtin_popcountll(a) > __builtin_popcountll(b)) std::swap(a, b);
  return reduce(clmul64(a, b));
}

uint64_t Field::mul_plain(uint64_t a, uint64_t b) const {
  return mulmod_plain(l_, pstar_, a & mask_, b & mask_);
}

uint64_t Field::pow(uint64_t a, uint64_t e) const {
  uint64_t r = 1;
  a &= mask_;
  while (e) {
    if (e & 1) r = mul(r, a);
    a = mul(a, a);
    e >>= 1;
  }
  return r;
}

uint64_t Field::inv(uint64_t a) const {
  if ((a & mask_) == 0) return 0;
  if (tables_) return tables_->exp[mask_ - tables_->log[a & mask_]];
  return pow(a, mask_ - 1);  // a^(2^l - 2)
}

}  // namespace ecjit::codes
