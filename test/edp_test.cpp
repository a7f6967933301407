// Array codes at element level (RDP, EVENODD, X-Code, Balanced P-Code), the data placements of
// Shen et al. 2016 and the degraded-read planner: fault tolerance by GF(2) elimination, the element
// encoder against the bit-matrix codes, the paper's worked examples, placement invariants.
// The planner against brute force: edp_planner_test (slow under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/edp.h"
#include "ecjit/code_spec.h"

using namespace ecjit;
using namespace ecjit::codes;

namespace {

ArrayLayout layout(const std::string &family, unsigned p) {
  auto L = array_layout(family, p);
  EXPECT_TRUE(L.ok()) << family << " p=" << p << ": " << L.status().to_string();
  return *L;
}

TEST(ArrayLayout, ShapesOfShen2016TableI) {
  for (unsigned p : {5u, 7u, 11u, 13u}) {
    const ArrayLayout rdp = layout("rdp", p), x = layout("xcode", p), bp = layout("bpcode", p);
    EXPECT_EQ(rdp.disks, p + 1);
    EXPECT_EQ(rdp.data_cells().size(), size_t(p - 1) * (p - 1));  // k = p - 1 disks of p - 1 rows
    EXPECT_EQ(x.disks, p);
    EXPECT_EQ(x.data_cells().size(), size_t(p - 2) * p);  // k = p - 2
    EXPECT_EQ(bp.disks, p - 1);
    EXPECT_EQ(bp.data_cells().size(), size_t(p - 3) * (p - 1) / 2);  // k = p - 3
    // Parity spread: X-Code and BP-Code put parity on every disk, RDP on two.
    for (const ArrayLayout *L : {&x, &bp}) {
      std::vector<unsigned> per_disk(L->disks, 0);
      for (unsigned c = 0; c < L->cells(); ++c) per_disk[L->disk_of(c)] += L->is_parity(c);
      for (unsigned d = 0; d < L->disks; ++d) EXPECT_EQ(per_disk[d], L->family == "xcode" ? 2u : 1u) << L->family;
    }
  }
}

TEST(ArrayLayout, EveryDoubleFailureDecodesNoTripleDoes) {
  for (const char *f : {"rdp", "evenodd", "xcode", "bpcode"})
    for (unsigned p : {5u, 7u, 11u, 13u}) {
      const ArrayLayout L = layout(f, p);
      std::vector<unsigned> bad;
      EXPECT_TRUE(tolerates(L, 2, &bad)) << f << " p=" << p << " fails disks " << (bad.empty() ? -1 : int(bad[0]))
                                         << "," << (bad.size() > 1 ? int(bad[1]) : -1);
      EXPECT_FALSE(tolerates(L, 3)) << f << " p=" << p;
    }
  // Balanced: every BP-Code chain has two data elements in each data row.
  for (unsigned p : {7u, 11u, 13u}) {
    const ArrayLayout L = layout("bpcode", p);
    for (const auto &ch : L.chains)
      for (unsigned r = 1; r < L.rows; ++r)
        EXPECT_EQ(std::count_if(ch.members.begin(), ch.members.end(), [&](unsigned c) { return L.row_of(c) == r; }), 2)
            << "p=" << p << " row " << r;
  }
}

// The element encoder of RDP and EVENODD equals the bit-matrix codes' reference encoder.
TEST(ArrayLayout, ElementEncoderMatchesTheBitMatrixCodes) {
  for (const char *f : {"rdp", "evenodd"})
    for (unsigned p : {5u, 7u, 11u}) {
      const ArrayLayout L = layout(f, p);
      const unsigned k = std::string(f) == "rdp" ? p - 1 : p, rows = p - 1, packet = 8;
      auto code = build_bitmatrix_code(*CodeSpec::parse(std::string(f) + ":k=" + std::to_string(k) + ",p=" +
                                                        std::to_string(p) + ",packet=8"));
      ASSERT_TRUE(code.ok());
      const size_t len = size_t(rows) * packet;
      std::vector<std::vector<uint8_t>> shards(L.disks, std::vector<uint8_t>(len));
      std::mt19937_64 rng(p);
      for (unsigned d = 0; d < k; ++d)
        for (auto &b : shards[d]) b = uint8_t(rng());
      std::vector<uint8_t *> ptrs;
      for (auto &s : shards) ptrs.push_back(s.data());
      ASSERT_TRUE(ref_bitmatrix_encode(*code, ptrs.data(), ptrs.data() + k, len).ok());
      std::vector<std::vector<uint8_t>> cells(L.cells(), std::vector<uint8_t>(packet, 0));
      std::vector<uint8_t *> cp;
      for (unsigned c = 0; c < L.cells(); ++c) {
        if (!L.is_parity(c)) std::copy_n(shards[L.disk_of(c)].data() + L.row_of(c) * packet, packet, cells[c].data());
        cp.push_back(cells[c].data());
      }
      encode_layout(L, cp.data(), packet);
      for (unsigned c = 0; c < L.cells(); ++c)
        ASSERT_TRUE(std::equal(cells[c].begin(), cells[c].end(), shards[L.disk_of(c)].begin() + L.row_of(c) * packet))
            << f << " p=" << p << " cell (" << L.row_of(c) << "," << L.disk_of(c) << ")";
    }
}

TEST(ArrayLayout, RulesAreNamed) {
  for (auto [f, p, says] : {std::tuple<const char *, unsigned, const char *>{"xcode", 9, "p prime"},
                            {"xcode", 3, "5 <= p"}, {"rdp", 4, "p prime"}, {"nope", 5, "known: rdp"}}) {
    auto L = array_layout(f, p);
    ASSERT_FALSE(L.ok()) << f;
    EXPECT_NE(L.status().message().find(says), std::string::npos) << L.status().message();
  }
}

void expect_bijection(const ArrayLayout &L, const DataPlacement &P, const std::string &what) {
  const std::vector<unsigned> data = L.data_cells();
  ASSERT_EQ(P.cell_of.size(), data.size()) << what;
  std::set<unsigned> seen(P.cell_of.begin(), P.cell_of.end());
  EXPECT_EQ(seen, std::set<unsigned>(data.begin(), data.end())) << what;
  for (unsigned c = 0; c < L.cells(); ++c) {
    if (L.is_parity(c)) EXPECT_EQ(P.logical_of_cell[c], -1) << what << " parity cell moved";
    else EXPECT_EQ(P.cell_of[unsigned(P.logical_of_cell[c])], c) << what;
  }
}

TEST(Placement, BijectionsParityUnmoved) {
  for (const char *f : {"rdp", "evenodd", "xcode", "bpcode"})
    for (unsigned p : {5u, 7u, 11u})
      for (Placement pl : {Placement::kHorizontal, Placement::kVertical, Placement::kEdp}) {
        const ArrayLayout L = layout(f, p);
        expect_bijection(L, place(L, pl), std::string(f) + " p=" + std::to_string(p) + " " + placement_name(pl));
      }
  const ArrayLayout L = layout("rdp", 5);
  const DataPlacement h = place(L, Placement::kHorizontal), v = place(L, Placement::kVertical);
  EXPECT_EQ(h.cell_of[1], L.cell(0, 1));  // across the disks
  EXPECT_EQ(v.cell_of[1], L.cell(1, 0));  // down disk 0
}

// Shen et al. 2016, sec. IV-A's worked example on X-Code p = 5: Algorithm 1 takes R_1 (chain 0, cells
// C13 C24 C35) then R_7 (chain 6, C33 C24 C15: one overlapped element); Algorithm 2 swaps #2
// and #3 so that both chains hold sequential elements.
TEST(Placement, EdpReproducesShen2016Example) {
  const ArrayLayout L = layout("xcode", 5);
  EXPECT_EQ(L.chains[0].members, (std::vector<unsigned>{L.cell(0, 2), L.cell(1, 3), L.cell(2, 4)}));
  EXPECT_EQ(L.chains[6].members, (std::vector<unsigned>{L.cell(0, 4), L.cell(1, 3), L.cell(2, 2)}));
  DataPlacement P = edp_greedy(L);
  ASSERT_GE(P.order.size(), 2u);
  EXPECT_EQ(P.order[0], 0u);
  EXPECT_EQ(P.order[1], 6u);
  EXPECT_EQ(P.cell_of[0], L.cell(0, 2));
  EXPECT_EQ(P.cell_of[1], L.cell(1, 3));  // the overlapped element, before refinement
  edp_refine(L, &P);
  expect_bijection(L, P, "xcode p=5 edp");
  auto logicals = [&](unsigned chain) {
    std::set<int> s;
    for (unsigned c : L.chains[chain].members) s.insert(P.logical_of_cell[c]);
    return s;
  };
  EXPECT_EQ(logicals(0), (std::set<int>{0, 1, 2}));
  EXPECT_EQ(logicals(6), (std::set<int>{2, 3, 4}));  // #3 (0-based 2) is now the shared one
  EXPECT_EQ(P.cell_of[2], L.cell(1, 3));
}

// Shen et al. 2016's motivating reads with disk 1 (0-based 0) failed, horizontal placement: RDP
// reads {#1, #2, #3} with two extra elements (#4 and R_1), X-Code with three.
TEST(DegradedRead, Shen2016Examples) {
  const ArrayLayout rdp = layout("rdp", 5), x = layout("xcode", 5);
  auto r = plan_degraded_read(rdp, place(rdp, Placement::kHorizontal), 0, 0, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->extra(), 2u);
  EXPECT_EQ(r->cells, (std::vector<unsigned>{rdp.cell(0, 1), rdp.cell(0, 2), rdp.cell(0, 3), rdp.cell(0, 4)}));
  auto xr = plan_degraded_read(x, place(x, Placement::kHorizontal), 0, 0, 3);
  ASSERT_TRUE(xr.ok());
  EXPECT_EQ(xr->extra(), 3u);
  EXPECT_EQ(plan_degraded_read(x, place(x, Placement::kHorizontal), 5, 0, 3).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(plan_degraded_read(x, place(x, Placement::kHorizontal), 0, 14, 2).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
