// Bit-matrix families: Cauchy (original, good, searched), Liberation, Blaum-Roth, Liber8tion,
// any symbol code expanded to bits, and the registry rows of the array codes (array_codes.h).
#include "codes/xor_families.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <tuple>

#include "codes/array_codes.h"
#include "codes/linear_code.h"
#include "codes/xor_schedule.h"

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }
std::string num(uint64_t v) { return std::to_string(v); }

// Jerasure's layout of a RAID-6 bit-matrix: the P rows (row l of P XORs packet l of every
// data device) then the Q blocks the family defines; q[j] = the w x w block of data device j,
// q[j][r] = the packets (bit x = packet x) Q's row r XORs from it.
BitMatrix raid6_bitmatrix(unsigned k, unsigned w, const std::vector<std::vector<uint32_t>> &q) {
  BitMatrix B(2 * w, k * w);
  for (unsigned j = 0; j < k; ++j)
    for (unsigned r = 0; r < w; ++r) {
      B.set(r, j * w + r);
      for (unsigned x = 0; x < w; ++x)
        if ((q[j][r] >> x) & 1) B.set(w + r, j * w + x);
    }
  return B;
}

Status check_cauchy(const CodeSpec &s) {
  if (s.w < 2 || s.w > 32) return bad(std::string(family_name(s.family)) + " needs w = 2..32; w = " + num(s.w));
  if (s.w < 32 && uint64_t(s.k) + s.m > (uint64_t(1) << s.w))
    return bad(std::string(family_name(s.family)) + " needs k+m <= 2^w distinct points; k+m = " +
               num(s.k + s.m) + ", 2^w = " + num(uint64_t(1) << s.w));
  return Status::Ok();
}

Status build_cauchy(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *symbols) {
  Result<WordField> f = WordField::make(s.w);
  if (!f.ok()) return f.status();
  *symbols = s.family == CodeFamily::kCauchyGood ? cauchy_good_matrix(*f, s.k, s.m)
                                                 : cauchy_original_matrix(*f, s.k, s.m);
  *parity = expand_symbols(*symbols, s.m, s.k, s.w,
                           [&](uint64_t e) { return uint64_t(f->times_x(uint32_t(e))); });
  return Status::Ok();
}

// Zhou and Tian 2019, sec. 4: Cauchy X (m points) and Y (k points), disjoint, searched by a genetic
// algorithm for the fewest weighted operations of the normalised bit-matrix under uniform
// matching (its c'_{1,2}: an XOR weighs 1.5 copies). The first individual is Jerasure's
// original X = 0..m-1, Y = m..m+k-1 and the best is always kept, so the result is never
// worse than cauchy-good (m > 2) under this cost. Deterministic for a seed.
struct CauchyPoints {
  std::vector<uint32_t> pts;  // x_0..x_{m-1}, then y_0..y_{k-1}, all distinct
  double cost = 0;
};

std::vector<uint64_t> cauchy_xy_matrix(const WordField &f, unsigned k, unsigned m, const std::vector<uint32_t> &pts) {
  std::vector<uint64_t> a(size_t(k) * m);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) a[size_t(i) * k + j] = f.div(1, pts[i] ^ pts[m + j]);
  return a;
}

double weighted_cost(const WordField &f, unsigned k, unsigned m, const std::vector<uint32_t> &pts) {
  std::vector<uint64_t> a = cauchy_xy_matrix(f, k, m, pts);
  normalize_matrix(f, k, m, &a);
  const BitMatrix B = expand_symbols(a, m, k, f.w(), [&](uint64_t e) { return uint64_t(f.times_x(uint32_t(e))); });
  // Matching recounts pairs per round: for large matrices the smart schedule stands in.
  const XorProgram p = make_schedule(B, B.ones() <= 8192 ? XorSchedule::kUniformMatching : XorSchedule::kSmart);
  return 1.5 * double(p.xors()) + double(p.copies());
}

std::vector<uint32_t> cauchy_opt_points(const WordField &f, unsigned k, unsigned m, uint64_t seed) {
  const unsigned n = k + m, kPopulation = 10, kGenerations = 12;
  const uint64_t field = uint64_t(f.mask()) + 1;
  std::mt19937_64 rng(seed);
  auto draw = [&] { return uint32_t(rng() % field); };
  // Replaces repeated points by unused random ones (the field has >= n elements).
  auto repair = [&](std::vector<uint32_t> &pts) {
    for (size_t i = 0; i < pts.size(); ++i)
      while (std::find(pts.begin(), pts.begin() + long(i), pts[i]) != pts.begin() + long(i)) pts[i] = draw();
  };
  std::vector<CauchyPoints> pop(kPopulation);
  for (unsigned i = 0; i < n; ++i) pop[0].pts.push_back(i);
  for (unsigned p = 1; p < kPopulation; ++p) {
    for (unsigned i = 0; i < n; ++i) pop[p].pts.push_back(draw());
    repair(pop[p].pts);
  }
  for (CauchyPoints &c : pop) c.cost = weighted_cost(f, k, m, c.pts);
  // Fewest weighted operations first; ties by the points, so the order is a pure function.
  auto by_cost = [](const CauchyPoints &a, const CauchyPoints &b) {
    return a.cost != b.cost ? a.cost < b.cost : a.pts < b.pts;
  };
  for (unsigned g = 0; g < kGenerations; ++g) {
    std::sort(pop.begin(), pop.end(), by_cost);
    std::vector<CauchyPoints> next(pop.begin(), pop.begin() + kPopulation / 2);  // elitism
    while (next.size() < kPopulation) {
      auto pick = [&]() -> const CauchyPoints & {  // tournament of two among the better half
        const CauchyPoints &a = pop[rng() % (kPopulation / 2)], &b = pop[rng() % kPopulation];
        return a.cost <= b.cost ? a : b;
      };
      const CauchyPoints &pa = pick(), &pb = pick();
      CauchyPoints child;
      for (unsigned i = 0; i < n; ++i) child.pts.push_back(rng() % 2 ? pa.pts[i] : pb.pts[i]);  // uniform crossover
      if (rng() % 2) child.pts[rng() % n] = draw();                                           // mutation
      repair(child.pts);
      child.cost = weighted_cost(f, k, m, child.pts);
      next.push_back(std::move(child));
    }
    pop = std::move(next);
  }
  std::sort(pop.begin(), pop.end(), by_cost);
  return pop[0].pts;
}

// The search's points for (w, k, m, seed), run once per process (0.2 s for RS(10,4), 2 s for
// k = 20, m = 6): a second codec of the spec, or its check-mds, reuses them. Not kept on
// disk: the points define the code, and a cache entry could only be checked by searching again.
std::vector<uint32_t> searched_points(const WordField &f, unsigned k, unsigned m, uint64_t seed) {
  static std::mutex mutex;
  static auto *const found =  // never destroyed: reachable from background threads at exit
      new std::map<std::tuple<unsigned, unsigned, unsigned, uint64_t>, std::vector<uint32_t>>();
  const auto key = std::make_tuple(f.w(), k, m, seed);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = found->find(key); it != found->end()) return it->second;
  }
  std::vector<uint32_t> pts = cauchy_opt_points(f, k, m, seed);
  std::lock_guard<std::mutex> lock(mutex);
  return found->emplace(key, std::move(pts)).first->second;
}

std::vector<uint32_t> points_of(const WordField &f, const CodeSpec &s) {
  if (s.points.empty()) return searched_points(f, s.k, s.m, s.seed);
  return std::vector<uint32_t>(s.points.begin(), s.points.end());
}

Status build_cauchy_opt(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *symbols) {
  Result<WordField> f = WordField::make(s.w);
  if (!f.ok()) return f.status();
  *symbols = cauchy_xy_matrix(*f, s.k, s.m, points_of(*f, s));
  normalize_matrix(*f, s.k, s.m, symbols);
  *parity = expand_symbols(*symbols, s.m, s.k, s.w, [&](uint64_t e) { return uint64_t(f->times_x(uint32_t(e))); });
  return Status::Ok();
}

Status check_raid6(const CodeSpec &s) {
  const std::string fam = family_name(s.family);
  if (s.m != 2) return bad(fam + " is a RAID-6 code: m = 2; m = " + num(s.m));
  if (s.k > s.w) return bad(fam + " needs k <= w; k = " + num(s.k) + ", w = " + num(s.w));
  return Status::Ok();
}

Status check_liberation(const CodeSpec &s) {
  if (!is_prime(s.w) || s.w < 3) return bad("liberation needs w prime (> 2); w = " + num(s.w));
  return check_raid6(s);
}

// Liberation codes (Plank, FAST-08): data device j's Q block is the identity shifted by j
// columns (row r XORs packet (r + j) mod w), plus for j > 0 one extra bit in row
// i = j (w-1)/2 mod w, at packet (i + j - 1) mod w.
Status build_liberation(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  const unsigned w = s.w;
  std::vector<std::vector<uint32_t>> q(s.k, std::vector<uint32_t>(w, 0));
  for (unsigned j = 0; j < s.k; ++j) {
    for (unsigned r = 0; r < w; ++r) q[j][r] |= 1u << ((r + j) % w);
    if (j > 0) {
      const unsigned i = (j * ((w - 1) / 2)) % w;
      q[j][i] |= 1u << ((i + j - 1) % w);
    }
  }
  *parity = raid6_bitmatrix(s.k, w, q);
  return Status::Ok();
}

Status check_blaum_roth(const CodeSpec &s) {
  if (!is_prime(s.w + 1) || s.w < 2) return bad("blaum-roth needs w+1 prime; w = " + num(s.w));
  return check_raid6(s);
}

// Blaum-Roth codes over the ring of polynomials modulo 1 + x + ... + x^(p-1), p = w + 1: Q
// block j is multiplication by x^j in that ring (row r, 1-based l = r + 1, XORs packet
// (l + j) mod p - 1 while that is < w; the row where l + j = p takes the "wrap" of the ring:
// packet j - 1 and packet (j even: j/2, odd: p/2 + 1 + j/2) - 1).
Status build_blaum_roth(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  const unsigned w = s.w, p = w + 1;
  std::vector<std::vector<uint32_t>> q(s.k, std::vector<uint32_t>(w, 0));
  for (unsigned j = 0; j < s.k; ++j)
    for (unsigned l = 1; l <= w; ++l) {
      uint32_t &row = q[j][l - 1];
      if (j == 0) {
        row |= 1u << (l - 1);
      } else if (l != p - j) {
        unsigned x = l + j;
        if (x >= p) x -= p;
        row |= 1u << (x - 1);
      } else {
        row |= 1u << (j - 1);
        const unsigned x = j % 2 == 0 ? j / 2 : p / 2 + 1 + j / 2;
        row |= 1u << (x - 1);
      }
    }
  *parity = raid6_bitmatrix(s.k, w, q);
  return Status::Ok();
}

Status check_liber8tion(const CodeSpec &s) {
  if (s.w != 8) return bad("liber8tion is defined for w = 8 only; w = " + num(s.w));
  return check_raid6(s);
}

// Liber8tion (Plank, NCA-07): the Q blocks found by search, not by formula. Data device j's
// block, row r = the packets it XORs as a bit mask (a permutation matrix, plus one extra bit
// for j > 0); as printed by libJerasure's liber8tion_coding_bitmatrix (liber8tion_test).
const uint8_t kLiber8tion[8][8] = {
    {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80},
    {0x80, 0x08, 0x01, 0x04, 0xc0, 0x02, 0x20, 0x10},
    {0x40, 0x0c, 0x10, 0x01, 0x80, 0x08, 0x02, 0x20},
    {0x04, 0x20, 0x80, 0x40, 0x01, 0x18, 0x10, 0x02},
    {0x20, 0x40, 0x03, 0x80, 0x04, 0x10, 0x08, 0x01},
    {0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x05},
    {0x08, 0x01, 0x40, 0x20, 0x02, 0x80, 0x30, 0x04},
    {0x10, 0x80, 0x02, 0x22, 0x08, 0x04, 0x01, 0x40},
};

Status build_liber8tion(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *) {
  std::vector<std::vector<uint32_t>> q(s.k, std::vector<uint32_t>(8, 0));
  for (unsigned j = 0; j < s.k; ++j)
    for (unsigned r = 0; r < 8; ++r) q[j][r] = kLiber8tion[j][r];
  *parity = raid6_bitmatrix(s.k, 8, q);
  return Status::Ok();
}

// Any symbol family's matrix over GF(2^w), w = 8 | 16 | 32, expanded as Jerasure's
// jerasure_matrix_to_bitmatrix does.
CodeSpec inner_spec(const CodeSpec &s) {
  CodeSpec in;
  in.family = s.of;
  in.k = s.k;
  in.m = s.m;
  in.gf = s.w;
  in.poly = s.poly;
  in.matrix = s.matrix;
  return in;
}

Status check_bitmatrix_of(const CodeSpec &s) {
  if (bit_family(s.of) != nullptr) return bad("bitmatrix-of needs a symbol family in of=");
  if (s.w != 8 && s.w != 16 && s.w != 32)
    return bad("bitmatrix-of expands codes over GF(2^8), GF(2^16) or GF(2^32): w = 8, 16 or 32; w = " + num(s.w));
  Result<CodeSpec> in = CodeSpec::parse(inner_spec(s).to_string());
  return in.ok() ? Status::Ok() : bad("bitmatrix-of: " + in.status().message());
}

Status build_bitmatrix_of(const CodeSpec &s, BitMatrix *parity, std::vector<uint64_t> *symbols) {
  Result<LinearCode> code = build_code(inner_spec(s));
  if (!code.ok()) return code.status();
  *symbols = code->parity.a;
  *parity = expand_symbols(*symbols, s.m, s.k, s.w, [&](uint64_t e) { return code->field.mul(e, 2); });
  return Status::Ok();
}

unsigned eight(CodeFamily, unsigned) { return 8; }

}  // namespace

bool is_prime(unsigned p) {
  if (p < 2) return false;
  for (unsigned d = 2; d * d <= p; ++d)
    if (p % d == 0) return false;
  return true;
}

std::vector<uint64_t> cauchy_original_matrix(const WordField &f, unsigned k, unsigned m) {
  std::vector<uint64_t> a(size_t(k) * m);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) a[size_t(i) * k + j] = f.div(1, i ^ (m + j));
  return a;
}

std::vector<uint64_t> cauchy_good_matrix(const WordField &f, unsigned k, unsigned m) {
  // Debian's libJerasure 2 has its RAID-6 table for w <= 11 (k <= 2^w - 1, 1023 for w = 11);
  // for wider words it normalises the original matrix as for m > 2.
  const uint64_t table_k = f.w() <= 10 ? (uint64_t(1) << f.w()) - 1 : 1023;
  if (m == 2 && f.w() <= 11 && k <= table_k) {
    // The k elements of fewest bit-matrix ones, ties to the smaller: a bounded selection
    // over all 2^w - 1 nonzero elements (at most 2047).
    std::vector<std::pair<unsigned, uint32_t>> best;
    for (uint64_t e = 1; e <= f.mask(); ++e) {
      best.push_back({f.bitmatrix_ones(uint32_t(e)), uint32_t(e)});
      if (best.size() > 4 * size_t(k) + 64) {
        std::nth_element(best.begin(), best.begin() + k, best.end());
        best.resize(k);
      }
    }
    std::sort(best.begin(), best.end());
    std::vector<uint64_t> a(2 * size_t(k), 1);
    for (unsigned j = 0; j < k; ++j) a[k + j] = best[j].second;
    return a;
  }
  std::vector<uint64_t> a = cauchy_original_matrix(f, k, m);
  normalize_matrix(f, k, m, &a);
  return a;
}

void normalize_matrix(const WordField &f, unsigned k, unsigned m, std::vector<uint64_t> *matrix) {
  std::vector<uint64_t> &a = *matrix;
  for (unsigned j = 0; j < k; ++j) {
    if (a[j] == 1) continue;
    const uint32_t t = f.inv(uint32_t(a[j]));
    for (unsigned i = 0; i < m; ++i) a[size_t(i) * k + j] = f.mul(uint32_t(a[size_t(i) * k + j]), t);
  }
  for (unsigned i = 1; i < m; ++i) {
    uint64_t *row = &a[size_t(i) * k];
    size_t best = 0;
    for (unsigned j = 0; j < k; ++j) best += f.bitmatrix_ones(uint32_t(row[j]));
    int best_j = -1;
    for (unsigned j = 0; j < k; ++j) {
      if (row[j] == 1) continue;
      const uint32_t t = f.inv(uint32_t(row[j]));
      size_t ones = 0;
      for (unsigned x = 0; x < k; ++x) ones += f.bitmatrix_ones(f.mul(uint32_t(row[x]), t));
      if (ones < best) {
        best = ones;
        best_j = int(j);
      }
    }
    if (best_j >= 0) {
      const uint32_t t = f.inv(uint32_t(row[best_j]));
      for (unsigned j = 0; j < k; ++j) row[j] = f.mul(uint32_t(row[j]), t);
    }
  }
}

// k = the most data shards the family takes for its word value.
unsigned full_width(CodeFamily family, unsigned word) {
  switch (family) {
    case CodeFamily::kRdp:
      return word - 1;  // word: p
    case CodeFamily::kLiber8tion:
      return 8;
    default:
      return word;  // EVENODD, STAR: p; Liberation, Blaum-Roth: w
  }
}

const std::vector<BitFamily> &bit_families() {
  // Never destroyed: a Jit's background thread may still plan codes while exit handlers run
  // (a Jit held in a static is destroyed after statics made later, such as this one).
  static const std::vector<BitFamily> *const rows = new std::vector<BitFamily>{
      {CodeFamily::kCauchyOrig, "cauchy-orig", check_cauchy, build_cauchy, "w", eight, 0},
      {CodeFamily::kCauchyGood, "cauchy-good", check_cauchy, build_cauchy, "w", eight, 0},
      {CodeFamily::kLiberation, "liberation", check_liberation, build_liberation, "w", nullptr, 2, full_width},
      {CodeFamily::kBlaumRoth, "blaum-roth", check_blaum_roth, build_blaum_roth, "w", nullptr, 2, full_width},
      {CodeFamily::kLiber8tion, "liber8tion", check_liber8tion, build_liber8tion, "w", eight, 2, full_width},
      {CodeFamily::kBitmatrixOf, "bitmatrix-of", check_bitmatrix_of, build_bitmatrix_of, "w", eight, 0},
      {CodeFamily::kCauchyOpt, "cauchy-opt", check_cauchy, build_cauchy_opt, "w", eight, 0},
      {CodeFamily::kEvenodd, "evenodd", check_evenodd, build_evenodd, "p", default_prime, 2, full_width},
      {CodeFamily::kRdp, "rdp", check_rdp, build_rdp, "p", default_prime, 2, full_width},
      {CodeFamily::kStar, "star", check_star, build_star, "p", default_prime, 3, full_width},
  };
  return *rows;
}

const BitFamily *bit_family(CodeFamily f) {
  for (const BitFamily &row : bit_families())
    if (row.family == f) return &row;
  return nullptr;
}

CodeSpec resolved_spec(const CodeSpec &spec) {
  CodeSpec r = spec;
  if (spec.family != CodeFamily::kCauchyOpt || !spec.points.empty()) return r;
  Result<WordField> f = WordField::make(spec.w);
  if (!f.ok()) return r;
  const std::vector<uint32_t> pts = searched_points(*f, spec.k, spec.m, spec.seed);
  r.points.assign(pts.begin(), pts.end());
  r.seed = 0;
  return r;
}

}  // namespace ecjit::codes
