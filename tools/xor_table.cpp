// xor_table: schedules of Zhou and Tian 2019's (n, k, w) Cauchy matrices, the RAID-6 families and the array codes, counted.
#include "tools/xor_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/xor_families.h"
#include "codes/xor_schedule.h"

namespace ecjit::tools {
namespace {

const codes::XorSchedule kSchedules[] = {codes::XorSchedule::kDumb, codes::XorSchedule::kSmart,
                                         codes::XorSchedule::kUniformMatching,
                                         codes::XorSchedule::kWeightedMatching};

// Zhou and Tian 2019, Table 3, the columns "without optimization" ((X, Y) in the field's sequential
// order): XOR + copy operations per strategy (i, j), rows (0,0) .. (1,3).
struct ZhouTian2019Row {
  unsigned n, k, w;
  int paper[8];  // -1: not printed legibly in the source text
};
const ZhouTian2019Row kZhouTian2019Table3[] = {
    {8, 6, 4, {112, 94, 90, 90, 68, 64, 64, 64}},
    {9, 6, 4, {164, 134, 127, 127, 114, 99, 98, 98}},
    {10, 6, 4, {216, 172, 164, 164, 161, 138, 133, 132}},
    {12, 8, 4, {272, 212, 204, 204, 212, 189, 176, 175}},
    {16, 10, 4, {520, 412, 376, 376, 426, 365, 326, 326}},
    {8, 6, 8, {378, 256, 286, 286, 185, -1, -1, -1}},
    {9, 6, 8, {573, 413, 408, 408, 328, -1, -1, -1}},
    {10, 6, 8, {768, 556, 532, 532, 467, -1, -1, -1}},
    {12, 8, 8, {1060, 805, 726, 726, 686, -1, -1, -1}},
    {16, 10, 8, {1968, 1546, 1304, 1304, 1389, -1, -1, -1}},
};

// The same table's third column (bit-matrices from its genetic algorithm), strategies
// (1,2) and (1,3); -1 where not legible.
const int kZhouTian2019Ga[][2] = {{57, 57}, {87, 87}, {118, 118}, {164, 164}, {316, 316},
                             {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};

codes::BitMatrix cauchy_bits(const codes::WordField &f, unsigned k, unsigned m, bool normalized) {
  std::vector<uint64_t> a = codes::cauchy_original_matrix(f, k, m);
  if (normalized) codes::normalize_matrix(f, k, m, &a);
  return codes::expand_symbols(a, m, k, f.w(), [&](uint64_t e) { return uint64_t(f.times_x(uint32_t(e))); });
}

}  // namespace

int print_xor_table(const std::string &csv_path) {
  FILE *csv = nullptr;
  if (!csv_path.empty() && !(csv = std::fopen(csv_path.c_str(), "w"))) {
    std::fprintf(stderr, "ecjit stats: cannot write %s\n", csv_path.c_str());
    return 1;
  }
  if (csv) std::fprintf(csv, "table,code,n,k,w,strategy,xors,copies,total,paper\n");
  std::printf("Zhou and Tian 2019, Table 3: XOR + copy operations of Cauchy RS bit-matrices, (X, Y) in\n"
              "sequential order (Jerasure's cauchy-orig), per (i, j) strategy: i = 1 bit-matrix\n"
              "normalisation, j = 0 dumb, 1 smart, 2 uniform matching, 3 weighted matching. ecjit = its\n"
              "schedules (xors + copies, counted as the paper counts them: a copy starts each chain in\n"
              "memory); paper = the table's first column (\"-\" where the source text is not legible).\n\n");
  std::printf("%-12s %-6s %8s %8s %8s %8s\n", "(n,k,w)", "(i,j)", "xors", "copies", "ecjit", "paper");
  for (const ZhouTian2019Row &row : kZhouTian2019Table3) {
    Result<codes::WordField> f = codes::WordField::make(row.w);
    if (!f.ok()) return 1;
    const unsigned m = row.n - row.k;
    for (unsigned i = 0; i < 2; ++i) {
      const codes::BitMatrix M = cauchy_bits(*f, row.k, m, i == 1);
      for (unsigned j = 0; j < 4; ++j) {
        const codes::XorProgram p = codes::make_schedule(M, kSchedules[j]);
        if (!codes::check_program(p, M).ok()) return 1;
        const int paper = row.paper[i * 4 + j];
        char name[32], ij[16], paper_text[16];
        std::snprintf(name, sizeof name, "(%u,%u,%u)", row.n, row.k, row.w);
        std::snprintf(ij, sizeof ij, "(%u,%u)", i, j);
        std::snprintf(paper_text, sizeof paper_text, paper < 0 ? "-" : "%d", paper);
        std::printf("%-12s %-6s %8zu %8zu %8zu %8s\n", name, ij, p.xors(), p.copies(), p.xors() + p.copies(),
                    paper_text);
        if (csv)
          std::fprintf(csv, "zhou_tian_2019_table3,cauchy,%u,%u,%u,\"%s\",%zu,%zu,%zu,%s\n", row.n, row.k, row.w, ij, p.xors(),
                       p.copies(), p.xors() + p.copies(), paper < 0 ? "" : paper_text);
      }
    }
  }

  std::printf("\nZhou and Tian 2019, Table 3, third column: bit-matrices from a genetic search of X and Y.\n"
              "ecjit = cauchy-opt (seed 1; its GA minimises 1.5 x XORs + copies of the normalised\n"
              "matrix under uniform matching) with strategies (1,2) and (1,3).\n\n");
  std::printf("%-12s %-6s %8s %8s\n", "(n,k,w)", "(i,j)", "ecjit", "paper");
  for (size_t r = 0; r < sizeof kZhouTian2019Table3 / sizeof kZhouTian2019Table3[0]; ++r) {
    const ZhouTian2019Row &row = kZhouTian2019Table3[r];
    const std::string spec = "cauchy-opt:k=" + std::to_string(row.k) + ",m=" + std::to_string(row.n - row.k) +
                             ",w=" + std::to_string(row.w);
    Result<codes::BitMatrixCode> code = codes::build_bitmatrix_code(*CodeSpec::parse(spec));
    if (!code.ok()) return 1;
    for (unsigned j = 2; j < 4; ++j) {
      const codes::XorProgram p = codes::make_schedule(code->parity, kSchedules[j]);
      if (!codes::check_program(p, code->parity).ok()) return 1;
      const int paper = kZhouTian2019Ga[r][j - 2];
      char name[32], ij[16], paper_text[16];
      std::snprintf(name, sizeof name, "(%u,%u,%u)", row.n, row.k, row.w);
      std::snprintf(ij, sizeof ij, "(1,%u)", j);
      std::snprintf(paper_text, sizeof paper_text, paper < 0 ? "-" : "%d", paper);
      std::printf("%-12s %-6s %8zu %8s\n", name, ij, p.xors() + p.copies(), paper_text);
      if (csv)
        std::fprintf(csv, "zhou_tian_2019_table3_ga,cauchy-opt,%u,%u,%u,\"%s\",%zu,%zu,%zu,%s\n", row.n, row.k, row.w, ij,
                     p.xors(), p.copies(), p.xors() + p.copies(), paper < 0 ? "" : paper_text);
    }
  }

  std::printf("\nPlank et al. 2009: XORs per coding word (schedule XORs / (m w)) of each family;\n"
              "optimum k - 1. paper: minimal-density RAID-6 codes encode with (k-1) + (k-1)/(2w) (its\n"
              "sec. 2.3); Jerasure's CRS [12,4] w=4 performs 17.88 (its sec. 5.2); RDP at k = p - 1:\n"
              "k - 1 (its sec. 2.3). EVENODD / STAR at k = p: the chains' own count,\n"
              "(p - 1) + (p - 2) / (2 (p - 1)) and (p - 1) + 2 (p - 2) / (3 (p - 1)) (row parity,\n"
              "diagonals, one adjuster each).\n\n");
  std::printf("%-44s %8s %8s %8s %8s %8s\n", "code", "dumb", "smart", "um", "wm", "paper");
  const char *const kCodes[] = {"liberation:k=7,w=7",        "liberation:k=11,w=11",
                                "blaum-roth:k=6,w=6",        "blaum-roth:k=10,w=10",
                                "liber8tion:k=8",            "cauchy-good:k=6,m=2,w=8",
                                "cauchy-good:k=12,m=4,w=4",  "cauchy-orig:k=12,m=4,w=4",
                                "cauchy-good:k=10,m=4,w=8",  "cauchy-orig:k=10,m=4,w=8",
                                "evenodd:k=7,p=7",           "evenodd:k=11,p=11",
                                "rdp:k=6,p=7",               "rdp:k=10,p=11",
                                "star:k=7,p=7",              "star:k=11,p=11"};
  for (const char *text : kCodes) {
    Result<codes::BitMatrixCode> code = codes::build_bitmatrix_code(*CodeSpec::parse(text));
    if (!code.ok()) return 1;
    const double words = double(code->m) * code->w;
    double per[4];
    for (unsigned j = 0; j < 4; ++j) {
      const codes::XorProgram p = codes::make_schedule(code->parity, kSchedules[j]);
      if (!codes::check_program(p, code->parity).ok()) return 1;
      per[j] = double(p.xors()) / words;
    }
    const bool raid6 = code->spec.family == CodeFamily::kLiberation || code->spec.family == CodeFamily::kBlaumRoth ||
                       code->spec.family == CodeFamily::kLiber8tion;
    double paper = -1;
    if (raid6) paper = (code->k - 1) + double(code->k - 1) / (2.0 * code->w);
    if (code->spec.family == CodeFamily::kCauchyGood && code->k == 12 && code->m == 4 && code->w == 4) paper = 17.88;
    const double p = code->w + 1.0;
    if (code->spec.family == CodeFamily::kRdp && code->k + 1 == unsigned(p)) paper = code->k - 1;
    if (code->spec.family == CodeFamily::kEvenodd && code->k == unsigned(p)) paper = (p - 1) + (p - 2) / (2 * (p - 1));
    if (code->spec.family == CodeFamily::kStar && code->k == unsigned(p)) paper = (p - 1) + 2 * (p - 2) / (3 * (p - 1));
    char paper_text[16];
    std::snprintf(paper_text, sizeof paper_text, paper < 0 ? "-" : "%.2f", paper);
    const std::string spec = code->spec.to_string();
    std::printf("%-44s %8.2f %8.2f %8.2f %8.2f %8s\n", spec.c_str(), per[0], per[1], per[2], per[3], paper_text);
    if (csv)
      for (unsigned j = 0; j < 4; ++j)
        std::fprintf(csv, "plank_2009_xors_per_word,\"%s\",%u,%u,%u,%s,%.4f,,,%s\n", spec.c_str(), code->n(), code->k,
                     code->w, codes::schedule_name(kSchedules[j]), per[j], paper < 0 ? "" : paper_text);
  }
  std::printf("\nArray codes at element level (codes/array_layout.h, the encoder Jit::array_codec compiles):\n"
              "XORs per parity element of the best schedule (optimum: chain length - 1 = k - 1 for these),\n"
              "and the update cost - parity elements a data element's change rewrites (mean / max; m = 2\n"
              "is optimal; Shen et al. 2016: X-Code and BP-Code reach it, RDP does not; Plank et al. 2009: RDP and EVENODD\n"
              "are about 1.5x worse than the minimal-density codes).\n\n");
  std::printf("%-16s %6s %8s %12s %10s %12s %10s\n", "code", "disks", "k", "xors/parity", "optimum", "update mean",
              "update max");
  for (const char *fam : {"xcode", "bpcode", "rdp", "evenodd"})
    for (unsigned p : {7u, 11u}) {
      Result<codes::ArrayLayout> L = codes::array_layout(fam, p);
      if (!L.ok()) return 1;
      std::vector<bool> parity(L->cells());
      for (unsigned c = 0; c < L->cells(); ++c) parity[c] = L->is_parity(c);
      codes::BitMatrix map;
      std::vector<unsigned> lost, known;
      if (!codes::solve_cells(*L, parity, &map, &lost, &known).ok()) return 1;
      Result<codes::XorProgram> best = codes::best_schedule(map);
      if (!best.ok() || !codes::check_program(*best, map).ok()) return 1;
      double sum = 0;
      unsigned most = 0;
      for (unsigned j = 0; j < map.cols; ++j) {
        unsigned touched = 0;
        for (unsigned r = 0; r < map.rows; ++r) touched += map.get(r, j);
        sum += touched;
        most = std::max(most, touched);
      }
      const double k = double(known.size()) / L->rows;  // data disks' worth of cells
      const double per = double(best->xors()) / map.rows;
      char name[32];
      std::snprintf(name, sizeof name, "%s p=%u", fam, p);
      std::printf("%-16s %6u %8.0f %12.2f %10.2f %12.2f %10u\n", name, L->disks, k, per, k - 1, sum / map.cols, most);
      if (csv)
        std::fprintf(csv, "array_codes,\"%s\",%u,%.0f,%u,best,%.4f,,,%.4f\n", name, L->disks, k, L->rows, per, k - 1);
    }
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace ecjit::tools
