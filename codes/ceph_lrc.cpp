// ceph-lrc: Ceph's generated lrc layout (k, m, l) as a matrix code with one local check per group.
#include "codes/ceph_lrc.h"

#include "codes/constructions.h"
#include "codes/families.h"

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }


// The layout of a checked spec: g groups of data d = k/g, globals c = m/g and one local.
struct Layout {
  unsigned k, m, l, g, d, c;
  explicit Layout(const CodeSpec &s) : k(s.k), m(s.r), l(s.l), g((s.k + s.r) / s.l), d(s.k / g), c(s.r / g) {}
  // Parity shard p (0-based after the data): its group and, below c, its global index.
  unsigned group_of_parity(unsigned p) const { return p / (c + 1); }
  bool is_local(unsigned p) const { return p % (c + 1) == c; }
  unsigned global_index(unsigned p) const { return group_of_parity(p) * c + p % (c + 1); }
};

}  // namespace

Status check_ceph_lrc(const CodeSpec &s) {
  const std::string name =
      "ceph-lrc:k=" + std::to_string(s.k) + ",m=" + std::to_string(s.r) + ",l=" + std::to_string(s.l);
  // The plugin's own rules and words (ErasureCodeLrc::parse_kml).
  if (s.l == 0 || (s.k + s.r) % s.l) return bad(name + ": k + m must be a multiple of l");
  const unsigned g = (s.k + s.r) / s.l;
  // (The plugin's third rule, m a multiple of (k + m) / l, then holds: g divides k + m and k.)
  if (s.k % g) return bad(name + ": k must be a multiple of (k + m) / l = " + std::to_string(g));
  if (s.gf != 8) return bad(name + ": Ceph's layers are jerasure reed_sol_van with w=8 (gf=8 only)");
  if (s.poly != 0) return bad(name + ": jerasure's polynomial is fixed; poly= is not accepted");
  if (s.k + s.r > 255) return bad(name + ": jerasure's w=8 global layer takes k + m <= 255");
  return Status::Ok();
}

Status read_ceph_lrc_keys(const std::map<std::string, std::string> &kv, CodeSpec *spec) {
  unsigned m = 0, l = 0;
  ECJIT_RETURN_IF_ERROR(decimal_key(kv, "m", "ceph-lrc:k=K,m=M,l=L", &m));
  ECJIT_RETURN_IF_ERROR(decimal_key(kv, "l", "ceph-lrc:k=K,m=M,l=L", &l));
  if (m == 0) return bad("ceph-lrc: m=0; m must be at least 1 (the global parities)");
  if (l == 0) return bad("ceph-lrc: l=0; k + m must be a multiple of l");
  spec->r = m;
  spec->l = l;
  spec->m = m + (spec->k + m) / l;  // global + one local per group (check_ceph_lrc refuses l not dividing k + m)
  return Status::Ok();
}

std::string write_ceph_lrc_keys(const CodeSpec &s) {
  return "k=" + std::to_string(s.k) + ",m=" + std::to_string(s.r) + ",l=" + std::to_string(s.l);
}

Matrix ceph_lrc_parity(const Field &field, const CodeSpec &spec) {
  const Layout y(spec);
  const Matrix global = jerasure_vandermonde_parity(field, y.k, y.m);
  Matrix a(y.m + y.g, y.k);
  for (unsigned p = 0; p < a.rows; ++p) {
    if (!y.is_local(p)) {
      for (unsigned j = 0; j < y.k; ++j) a.at(p, j) = global.at(y.global_index(p), j);
      continue;
    }
    const unsigned grp = y.group_of_parity(p);  // the XOR of its data and global chunks
    for (unsigned j = grp * y.d; j < (grp + 1) * y.d; ++j) a.at(p, j) ^= 1;
    for (unsigned t = 0; t < y.c; ++t)
      for (unsigned j = 0; j < y.k; ++j) a.at(p, j) ^= global.at(grp * y.c + t, j);
  }
  return a;
}

std::vector<LocalCheck> ceph_lrc_checks(const CodeSpec &spec) {
  const Layout y(spec);
  std::vector<LocalCheck> checks(y.g);
  for (unsigned grp = 0; grp < y.g; ++grp) {
    LocalCheck &c = checks[grp];
    for (unsigned j = grp * y.d; j < (grp + 1) * y.d; ++j) c.shards.push_back(j);
    for (unsigned t = 0; t <= y.c; ++t) c.shards.push_back(y.k + grp * (y.c + 1) + t);  // globals, local
    c.coeffs.assign(c.shards.size(), 1);
  }
  return checks;
}

unsigned ceph_lrc_chunk(const CodeSpec &spec, unsigned s) {
  const Layout y(spec);
  if (s < y.k) return (s / y.d) * (y.l + 1) + s % y.d;
  const unsigned p = s - y.k;
  return y.group_of_parity(p) * (y.l + 1) + y.d + p % (y.c + 1);
}

}  // namespace ecjit::codes
