// Schedule builders over a bit-matrix: dumb, smart, common-pair matching.
#include "codes/xor_schedule.h"

#include <algorithm>
#include <utility>

namespace ecjit::codes {
namespace {

// Values (inputs + temporaries) up to which common-pair matching keeps merging pairs.
constexpr size_t kMaxMatchingValues = 4096;
// Set bits of a matrix up to which best_schedule tries matching (RS(32,8) w=8: 6,884).
constexpr size_t kMaxMatchingOnes = 8192;

// Appends the chain v0 ^ v1 ^ ... to p and returns its value (kZero when empty).
uint32_t chain(XorProgram &p, const std::vector<uint32_t> &vals, uint32_t start = XorProgram::kZero) {
  uint32_t acc = start;
  for (uint32_t v : vals) {
    if (acc == XorProgram::kZero) {
      acc = v;
      continue;
    }
    p.ops.push_back({acc, v});
    acc = uint32_t(p.values() - 1);
  }
  return acc;
}

std::vector<uint32_t> set_bits(const BitMatrix &M, unsigned r) {
  std::vector<uint32_t> v;
  for (unsigned c = 0; c < M.cols; ++c)
    if (M.get(r, c)) v.push_back(c);
  return v;
}

XorProgram dumb(const BitMatrix &M) {
  XorProgram p;
  p.inputs = M.cols;
  for (unsigned r = 0; r < M.rows; ++r) p.outputs.push_back(chain(p, set_bits(M, r)));
  return p;
}

// Greedy: repeatedly the cheapest remaining row, where a row costs its ones from scratch or
// 1 + the bits it differs in from a computed row (the copy of that row, then XORs), the
// same measure and tie-breaking (lowest row) as Jerasure's smart schedule.
XorProgram smart(const BitMatrix &M) {
  XorProgram p;
  p.inputs = M.cols;
  p.outputs.assign(M.rows, XorProgram::kZero);
  std::vector<size_t> cost(M.rows);
  std::vector<int> from(M.rows, -1);
  std::vector<bool> done(M.rows, false);
  for (unsigned r = 0; r < M.rows; ++r) cost[r] = M.row_ones(r);
  for (unsigned step = 0; step < M.rows; ++step) {
    unsigned row = M.rows;
    for (unsigned r = 0; r < M.rows; ++r)
      if (!done[r] && (row == M.rows || cost[r] < cost[row])) row = r;
    done[row] = true;
    if (from[row] < 0) {
      p.outputs[row] = chain(p, set_bits(M, row));
    } else {
      std::vector<uint32_t> diff;
      for (unsigned c = 0; c < M.cols; ++c)
        if (M.get(row, c) != M.get(unsigned(from[row]), c)) diff.push_back(c);
      p.outputs[row] = chain(p, diff, p.outputs[unsigned(from[row])]);
    }
    for (unsigned r = 0; r < M.rows; ++r) {
      if (done[r]) continue;
      size_t d = 1;
      for (unsigned w = 0; w < M.words(); ++w)
        d += size_t(__builtin_popcountll(M.row(r)[w] ^ M.row(row)[w]));
      if (d < cost[r]) {
        cost[r] = d;
        from[r] = int(row);
      }
    }
  }
  return p;
}

// Common operations first: while some pair of values occurs together in two or more rows,
// take the pairs of the largest count (the sub-graph of heaviest edges), match them greedily
// (no value in two pairs; weighted: pairs whose ends have the fewest partners in the whole
// pair graph first, so the matching leaves dense values for later rounds), and compute each
// matched pair once as a new value that replaces it in every row holding both. Then each
// row is a chain of what is left. Huang et al. match by maximum cardinality (Edmonds);
// greedy maximal matching here.
XorProgram matching(const BitMatrix &M, bool weighted) {
  XorProgram p;
  p.inputs = M.cols;
  std::vector<std::vector<uint32_t>> rows(M.rows);
  for (unsigned r = 0; r < M.rows; ++r) rows[r] = set_bits(M, r);
  // Pair counts in a dense table indexed a * stride + b (a < b), reset through the list of
  // touched pairs: the ordered map this replaced spent 15 ms on RS(10,4).
  std::vector<uint16_t> count;  // a count is at most the number of rows
  std::vector<uint64_t> touched;
  std::vector<unsigned> degree;
  while (true) {
    const size_t stride = p.values();
    // The table is stride^2 entries: past kMaxMatchingValues (32 MiB of counts) the rows are
    // left as they are and chained (wide codes: plain chains, as dumb).
    if (stride > kMaxMatchingValues || rows.size() > 0xffff) break;
    if (count.size() < stride * stride)  // all zero between rounds
      count.assign(std::min(4 * stride * stride, kMaxMatchingValues * kMaxMatchingValues), 0);
    touched.clear();
    for (const auto &row : rows)
      for (size_t i = 0; i < row.size(); ++i)
        for (size_t j = i + 1; j < row.size(); ++j) {
          const uint64_t key = uint64_t(row[i]) * stride + row[j];
          if (count[key]++ == 0) touched.push_back(key);
        }
    unsigned best = 0;
    for (uint64_t key : touched) best = std::max<unsigned>(best, count[key]);
    if (best < 2) {
      for (uint64_t key : touched) count[key] = 0;
      break;
    }
    std::sort(touched.begin(), touched.end());  // (first, second) order, as the map had
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    degree.assign(stride, 0);
    for (uint64_t key : touched) {
      const uint32_t a = uint32_t(key / stride), b = uint32_t(key % stride);
      ++degree[a];
      ++degree[b];
      if (count[key] == best) edges.push_back({a, b});
      count[key] = 0;
    }
    if (weighted)  // edges are in (first, second) order: ties keep it
      std::sort(edges.begin(), edges.end(), [&](const auto &x, const auto &y) {
        const unsigned dx = degree[x.first] + degree[x.second], dy = degree[y.first] + degree[y.second];
        return dx != dy ? dx < dy : x < y;
      });
    std::vector<bool> used(p.values(), false);
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint32_t>> merged;
    for (const auto &e : edges) {
      if (used[e.first] || used[e.second]) continue;
      used[e.first] = used[e.second] = true;
      p.ops.push_back({e.first, e.second});
      merged.push_back({e, uint32_t(p.values() - 1)});
    }
    for (auto &row : rows) {
      for (const auto &[e, t] : merged) {
        auto a = std::lower_bound(row.begin(), row.end(), e.first);
        auto b = std::lower_bound(row.begin(), row.end(), e.second);
        if (a == row.end() || *a != e.first || b == row.end() || *b != e.second) continue;
        row.erase(b);  // b > a: erase the later one first
        row.erase(std::lower_bound(row.begin(), row.end(), e.first));
        row.insert(std::lower_bound(row.begin(), row.end(), t), t);
      }
    }
  }
  for (const auto &row : rows) p.outputs.push_back(chain(p, row));
  return p;
}

}  // namespace

const char *schedule_name(XorSchedule s) {
  switch (s) {
    case XorSchedule::kDumb: return "dumb";
    case XorSchedule::kSmart: return "smart";
    case XorSchedule::kUniformMatching: return "um";
    case XorSchedule::kWeightedMatching: return "wm";
  }
  return "?";
}

bool parse_schedule(const std::string &name, XorSchedule *out) {
  const std::pair<const char *, XorSchedule> names[] = {
      {"dumb", XorSchedule::kDumb}, {"smart", XorSchedule::kSmart},
      {"um", XorSchedule::kUniformMatching}, {"uniform-matching", XorSchedule::kUniformMatching},
      {"wm", XorSchedule::kWeightedMatching}, {"weighted-matching", XorSchedule::kWeightedMatching}};
  for (const auto &[n, s] : names)
    if (name == n) {
      *out = s;
      return true;
    }
  return false;
}

XorProgram make_schedule(const BitMatrix &M, XorSchedule s) {
  switch (s) {
    case XorSchedule::kDumb: return dumb(M);
    case XorSchedule::kSmart: return smart(M);
    case XorSchedule::kUniformMatching: return matching(M, false);
    case XorSchedule::kWeightedMatching: return matching(M, true);
  }
  return dumb(M);
}

size_t dumb_xors(const BitMatrix &M) {
  size_t n = 0;
  for (unsigned r = 0; r < M.rows; ++r) {
    const size_t ones = M.row_ones(r);
    n += ones ? ones - 1 : 0;
  }
  return n;
}

Result<XorProgram> best_schedule(const BitMatrix &M, XorSchedule *chosen) {
  XorProgram best;
  bool have = false;
  // Matching recounts every pair of every row per round: past kMaxMatchingOnes set bits
  // (wide codes, whose schedules the runtime runs uncompiled anyway) it costs seconds.
  const bool match = M.ones() <= kMaxMatchingOnes;
  for (XorSchedule s : {XorSchedule::kSmart, XorSchedule::kWeightedMatching}) {
    if (s == XorSchedule::kWeightedMatching && !match) continue;
    XorProgram p = make_schedule(M, s);
    ECJIT_RETURN_IF_ERROR(check_program(p, M));
    if (!have || p.xors() < best.xors()) {
      best = std::move(p);
      have = true;
      if (chosen) *chosen = s;
    }
  }
  return best;
}

}  // namespace ecjit::codes
