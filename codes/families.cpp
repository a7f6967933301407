// The registry of code families over GF(2^l) symbols: each family's spec rules and construction beside its row.
#include "codes/families.h"

#include <algorithm>
#include <cstdio>

#include "codes/ceph_lrc.h"
#include "codes/constructions.h"
#include "codes/lrc.h"
#include "codes/rs_fft.h"
#include "codes/xor_families.h"

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }

uint64_t points_of(unsigned l) {  // distinct field elements, capped at 2^32
  return l >= 32 ? uint64_t(1) << 32 : uint64_t(1) << l;
}

using fft::next_pow2;

// Vandermonde and Cauchy constructions over k + m distinct points of the field.
Status check_points(const CodeSpec &s) {
  const uint64_t n = uint64_t(s.k) + s.m;
  if (n > points_of(s.gf))
    return bad(std::string(family_name(s.family)) + " needs k+m <= 2^" + std::to_string(s.gf) +
               " distinct points; k+m = " + std::to_string(n));
  return Status::Ok();
}

// ISA-L's matrices: GF(2^8) with 0x11d, k + m <= 255.
Status check_isal(const CodeSpec &s) {
  const std::string fam = family_name(s.family);
  if (s.gf != 8) return bad(fam + " is defined over GF(2^8) only (gf=8)");
  if (s.poly != 0) return bad(fam + " uses ISA-L's polynomial 0x11d; poly cannot be changed");
  if (uint64_t(s.k) + s.m > 255)
    return bad(fam + " supports k+m <= 255 (ISA-L's limit); k+m = " + std::to_string(uint64_t(s.k) + s.m));
  return Status::Ok();
}

Status check_jerasure_vand(const CodeSpec &s) {
  if (s.gf != 8 && s.gf != 16 && s.gf != 32) return bad("jerasure-vand is defined for w = 8, 16, 32 (gf=8|16|32)");
  if (s.poly != 0) return bad("jerasure-vand uses Jerasure's default polynomial; poly cannot be changed");
  const uint64_t n = uint64_t(s.k) + s.m;
  if (n > points_of(s.gf))
    return bad("jerasure-vand needs k+m <= 2^" + std::to_string(s.gf) + "; k+m = " + std::to_string(n));
  return Status::Ok();
}

Status check_raidz(const CodeSpec &s) {
  if (s.gf != 8) return bad("raidz is defined over GF(2^8) only (gf=8)");
  if (s.poly != 0) return bad("raidz uses the polynomial 0x11d; poly cannot be changed");
  if (s.m > 3) return bad("raidz supports m = 1 (P), 2 (PQ) or 3 (PQR); m = " + std::to_string(s.m));
  if (s.k > 255) return bad("raidz supports k <= 255 data shards; k = " + std::to_string(s.k));
  return Status::Ok();
}

// a=: m x k entries, each an element of the field.
Status check_matrix(const CodeSpec &s) {
  if (s.matrix.size() != size_t(s.k) * s.m)
    return bad("matrix has " + std::to_string(s.matrix.size()) + " entries; m x k = " + std::to_string(s.m) +
               " x " + std::to_string(s.k) + " needs " + std::to_string(size_t(s.k) * s.m));
  const uint64_t mask = s.gf == 64 ? ~uint64_t(0) : (uint64_t(1) << s.gf) - 1;
  for (size_t i = 0; i < s.matrix.size(); ++i)
    if (s.matrix[i] & ~mask) {
      char entry[24];
      std::snprintf(entry, sizeof entry, "0x%llx", (unsigned long long)s.matrix[i]);
      return bad("matrix entry " + std::string(entry) + " (row " + std::to_string(i / s.k) + ", column " +
                 std::to_string(i % s.k) + ") is not an element of GF(2^" + std::to_string(s.gf) + ")");
    }
  return Status::Ok();
}

// rs-fft: GF(2^16) (reed-solomon-simd's field, the default) or GF(2^8) (Leopard-RS's, gf=8),
// no poly, no matrix, and the field's shard rule in place of kMaxShards.
Status check_rs_fft(const CodeSpec &s) {
  if (s.gf != 16 && s.gf != 8)
    return bad("gf=" + std::to_string(s.gf) +
               ": rs-fft runs over reed-solomon-simd's GF(2^16) (gf=16, the default) or Leopard-RS's GF(2^8) "
               "(gf=8, k + next_pow2(m) <= 256); no other field");
  if (s.poly != 0)
    return bad("rs-fft's fields are fixed (reed-solomon-simd's GF(2^16), Leopard-RS's GF(2^8), Cantor bases): "
               "poly= is not accepted");
  if (!s.matrix.empty()) return bad("a= (matrix entries) is only valid for the matrix family");
  if (s.gf == 8) {
    if (!fft::geometry(s.k, s.m, fft::Gf::k8).ok())
      return bad("rs-fft:k=" + std::to_string(s.k) + ",m=" + std::to_string(s.m) +
                 ",gf=8 is past Leopard-RS's GF(2^8) limit: k + next_pow2(m) = " +
                 std::to_string(uint64_t(s.k) + next_pow2(s.m)) +
                 " > 256 (its points are the field's 256 elements; gf=16 takes up to 65536)");
    return Status::Ok();
  }
  if (!fft::geometry(s.k, s.m).ok()) {
    const uint64_t used = std::min(next_pow2(s.k), next_pow2(s.m)) + std::max(s.k, s.m);
    return bad("rs-fft:k=" + std::to_string(s.k) + ",m=" + std::to_string(s.m) +
               " is past reed-solomon-simd's limit: min(next_pow2(k), next_pow2(m)) + max(k, m) = " +
               std::to_string(used) + " > 65536 (rs-fft's shard rule; other families: k+m <= " +
               std::to_string(kMaxShards) + ")");
  }
  return Status::Ok();
}

Matrix given_matrix(const Field &, const CodeSpec &s) {
  Matrix a(s.m, s.k);
  a.a = s.matrix;
  return a;
}

// A construction of constructions.h as a row's parity function.
template <Matrix (*Build)(const Field &, unsigned, unsigned)>
Matrix built(const Field &f, const CodeSpec &s) {
  return Build(f, s.k, s.m);
}

const std::vector<SymbolFamily> kFamilies = {
    {CodeFamily::kRsVand, "rs-vand", CodecKind::kMatrix, check_points, built<rs_vandermonde_parity>},
    {CodeFamily::kRsCauchy, "rs-cauchy", CodecKind::kMatrix, check_points, built<rs_cauchy_parity>},
    {CodeFamily::kIsalRs, "isal-rs", CodecKind::kMatrix, check_isal, built<isal_rs_parity>},
    {CodeFamily::kIsalCauchy, "isal-cauchy", CodecKind::kMatrix, check_isal, built<isal_cauchy_parity>},
    {CodeFamily::kJerasureVand, "jerasure-vand", CodecKind::kMatrix, check_jerasure_vand,
     built<jerasure_vandermonde_parity>},
    {CodeFamily::kRaidz, "raidz", CodecKind::kMatrix, check_raidz, built<raidz_parity>},
    {CodeFamily::kMatrix, "matrix", CodecKind::kMatrix, check_matrix, given_matrix},
    {CodeFamily::kRsFft, "rs-fft", CodecKind::kFft, check_rs_fft, nullptr, "k, m, gf",
     " (rs-fft's fields are fixed: reed-solomon-simd's GF(2^16) or, with gf=8, Leopard-RS's GF(2^8), "
     "both in Cantor-basis coordinates, so no poly= and no a=)",
     16},
    {CodeFamily::kLrc, "lrc", CodecKind::kMatrix, check_lrc, lrc_parity, "k, l, r, gf",
     " (lrc:k=K,l=L,r=R: L local groups of K/L data shards, R global parities; m = L + R)", 8, read_lrc_keys,
     write_lrc_keys},
    {CodeFamily::kCephLrc, "ceph-lrc", CodecKind::kMatrix, check_ceph_lrc, ceph_lrc_parity, "k, m, l, gf",
     " (ceph-lrc:k=K,m=M,l=L as Ceph's lrc profile: (K+M)/L local groups; gf=8)", 8, read_ceph_lrc_keys,
     write_ceph_lrc_keys, ceph_lrc_checks},
};

}  // namespace

const std::vector<SymbolFamily> &symbol_families() { return kFamilies; }

Status decimal_key(const std::map<std::string, std::string> &kv, const char *key, const char *form, unsigned *out) {
  auto it = kv.find(key);
  if (it == kv.end()) return bad(std::string("missing ") + key + "= (" + form + ")");
  const std::string &v = it->second;
  if (v.empty() || v.size() > 8 || v.find_first_not_of("0123456789") != std::string::npos)
    return bad(std::string(key) + "='" + v + "' is not a decimal number");
  *out = unsigned(std::stoul(v));
  return Status::Ok();
}

const SymbolFamily *symbol_family(CodeFamily f) {
  for (const SymbolFamily &r : kFamilies)
    if (r.family == f) return &r;
  return nullptr;
}

bool find_family(const std::string &name, CodeFamily *out) {
  for (const SymbolFamily &r : kFamilies)
    if (name == r.name) {
      *out = r.family;
      return true;
    }
  for (const BitFamily &r : bit_families())
    if (name == r.name) {
      *out = r.family;
      return true;
    }
  return false;
}

CodecKind codec_kind(const CodeSpec &spec) {
  if (spec.bitmatrix()) return CodecKind::kBitmatrix;
  const SymbolFamily *row = symbol_family(spec.family);
  return row ? row->kind : CodecKind::kMatrix;
}

}  // namespace ecjit::codes
