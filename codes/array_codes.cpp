// EVENODD, RDP and STAR: each parity chain written as a bit-matrix row (XOR-toggled, so a
// packet a chain meets twice cancels).
#include "codes/array_codes.h"

#include <string>

#include "codes/xor_families.h"

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }
std::string num(uint64_t v) { return std::to_string(v); }

// The spec's prime: arrays have p - 1 rows and w = p - 1.
unsigned prime_of(const CodeSpec &s) { return s.w + 1; }

Status check_array(const CodeSpec &s, unsigned m, unsigned width_less) {
  const std::string fam = family_name(s.family);
  const unsigned p = prime_of(s);
  if (p < 3 || !is_prime(p)) return bad(fam + " needs p prime (>= 3); p = " + num(p));
  if (s.m != m) return bad(fam + " has m = " + num(m) + " parity shards; m = " + num(s.m));
  if (s.k > p - width_less)
    return bad(fam + " needs k <= p" + (width_less ? " - " + num(width_less) : std::string()) + "; k = " +
               num(s.k) + ", p = " + num(p));
  return Status::Ok();
}

// Adds data element (row, col) of the array to parity row `r` when it exists: row < p - 1
// (the last row is the imaginary zero row) and col < k (shortened columns are zero).
struct Chains {
  BitMatrix B;
  unsigned k, p;
  Chains(unsigned k_, unsigned m, unsigned p_) : B(m * (p_ - 1), k_ * (p_ - 1)), k(k_), p(p_) {}
  unsigned w() const { return p - 1; }
  void add(unsigned r, unsigned row, unsigned col) {
    if (row >= p - 1 || col >= k) return;
    const unsigned c = col * w() + row;
    B.set(r, c, !B.get(r, c));
  }
  void add_row(unsigned r, unsigned row) {  // P_row, as its data
    for (unsigned j = 0; j < k; ++j) add(r, row, j);
  }
  // parity block `block`, row i: the diagonal of slope `dir` (+1: a(<i - j>, j); -1:
  // a(<i + j>, j)) over columns 0..p-1 plus its adjuster, the chain through row p - 1.
  void diagonal_with_adjuster(unsigned block, int dir) {
    for (unsigned i = 0; i < w(); ++i)
      for (unsigned j = 0; j < p; ++j) {
        add(block * w() + i, unsigned((int(i) - dir * int(j) + 2 * int(p) * int(p)) % int(p)), j);
        add(block * w() + i, unsigned((int(p) - 1 - dir * int(j) + 2 * int(p) * int(p)) % int(p)), j);
      }
  }
};

}  // namespace

Status check_evenodd(const CodeSpec &s) { return check_array(s, 2, 0); }
Status check_rdp(const CodeSpec &s) { return check_array(s, 2, 1); }
Status check_star(const CodeSpec &s) { return check_array(s, 3, 0); }

Status build_evenodd(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  Chains c(s.k, 2, prime_of(s));
  for (unsigned i = 0; i < c.w(); ++i) c.add_row(i, i);
  c.diagonal_with_adjuster(1, +1);
  *parity = std::move(c.B);
  return Status::Ok();
}

Status build_star(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  Chains c(s.k, 3, prime_of(s));
  for (unsigned i = 0; i < c.w(); ++i) c.add_row(i, i);
  c.diagonal_with_adjuster(1, +1);
  c.diagonal_with_adjuster(2, -1);
  *parity = std::move(c.B);
  return Status::Ok();
}

Status build_rdp(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  const unsigned p = prime_of(s);
  Chains c(s.k, 2, p);
  for (unsigned i = 0; i < c.w(); ++i) c.add_row(i, i);
  for (unsigned d = 0; d < c.w(); ++d)
    for (unsigned j = 0; j < p; ++j) {
      const unsigned row = (d + p - j) % p;
      if (row == p - 1) continue;
      if (j == p - 1) c.add_row(c.w() + d, row);  // the P column's element: its row's data
      else c.add(c.w() + d, row, j);
    }
  *parity = std::move(c.B);
  return Status::Ok();
}

unsigned default_prime(CodeFamily family, unsigned k) {
  unsigned p = family == CodeFamily::kRdp ? k + 1 : k;
  if (p < 3) p = 3;
  while (!is_prime(p)) ++p;
  return p;
}

}  // namespace ecjit::codes
