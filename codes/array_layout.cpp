// ArrayLayout: RDP, EVENODD, X-Code and (Balanced) P-Code as cells and parity chains; GF(2)
// checks over cells; the element-level reference encoder.
#include "codes/array_layout.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "codes/xor_families.h"

namespace ecjit::codes {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }

unsigned mod(int x, unsigned p) { return unsigned(((x % int(p)) + int(p)) % int(p)); }

void add_chain(ArrayLayout &L, unsigned parity, std::vector<unsigned> members) {
  std::sort(members.begin(), members.end());
  // A cell named twice cancels (EVENODD's adjuster never meets its diagonal; kept general).
  std::vector<unsigned> odd;
  for (size_t i = 0; i < members.size();) {
    size_t j = i;
    while (j < members.size() && members[j] == members[i]) ++j;
    if ((j - i) % 2) odd.push_back(members[i]);
    i = j;
  }
  L.chain_of_cell[parity] = int(L.chains.size());
  L.chains.push_back({parity, std::move(odd)});
}

ArrayLayout blank(const std::string &family, unsigned p, unsigned rows, unsigned disks) {
  ArrayLayout L;
  L.family = family;
  L.p = p;
  L.rows = rows;
  L.disks = disks;
  L.chain_of_cell.assign(size_t(rows) * disks, -1);
  return L;
}

ArrayLayout rdp(unsigned p) {
  ArrayLayout L = blank("rdp", p, p - 1, p + 1);
  for (unsigned i = 0; i + 1 < p; ++i) {
    std::vector<unsigned> m;
    for (unsigned j = 0; j + 1 < p; ++j) m.push_back(L.cell(i, j));
    add_chain(L, L.cell(i, p - 1), m);
  }
  for (unsigned d = 0; d + 1 < p; ++d) {
    std::vector<unsigned> m;
    for (unsigned j = 0; j < p; ++j)
      if (const unsigned r = mod(int(d) - int(j), p); r != p - 1) m.push_back(L.cell(r, j));
    add_chain(L, L.cell(d, p), m);
  }
  return L;
}

// Row parity on disk `disk` over data disks 0..p-1 (EVENODD and STAR's P).
void row_chains(ArrayLayout &L, unsigned disk) {
  for (unsigned i = 0; i + 1 < L.p; ++i) {
    std::vector<unsigned> m;
    for (unsigned j = 0; j < L.p; ++j) m.push_back(L.cell(i, j));
    add_chain(L, L.cell(i, disk), m);
  }
}

// Diagonals of slope `dir` on disk `disk` over data disks 0..p-1, each with its adjuster
// (the diagonal through the imaginary row p - 1, folded into every chain): dir +1 cell
// (<i - j>, j), EVENODD's and STAR's Q; dir -1 cell (<i + j>, j), STAR's R.
void diagonal_chains(ArrayLayout &L, unsigned disk, int dir) {
  const unsigned p = L.p;
  for (unsigned i = 0; i + 1 < p; ++i) {
    std::vector<unsigned> m;
    for (unsigned j = 0; j < p; ++j) {
      if (const unsigned r = mod(int(i) - dir * int(j), p); r != p - 1) m.push_back(L.cell(r, j));
      if (const unsigned s = mod(int(p) - 1 - dir * int(j), p); s != p - 1) m.push_back(L.cell(s, j));
    }
    add_chain(L, L.cell(i, disk), m);
  }
}

ArrayLayout evenodd(unsigned p) {
  ArrayLayout L = blank("evenodd", p, p - 1, p + 2);
  row_chains(L, p);
  diagonal_chains(L, p + 1, +1);
  return L;
}

ArrayLayout star(unsigned p) {
  ArrayLayout L = blank("star", p, p - 1, p + 3);
  row_chains(L, p);
  diagonal_chains(L, p + 1, +1);
  diagonal_chains(L, p + 2, -1);
  return L;
}

ArrayLayout xcode(unsigned p) {
  ArrayLayout L = blank("xcode", p, p, p);
  for (int dir : {+1, -1})
    for (unsigned i = 0; i < p; ++i) {
      std::vector<unsigned> m;
      for (unsigned r = 0; r + 2 < p; ++r) m.push_back(L.cell(r, mod(int(i) + dir * int(r + 2), p)));
      add_chain(L, L.cell(dir > 0 ? p - 2 : p - 1, i), m);
    }
  return L;
}

// P-Code's data elements {x, y} per column, and a row for each such that every chain has
// two data elements in each data row (backtracking, deterministic).
Result<ArrayLayout> bpcode(unsigned p) {
  const unsigned rows = (p - 1) / 2, data_rows = rows - 1;
  ArrayLayout L = blank("bpcode", p, rows, p - 1);
  struct Pair {
    unsigned x, y, column;
  };
  std::vector<std::vector<Pair>> by_column(p);  // column labels 1..p-1
  for (unsigned x = 1; x < p; ++x)
    for (unsigned y = x + 1; y < p; ++y)
      if ((x + y) % p != 0) by_column[(x + y) % p].push_back({x, y, (x + y) % p});
  std::vector<Pair> pairs;
  for (unsigned c = 1; c < p; ++c) pairs.insert(pairs.end(), by_column[c].begin(), by_column[c].end());
  std::vector<unsigned> row_of(pairs.size(), 0);
  std::vector<std::vector<unsigned>> per_chain(p, std::vector<unsigned>(rows, 0));
  std::vector<std::vector<bool>> taken(p, std::vector<bool>(rows, false));  // column x row
  uint64_t budget = 50000000;
  std::function<bool(size_t)> place = [&](size_t i) -> bool {
    if (i == pairs.size()) return true;
    if (budget-- == 0) return false;
    const Pair &e = pairs[i];
    for (unsigned r = 1; r < rows; ++r) {
      if (taken[e.column][r] || per_chain[e.x][r] >= 2 || per_chain[e.y][r] >= 2) continue;
      taken[e.column][r] = true;
      ++per_chain[e.x][r];
      ++per_chain[e.y][r];
      row_of[i] = r;
      if (place(i + 1)) return true;
      taken[e.column][r] = false;
      --per_chain[e.x][r];
      --per_chain[e.y][r];
    }
    return false;
  };
  if (data_rows > 0 && !place(0))
    return Status(StatusCode::kInvalidSpec, "bpcode: no balanced row order found for p = " + std::to_string(p));
  std::vector<std::vector<unsigned>> members(p);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const unsigned cell = L.cell(row_of[i], pairs[i].column - 1);
    members[pairs[i].x].push_back(cell);
    members[pairs[i].y].push_back(cell);
  }
  for (unsigned x = 1; x < p; ++x) add_chain(L, L.cell(0, x - 1), members[x]);
  return L;
}

// Rows of chain equations as bitsets over cells (the parity cell and its members).
std::vector<std::vector<uint64_t>> equations(const ArrayLayout &L) {
  const size_t words = (L.cells() + 63) / 64;
  std::vector<std::vector<uint64_t>> eq;
  for (const auto &ch : L.chains) {
    std::vector<uint64_t> row(words, 0);
    row[ch.parity / 64] ^= uint64_t(1) << (ch.parity % 64);
    for (unsigned c : ch.members) row[c / 64] ^= uint64_t(1) << (c % 64);
    eq.push_back(std::move(row));
  }
  return eq;
}

bool bit(const std::vector<uint64_t> &row, unsigned c) { return (row[c / 64] >> (c % 64)) & 1; }

// Eliminates the columns `unknown` from eq (each pivot row consumed); returns the rank and
// leaves the rows free of them in eq's tail from index rank on.
size_t eliminate(std::vector<std::vector<uint64_t>> &eq, const std::vector<unsigned> &unknown) {
  size_t rank = 0;
  for (unsigned u : unknown) {
    size_t pivot = rank;
    while (pivot < eq.size() && !bit(eq[pivot], u)) ++pivot;
    if (pivot == eq.size()) continue;
    std::swap(eq[rank], eq[pivot]);
    for (size_t r = 0; r < eq.size(); ++r)
      if (r != rank && bit(eq[r], u))
        for (size_t w = 0; w < eq[r].size(); ++w) eq[r][w] ^= eq[rank][w];
    ++rank;
  }
  return rank;
}

}  // namespace

std::vector<unsigned> ArrayLayout::data_cells() const {
  std::vector<unsigned> d;
  for (unsigned c = 0; c < cells(); ++c)
    if (!is_parity(c)) d.push_back(c);
  return d;
}

std::vector<unsigned> ArrayLayout::encode_order() const {
  std::vector<unsigned> order;
  std::vector<bool> done(chains.size(), false);
  while (order.size() < chains.size())
    for (unsigned i = 0; i < chains.size(); ++i) {
      if (done[i]) continue;
      bool ready = true;
      for (unsigned m : chains[i].members)
        if (chain_of_cell[m] >= 0 && !done[unsigned(chain_of_cell[m])]) ready = false;
      if (ready) {
        done[i] = true;
        order.push_back(i);
      }
    }
  return order;
}

const char *array_layout_families() { return "rdp, evenodd, star, xcode, bpcode"; }

Result<ArrayLayout> array_layout(const std::string &family, unsigned p) { return array_layout(family, p, 61); }

Result<ArrayLayout> array_layout(const std::string &family, unsigned p, unsigned max_p) {
  const bool vertical = family == "xcode" || family == "bpcode";
  if (family != "rdp" && family != "evenodd" && family != "star" && !vertical)
    return bad("unknown array code '" + family + "'; known: " + array_layout_families());
  const unsigned least = vertical ? 5 : 3;
  if (p < least || p > max_p || !is_prime(p))
    return bad(family + " needs p prime, " + std::to_string(least) + " <= p <= " + std::to_string(max_p) +
               "; p = " + std::to_string(p));
  if (family == "rdp") return rdp(p);
  if (family == "evenodd") return evenodd(p);
  if (family == "star") return star(p);
  if (family == "xcode") return xcode(p);
  return bpcode(p);
}

bool tolerates(const ArrayLayout &L, unsigned failures, std::vector<unsigned> *bad_set) {
  const std::vector<std::vector<uint64_t>> eq0 = equations(L);
  std::vector<unsigned> set;
  std::function<bool(unsigned)> each = [&](unsigned from) -> bool {
    if (!set.empty()) {
      std::vector<unsigned> unknown;
      for (unsigned d : set)
        for (unsigned r = 0; r < L.rows; ++r) unknown.push_back(L.cell(r, d));
      std::vector<std::vector<uint64_t>> eq = eq0;
      if (eliminate(eq, unknown) != unknown.size()) {
        if (bad_set) *bad_set = set;
        return false;
      }
    }
    if (set.size() == failures) return true;
    for (unsigned d = from; d < L.disks; ++d) {
      set.push_back(d);
      const bool ok = each(d + 1);
      set.pop_back();
      if (!ok) return false;
    }
    return true;
  };
  return each(0);
}

bool recoverable(const ArrayLayout &L, const std::vector<bool> &known, unsigned target) {
  if (known[target]) return true;
  std::vector<unsigned> unknown;
  for (unsigned c = 0; c < L.cells(); ++c)
    if (!known[c] && c != target) unknown.push_back(c);
  std::vector<std::vector<uint64_t>> eq = equations(L);
  const size_t rank = eliminate(eq, unknown);
  for (size_t r = rank; r < eq.size(); ++r)
    if (bit(eq[r], target)) return true;
  return false;
}

Status solve_cells(const ArrayLayout &L, const std::vector<bool> &unknown, BitMatrix *map,
                   std::vector<unsigned> *lost, std::vector<unsigned> *known) {
  lost->clear();
  known->clear();
  for (unsigned c = 0; c < L.cells(); ++c) (unknown[c] ? lost : known)->push_back(c);
  std::vector<std::vector<uint64_t>> eq = equations(L);
  if (eliminate(eq, *lost) != lost->size())
    return Status(StatusCode::kTooManyErasures,
                  "the chains of " + L.family + " p=" + std::to_string(L.p) + " do not determine the " +
                      std::to_string(lost->size()) + " lost cells");
  // Pivot row i holds lost cell (*lost)[i] alone among the lost cells (fully reduced).
  *map = BitMatrix(unsigned(lost->size()), unsigned(known->size()));
  for (size_t i = 0; i < lost->size(); ++i) {
    const auto row = std::find_if(eq.begin(), eq.begin() + long(lost->size()),
                                  [&](const std::vector<uint64_t> &r) { return bit(r, (*lost)[i]); });
    for (size_t j = 0; j < known->size(); ++j)
      if (bit(*row, (*known)[j])) map->set(unsigned(i), unsigned(j));
  }
  return Status::Ok();
}

std::string ArraySpec::to_string() const {
  return family + ":p=" + std::to_string(p) + ",element=" + std::to_string(element);
}

Result<ArraySpec> parse_array_spec(const std::string &text) {
  const size_t colon = text.find(':');
  ArraySpec s;
  s.family = text.substr(0, colon);
  bool have_p = false;
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    for (size_t at = 0; at <= rest.size();) {
      const size_t comma = std::min(rest.find(',', at), rest.size());
      const std::string item = rest.substr(at, comma - at);
      const size_t eq = item.find('=');
      const std::string key = item.substr(0, eq), val = eq == std::string::npos ? "" : item.substr(eq + 1);
      if (eq == std::string::npos || val.empty() || val.size() > 9 ||
          val.find_first_not_of("0123456789") != std::string::npos)
        return bad("'" + item + "' in '" + text + "' is not key=<decimal number>");
      const unsigned v = unsigned(std::stoul(val));
      if (key == "p") s.p = v, have_p = true;
      else if (key == "element") s.element = v;
      else return bad("unknown key '" + key + "' in '" + text + "'; keys: p, element");
      at = comma + 1;
    }
  }
  if (!have_p) return bad("missing p= in '" + text + "' (an array code: " + std::string(array_layout_families()) + ")");
  if (s.element == 0 || s.element % 8 || s.element > (1u << 20))
    return bad("element=" + std::to_string(s.element) + " must be a multiple of 8 bytes, 8 .. 1048576");
  Result<ArrayLayout> L = array_layout(s.family, s.p);
  if (!L.ok()) return L.status();
  return s;
}

void encode_layout(const ArrayLayout &L, uint8_t *const *cells, size_t bytes) {
  for (unsigned i : L.encode_order()) {
    const ArrayLayout::Chain &ch = L.chains[i];
    uint8_t *out = cells[ch.parity];
    std::memset(out, 0, bytes);
    for (unsigned m : ch.members)
      for (size_t b = 0; b < bytes; ++b) out[b] ^= cells[m][b];
  }
}

void encode_disks(const ArrayLayout &L, uint8_t *const *disks, size_t len, size_t element) {
  std::vector<uint8_t *> cells(L.cells());
  for (size_t at = 0; at + size_t(L.rows) * element <= len; at += size_t(L.rows) * element) {
    for (unsigned c = 0; c < L.cells(); ++c) cells[c] = disks[L.disk_of(c)] + at + L.row_of(c) * element;
    encode_layout(L, cells.data(), element);
  }
}

bool parity_on_data_disks(const std::string &family) { return family == "xcode" || family == "bpcode"; }

}  // namespace ecjit::codes
