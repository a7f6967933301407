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

void schedule_decode(const LinearCode &code, DecodePlan *plan) {
  plan->pre = Matrix();
  plan->post = Matrix();
  const unsigned k = code.k;
  const Matrix &direct = plan->coeffs;
  Matrix pre, post;
  if (direct.rows != plan->targets.size() || direct.cols != k ||
      !two_stage_form(code, *plan, &pre, &post))
    return;
  const unsigned e = pre.rows, T = post.rows;

  // Target by target, the cheaper of the two-stage and the direct row (ties: direct).
  std::vector<bool> used(e, false);
  size_t cost = 0;
  for (unsigned r = 0; r < T; ++r) {
    size_t direct_cost = 0, staged_cost = 0;
    for (unsigned c = 0; c < k; ++c) direct_cost += direct.at(r, c) > 1;
    for (unsigned c = 0; c < k + e; ++c) staged_cost += post.at(r, c) > 1;
    if (staged_cost < direct_cost) {
      for (unsigned j = 0; j < e; ++j) used[j] = used[j] || post.at(r, k + j) != 0;
      cost += staged_cost;
    } else {
      for (unsigned c = 0; c < k + e; ++c) post.at(r, c) = c < k ? direct.at(r, c) : 0;
      cost += direct_cost;
    }
  }

  // Only the intermediates some row uses; post's columns compacted to match.
  std::vector<unsigned> keep;
  for (unsigned j = 0; j < e; ++j)
    if (used[j]) keep.push_back(j);
  if (keep.empty()) return;
  const unsigned t = unsigned(keep.size());
  Matrix pre_kept(t, k), post_kept(T, k + t);
  for (unsigned i = 0; i < t; ++i)
    for (unsigned c = 0; c < k; ++c) pre_kept.at(i, c) = pre.at(keep[i], c);
  for (unsigned r = 0; r < T; ++r) {
    for (unsigned c = 0; c < k; ++c) post_kept.at(r, c) = post.at(r, c);
    for (unsigned i = 0; i < t; ++i) post_kept.at(r, k + i) = post.at(r, k + keep[i]);
  }
  cost += count_products(pre_kept);
  if (cost >= count_products(direct)) return;
  plan->pre = std::move(pre_kept);
  plan->post = std::move(post_kept);
  assert(compose_stages(code.field, plan->pre, plan->post) == plan->coeffs);
}

size_t decode_products(const DecodePlan &plan) {
  return plan.factored() ? count_products(plan.pre) + count_products(plan.post)
                         : count_products(plan.coeffs);
}

}  // namespace ecjit::codes
