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

// Entry evaluations one basis search may spend, t^2 (k + targets)^2 per round (each two or
// three field multiplies); a round that would exceed it is not started. RS(10,4) losing 4:
// 3,136 per round, it stops on its own after about 5; RS(20,8) losing 8: 50,176, 5 rounds
// (about 10 ms); RS(48,16) losing 16: 1.05M, wide decodes keep the basis they have.
constexpr uint64_t kBasisSearchBudget = 250000;

// Greedy change of basis of the intermediates under a lowering's cost model (set bits up to
// its cap; products for cap 1; see schedule_decode):
// t' = E t for an elementary E, pre' = E pre, post' = post E^-1, so compose_stages(pre, post)
// is unchanged. Moves: t_a += lambda t_b (pre row a += lambda pre row b, post column b +=
// lambda post column a) and t_a *= lambda (pre row a *= lambda, post column a *= 1 / lambda).
// Each candidate lambda turns one entry the move changes (its anchor) into 0 or 1 (anchors
// X^i as well found nothing more on (10,4) codes at 16 times the work). A round takes the
// move that saves the most cost (set bits up to the model's cap) without adding a product
// (ties: more products saved).
class BasisSearch {
 public:
  BasisSearch(const Field &f, CostModel model, unsigned k, Matrix &pre, Matrix &post)
      : f_(f), model_(model), k_(k), t_(pre.rows), rows_(post.rows), pre_(pre), post_(post) {}

  void run(uint64_t budget) {
    const uint64_t width = k_ + rows_;  // entries one move changes, at most
    const uint64_t round = uint64_t(t_) * t_ * width * width;
    inv_pre_ = Matrix(t_, k_);
    inv_post_ = Matrix(rows_, t_);
    for (unsigned j = 0; j < t_; ++j) {
      invert_pre_row(j);
      invert_post_column(j);
    }
    for (uint64_t spent = round; spent <= budget; spent += round) {
      best_ = Move();
      for (unsigned a = 0; a < t_; ++a) {
        for (unsigned b = 0; b < t_; ++b)
          if (a != b) try_adds(a, b);
        try_scales(a);
      }
      if (best_.bits <= 0) return;
      apply(best_);
    }
  }

 private:
  struct Move {
    int64_t bits = 0;      // cost saved (set bits, capped)
    int64_t products = 0;  // products saved (never negative)
    bool scale = false;
    unsigned a = 0, b = 0;
    uint64_t lambda = 0;   // t_a += lambda t_b, or t_a *= lambda
  };

  int64_t bits(uint64_t v) const { return int64_t(constant_cost(v, model_)); }
  static int64_t product(uint64_t v) { return v > 1; }

  // inv_pre_(j, c) = 1 / pre(j, c), inv_post_(r, j) = 1 / post(r, k + j) (0 for 0): an
  // inverse costs 2l multiplies and every move anchored at the entry needs it; a move
  // changes one pre row and one post column, apply() refreshes just those.
  void invert_pre_row(unsigned j) {
    for (unsigned c = 0; c < k_; ++c) inv_pre_.at(j, c) = f_.inv(pre_.at(j, c));
  }
  void invert_post_column(unsigned j) {
    for (unsigned r = 0; r < rows_; ++r) inv_post_.at(r, j) = f_.inv(post_.at(r, k_ + j));
  }

  // A candidate: the entries it changes, old -> new; kept when it beats the best so far.
  void offer(const std::vector<uint64_t> &old, const std::vector<uint64_t> &now, bool scale,
             unsigned a, unsigned b, uint64_t lambda) {
    int64_t saved_bits = 0, saved_products = 0;
    for (size_t e = 0; e < old.size(); ++e) {
      saved_bits += bits(old[e]) - bits(now[e]);
      saved_products += product(old[e]) - product(now[e]);
    }
    if (saved_products < 0 || saved_bits < best_.bits ||
        (saved_bits == best_.bits && saved_products <= best_.products))
      return;
    best_ = Move{saved_bits, saved_products, scale, a, b, lambda};
  }

  // t_a += lambda t_b: the entries of pre row a and post column b change by lambda times
  // those of pre row b and post column a. lambda = (x ^ s) / y for an anchor y (an entry
  // added) landing on x, s = 0 or 1.
  void try_adds(unsigned a, unsigned b) {
    old_.clear();
    add_.clear();
    inv_.clear();
    for (unsigned c = 0; c < k_; ++c) {
      old_.push_back(pre_.at(a, c));
      add_.push_back(pre_.at(b, c));
      inv_.push_back(inv_pre_.at(b, c));
    }
    for (unsigned r = 0; r < rows_; ++r) {
      old_.push_back(post_.at(r, k_ + b));
      add_.push_back(post_.at(r, k_ + a));
      inv_.push_back(inv_post_.at(r, a));
    }
    const size_t n = old_.size();
    zero_.resize(n);
    one_.resize(n);
    for (size_t anchor = 0; anchor < n; ++anchor) {
      if (!add_[anchor]) continue;
      const uint64_t iy = inv_[anchor];
      const uint64_t lambda0 = f_.mul(old_[anchor], iy);
      for (size_t e = 0; e < n; ++e) {
        zero_[e] = old_[e] ^ f_.mul(lambda0, add_[e]);
        one_[e] = zero_[e] ^ f_.mul(iy, add_[e]);
      }
      if (lambda0) offer(old_, zero_, false, a, b, lambda0);
      offer(old_, one_, false, a, b, lambda0 ^ iy);
    }
  }

  // t_a *= lambda turning an anchor x (of pre row a or post column a) into 1: its side is
  // multiplied by 1 / x, the other side by x.
  void try_scales(unsigned a) {
    old_.clear();
    inv_.clear();
    for (unsigned c = 0; c < k_; ++c) {
      old_.push_back(pre_.at(a, c));
      inv_.push_back(inv_pre_.at(a, c));
    }
    for (unsigned r = 0; r < rows_; ++r) {
      old_.push_back(post_.at(r, k_ + a));
      inv_.push_back(inv_post_.at(r, a));
    }
    const size_t n = old_.size();
    one_.resize(n);
    for (size_t anchor = 0; anchor < n; ++anchor) {
      const uint64_t x = old_[anchor];
      if (x <= 1) continue;
      const bool in_pre = anchor < k_;
      for (size_t e = 0; e < n; ++e)
        one_[e] = f_.mul(old_[e], ((e < k_) == in_pre) ? inv_[anchor] : x);
      offer(old_, one_, true, a, 0, in_pre ? inv_[anchor] : x);  // lambda: pre's factor
    }
  }

  void apply(const Move &m) {
    const unsigned column = m.scale ? m.a : m.b;  // the post column that changes
    if (m.scale) {
      const uint64_t inv = f_.inv(m.lambda);
      for (unsigned c = 0; c < k_; ++c) pre_.at(m.a, c) = f_.mul(m.lambda, pre_.at(m.a, c));
      for (unsigned r = 0; r < rows_; ++r) post_.at(r, k_ + m.a) = f_.mul(inv, post_.at(r, k_ + m.a));
    } else {
      for (unsigned c = 0; c < k_; ++c) pre_.at(m.a, c) ^= f_.mul(m.lambda, pre_.at(m.b, c));
      for (unsigned r = 0; r < rows_; ++r) post_.at(r, k_ + m.b) ^= f_.mul(m.lambda, post_.at(r, k_ + m.a));
    }
    invert_pre_row(m.a);
    invert_post_column(column);
  }

  const Field &f_;
  const CostModel model_;
  const unsigned k_, t_, rows_;
  Matrix &pre_, &post_;
  Matrix inv_pre_, inv_post_;
  std::vector<uint64_t> old_, add_, inv_, zero_, one_;  // one candidate's entries
  Move best_;
};

// The planning pass that judges a schedule by a lowering's own cost: set bits for those that
// pay per set bit (clmul-shift, clmul-mixed: cap > 1), products for the others.
CostModel judging_pass(CostModel lowering) {
  return lowering.cap > 1 ? CostModel::kSetBits : CostModel::kProducts;
}

// The two-stage schedule cheapest under `model` (see schedule_decode; `lowering`: the plan's
// lowering); false when it is not strictly cheaper than the direct map under that model.
bool cheapest_schedule(const LinearCode &code, const DecodePlan &plan, CostModel model,
                       CostModel lowering, Matrix *pre_out, Matrix *post_out) {
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
  for (unsigned r = 0; r < T; ++r) {
    uint64_t direct_cost = 0, staged_cost = 0;
    for (unsigned c = 0; c < k; ++c) direct_cost += cost(direct.at(r, c));
    for (unsigned c = 0; c < k + e; ++c) staged_cost += cost(post.at(r, c));
    if (staged_cost < direct_cost) {
      for (unsigned j = 0; j < e; ++j) used[j] = used[j] || post.at(r, k + j) != 0;
    } else {
      for (unsigned c = 0; c < k + e; ++c) post.at(r, c) = c < k ? direct.at(r, c) : 0;
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
  // A cheaper basis under the lowering's own cost, in the pass that judges by it. It never
  // adds a product.
  if (lowering.cap > 0 && model == judging_pass(lowering))  // kNoSearch (cap 0): none
    BasisSearch(code.field, lowering, k, pre_kept, post_kept).run(kBasisSearchBudget);
  if (product_cost(pre_kept, model) + product_cost(post_kept, model) >= product_cost(direct, model))
    return false;
  *pre_out = std::move(pre_kept);
  *post_out = std::move(post_kept);
  return true;
}

}  // namespace

void schedule_decode(const LinearCode &code, DecodePlan *plan, CostModel lowering) {
  plan->pre = Matrix();
  plan->post = Matrix();
  // Cheaper under the shift-and-XOR cost first (the lowering decides at build time whether a
  // two-stage kernel pays for it, ir::build_kernel), else under the product count. A
  // lowering that pays per product judges by products alone: a schedule that only saves set
  // bits ties for it, and the builder would emit the direct map anyway.
  Matrix pre, post;
  auto cheapest = [&](CostModel model) {
    return cheapest_schedule(code, *plan, model, lowering, &pre, &post);
  };
  const bool found = lowering == CostModel::kProducts
                         ? cheapest(CostModel::kProducts)
                         : cheapest(CostModel::kSetBits) || cheapest(CostModel::kProducts);
  if (!found) return;
  plan->pre = std::move(pre);
  plan->post = std::move(post);
  assert(compose_stages(code.field, plan->pre, plan->post) == plan->coeffs);
}

size_t decode_products(const DecodePlan &plan) {
  return plan.factored() ? count_products(plan.pre) + count_products(plan.post)
                         : count_products(plan.coeffs);
}

}  // namespace ecjit::codes
