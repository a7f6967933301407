// lrc: the spec's rules and keys, the recoverability rule of its layout, and the search for its global coefficients.
#include "codes/lrc.h"

#include "codes/families.h"
#include "codes/recoverability.h"

#include <algorithm>
#include <mutex>

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }


// splitmix64: the candidates' fixed pseudo-random sequence.
uint64_t mix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Visits every subset of {0..n-1} of exactly e elements as a mask; stops when visit is false.
template <typename Visit>
bool each_pattern(unsigned n, unsigned e, std::vector<bool> &lost, unsigned from, Visit &&visit) {
  if (e == 0) return visit(lost);
  for (unsigned s = from; s + e <= n; ++s) {
    lost[s] = true;
    const bool go = each_pattern(n, e - 1, lost, s + 1, visit);
    lost[s] = false;
    if (!go) return false;
  }
  return true;
}


}  // namespace

Status check_lrc(const CodeSpec &s) {
  const unsigned l = s.l, r = s.r;
  const std::string name = "lrc:k=" + std::to_string(s.k) + ",l=" + std::to_string(l) + ",r=" + std::to_string(r);
  if (l == 0) return bad(name + ": l must be at least 1 (the local groups)");
  if (r == 0 || s.m != l + r) return bad(name + ": r must be at least 1 (the global parities)");
  if (s.k % l)
    return bad(name + ": l must divide k (local groups of k/l data shards); " + std::to_string(s.k) + " % " +
               std::to_string(l) + " = " + std::to_string(s.k % l));
  if (s.gf != 8 && s.gf != 16) return bad(name + ": gf=" + std::to_string(s.gf) + "; lrc is defined over gf=8 or 16");
  if (s.poly != 0) return bad(name + ": lrc uses the field's default polynomial; poly= is not accepted");
  const uint64_t n = uint64_t(s.k) + s.m;
  const uint64_t points = (uint64_t(1) << s.gf) - 1;
  if (n > points || n > kMaxShards)
    return bad(name + ": k + l + r = " + std::to_string(n) + " shards; gf=" + std::to_string(s.gf) +
               " takes at most " + std::to_string(std::min<uint64_t>(points, kMaxShards)) +
               (s.gf == 8 ? " (gf=16 takes more)" : ""));
  return Status::Ok();
}

Status read_lrc_keys(const std::map<std::string, std::string> &kv, CodeSpec *spec) {
  unsigned l = 0, r = 0;
  ECJIT_RETURN_IF_ERROR(decimal_key(kv, "l", "lrc:k=K,l=L,r=R", &l));
  ECJIT_RETURN_IF_ERROR(decimal_key(kv, "r", "lrc:k=K,l=L,r=R", &r));
  if (l == 0) return bad("lrc: l=0; l must be at least 1 (the local groups)");
  if (r == 0) return bad("lrc: r=0; r must be at least 1 (the global parities)");
  spec->l = l;
  spec->r = r;
  spec->m = l + r;
  return Status::Ok();
}

std::string write_lrc_keys(const CodeSpec &s) {
  return "k=" + std::to_string(s.k) + ",l=" + std::to_string(s.l) + ",r=" + std::to_string(s.r);
}

LrcLayout lrc_layout(const CodeSpec &s) { return LrcLayout{s.k, s.l, s.r}; }

bool LrcLayout::decodable(const std::vector<bool> &lost) const {
  const unsigned g = group_size();
  unsigned needed = 0, globals = 0;
  for (unsigned grp = 0; grp < l; ++grp) {
    unsigned e = 0;
    for (unsigned d = grp * g; d < (grp + 1) * g; ++d) e += lost[d];
    const unsigned p = lost[k + grp] ? 0 : 1;
    needed += e > p ? e - p : 0;
  }
  for (unsigned j = 0; j < r; ++j) globals += !lost[k + l + j];
  return needed <= globals;
}

bool lrc_recovers_all(const Field &field, const LrcLayout &layout, const Matrix &parity, unsigned max_losses) {
  std::vector<bool> lost(layout.n(), false);
  for (unsigned e = 1; e <= max_losses; ++e) {
    const bool ok = each_pattern(layout.n(), e, lost, 0, [&](const std::vector<bool> &pattern) {
      return decodes_loss(field, parity, layout.k, pattern) == layout.decodable(pattern);
    });
    if (!ok) return false;
  }
  return true;
}

unsigned lrc_verified_losses(const LrcLayout &layout) {
  const unsigned all = layout.l + layout.r;
  double patterns = 0;
  for (unsigned e = 1; e <= all; ++e) patterns += binomial(layout.n(), e);
  return patterns <= double(1 << 16) ? all : std::min(all, layout.r + 1);
}

static Matrix search_parity(const Field &field, const CodeSpec &spec) {
  const LrcLayout layout = lrc_layout(spec);
  const unsigned k = layout.k, l = layout.l, r = layout.r, g = layout.group_size();
  Matrix a(l + r, k);
  for (unsigned grp = 0; grp < l; ++grp)
    for (unsigned d = grp * g; d < (grp + 1) * g; ++d) a.at(grp, d) = 1;
  const unsigned losses = lrc_verified_losses(layout);
  uint64_t state = (uint64_t(k) << 40) ^ (uint64_t(l) << 20) ^ (uint64_t(r) << 4) ^ spec.gf;
  // Candidate 0 is a Cauchy block (1 / (x_j + y_d), distinct points), the usual choice for
  // global parities; then pseudo-random nonzero coefficients. The first that passes serves.
  // Should none of 256 pass, the Cauchy block stays: it still decodes every loss of at most
  // r shards (each square block of a Cauchy matrix inverts).
  Matrix cauchy = a;
  for (unsigned j = 0; j < r; ++j)
    for (unsigned d = 0; d < k; ++d) cauchy.at(l + j, d) = field.inv(uint64_t(j) ^ uint64_t(r + d));
  if (lrc_recovers_all(field, layout, cauchy, losses)) return cauchy;
  for (unsigned candidate = 1; candidate < 256; ++candidate) {
    Matrix c = a;
    for (unsigned j = 0; j < r; ++j)
      for (unsigned d = 0; d < k; ++d) {
        uint64_t e = 0;
        while (e == 0) e = mix(state) & field.mask();
        c.at(l + j, d) = e;
      }
    if (lrc_recovers_all(field, layout, c, losses)) return c;
  }
  return cauchy;
}

Matrix lrc_parity(const Field &field, const CodeSpec &spec) {
  // The search runs once per spec in a process (up to ~50 ms for the widest checks). Never
  // destroyed, as codes' other lazily made tables.
  static std::mutex mutex;
  static auto *const searched = new std::map<std::string, Matrix>();
  const std::string key = spec.to_string();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = searched->find(key); it != searched->end()) return it->second;
  }
  Matrix found = search_parity(field, spec);
  std::lock_guard<std::mutex> lock(mutex);
  return searched->emplace(key, std::move(found)).first->second;
}

}  // namespace ecjit::codes
