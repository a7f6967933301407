// EVENODD, RDP and STAR as bit-matrix codes: their rules, and their bit-matrices solved from
// the chains of their element-level layouts (codes/array_layout.h).
#include "codes/array_codes.h"

#include <string>

#include "codes/array_layout.h"
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

// The parity bit-matrix of the layout `family` (codes/array_layout.h: the chains are written
// once, there) shortened to spec.k data disks, the missing data disks zero: each chain in
// encode order, a parity member (RDP's diagonals run through its P disk) replaced by that
// parity's own row. Columns data disk-major (disk * w + row), rows likewise over the parity
// disks. Linear in the chains' members, for any p the spec admits.
Status from_layout(const char *family, const CodeSpec &s, BitMatrix *parity) {
  Result<ArrayLayout> L = array_layout(family, prime_of(s), ~0u);
  if (!L.ok()) return L.status();
  const unsigned w = L->rows, first_parity_disk = L->disks - s.m;
  BitMatrix B(s.m * w, s.k * w);
  auto row_of_parity = [&](unsigned cell) {
    return (L->disk_of(cell) - first_parity_disk) * w + L->row_of(cell);
  };
  for (unsigned i : L->encode_order()) {
    const ArrayLayout::Chain &ch = L->chains[i];
    uint64_t *out = B.row(row_of_parity(ch.parity));
    for (unsigned m : ch.members) {
      if (L->is_parity(m)) {
        const uint64_t *in = B.row(row_of_parity(m));
        for (unsigned x = 0; x < B.words(); ++x) out[x] ^= in[x];
      } else if (L->disk_of(m) < s.k) {
        const unsigned c = L->disk_of(m) * w + L->row_of(m);
        out[c / 64] ^= uint64_t(1) << (c % 64);
      }
    }
  }
  *parity = std::move(B);
  return Status::Ok();
}

}  // namespace

Status check_evenodd(const CodeSpec &s) { return check_array(s, 2, 0); }
Status check_rdp(const CodeSpec &s) { return check_array(s, 2, 1); }
Status check_star(const CodeSpec &s) { return check_array(s, 3, 0); }

Status build_evenodd(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  return from_layout("evenodd", s, parity);
}

Status build_star(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  return from_layout("star", s, parity);
}

Status build_rdp(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  return from_layout("rdp", s, parity);
}

unsigned default_prime(CodeFamily family, unsigned k) {
  unsigned p = family == CodeFamily::kRdp ? k + 1 : k;
  if (p < 3) p = 3;
  while (!is_prime(p)) ++p;
  return p;
}

}  // namespace ecjit::codes
