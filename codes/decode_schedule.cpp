// Two-stage decode schedules: encoder-coefficient intermediates, then a small e x e inverse.
#include "codes/decode_schedule.h"

#include <cassert>
#include <utility>
#include <vector>

#include "codes/matrix.h"

namespace ecjit::codes {

bool two_stage_form(const LinearCode &code, const DecodePlan &plan, Matrix *pre, Matrix *post) {
  const Field &f = code.field;
  const unsigned k = code.k;
  const std::vector<unsigned> &src = plan.sources;
  if (src.size() != k) return false;
  // Positions (columns of coeffs) of the data and the parity shards read, and the data
  // shards not read.
  std::vector<unsigned> data_at, parity_at, lost;
  std::vector<bool> read(k, false);
  for (unsigned c = 0; c < k; ++c) {
    if (src[c] < k) {
      data_at.push_back(c);
      read[src[c]] = true;
    } else {
      parity_at.push_back(c);
    }
  }
  for (unsigned d = 0; d < k; ++d)
    if (!read[d]) lost.push_back(d);
  const unsigned e = unsigned(parity_at.size());
  if (e == 0 || lost.size() != e) return false;

  // P(R, L) is invertible whenever the sources are: their generator rows are
  // [I 0; P(R, D) P(R, L)] up to the order of rows and columns.
  Matrix PRL(e, e);
  for (unsigned j = 0; j < e; ++j)
    for (unsigned i = 0; i < e; ++i) PRL.at(j, i) = code.parity.at(src[parity_at[j]] - k, lost[i]);
  Result<Matrix> Q = invert(f, PRL);
  if (!Q.ok()) return false;

  *pre = Matrix(e, k);
  for (unsigned j = 0; j < e; ++j) {
    pre->at(j, parity_at[j]) = 1;
    for (unsigned c : data_at) pre->at(j, c) = code.parity.at(src[parity_at[j]] - k, src[c]);
  }
  const unsigned T = unsigned(plan.targets.size());
  *post = Matrix(T, k + e);
  for (unsigned r = 0; r < T; ++r) {
    const std::vector<uint64_t> g = code.generator_row(plan.targets[r]);
    for (unsigned c : data_at) post->at(r, c) = g[src[c]];
    for (unsigned j = 0; j < e; ++j) {
      uint64_t s = 0;
      for (unsigned i = 0; i < e; ++i) s ^= f.mul(g[lost[i]], Q->at(i, j));
      post->at(r, k + j) = s;
    }
  }
  return true;
}

namespace {

// The two-stage schedule cheapest under `model` (see schedule_decode); false when it is not
// strictly cheaper than the direct map under that model.
bool cheapest_schedule(const LinearCode &code, const DecodePlan &plan, CostModel model,
                       Matrix *pre_out, Matrix *post_out) {
  const unsigned k = code.k;
  const Matrix &direct = plan.coeffs;
  Matrix pre, post;
  if (direct.rows != plan.targets.size() || direct.cols != k ||
      !two_stage_form(code, plan, &pre, &post))
    return false;
  const unsigned e = pre.rows, T = post.rows;
  auto cost = [model](uint64_t a) { return constant_cost(a, model); };

  // Target by target, the cheaper of the two-stage and the direct row (ties: direct).
  std::vector<bool> used(e, false);
  uint64_t total = 0;
  for (unsigned r = 0; r < T; ++r) {
    uint64_t direct_cost = 0, staged_cost = 0;
    for (unsigned c = 0; c < k; ++c) direct_cost += cost(direct.at(r, c));
    for (unsigned c = 0; c < k + e; ++c) staged_cost += cost(post.at(r, c));
    if (staged_cost < direct_cost) {
      for (unsigned j = 0; j < e; ++j) used[j] = used[j] || post.at(r, k + j) != 0;
      total += staged_cost;
    } else {
      for (unsigned c = 0; c < k + e; ++c) post.at(r, c) = c < k ? direct.at(r, c) : 0;
      total += direct_cost;
    }
  }

  // Only the intermediates some row uses; post's columns compacted to match.
  std::vector<unsigned> keep;
  for (unsigned j = 0; j < e; ++j)
    if (used[j]) keep.push_back(j);
  if (keep.empty()) return false;
  const unsigned t = unsigned(keep.size());
  Matrix pre_kept(t, k), post_kept(T, k + t);
  for (unsigned i = 0; i < t; ++i)
    for (unsigned c = 0; c < k; ++c) pre_kept.at(i, c) = pre.at(keep[i], c);
  for (unsigned r = 0; r < T; ++r) {
    for (unsigned c = 0; c < k; ++c) post_kept.at(r, c) = post.at(r, c);
    for (unsigned i = 0; i < t; ++i) post_kept.at(r, k + i) = post.at(r, k + keep[i]);
  }
  total += product_cost(pre_kept, model);
  if (total >= product_cost(direct, model)) return false;
  *pre_out = std::move(pre_kept);
  *post_out = std::move(post_kept);
  return true;
}

}  // namespace

void schedule_decode(const LinearCode &code, DecodePlan *plan) {
  plan->pre = Matrix();
  plan->post = Matrix();
  // Cheaper under the shift-and-XOR cost first (the lowering decides at build time whether a
  // two-stage kernel pays for it, ir::build_kernel), else under the product count.
  Matrix pre, post;
  if (!cheapest_schedule(code, *plan, CostModel::kSetBits, &pre, &post) &&
      !cheapest_schedule(code, *plan, CostModel::kProducts, &pre, &post))
    return;
  plan->pre = std::move(pre);
  plan->post = std::move(post);
  assert(compose_stages(code.field, plan->pre, plan->post) == plan->coeffs);
}

size_t decode_products(const DecodePlan &plan) {
  return plan.factored() ? count_products(plan.pre) + count_products(plan.post)
                         : count_products(plan.coeffs);
}

}  // namespace ecjit::codes
