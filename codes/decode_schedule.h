// Two-stage ("syndrome") decode schedules: the same decode map with fewer constant multiplies.
#pragma once

#include <cstddef>

#include "codes/decode.h"
#include "codes/linear_code.h"

namespace ecjit::codes {

// For a systematic code with parity matrix P, a plan reading the present data shards D and
// e >= 1 parity shards R (the lost data shards L, |L| = e) can run in two stages:
//   stage 1, e intermediates:  t_j = p_{R_j} + sum_{d in D} P(R_j, d) x_d
//            (the encoder's coefficients; the parity input has coefficient 1), so t = P(R, L) x_L;
//   stage 2, each target s:     g_s(D) x_D + (g_s(L) inv(P(R, L))) t
//            (g_s the generator row of s: a lost data shard is a row of inv(P(R, L)), a lost
//            parity shard r is P(r, D) x_D + P(r, L) inv(P(R, L)) t).
// two_stage_form writes that form for every target, pre e x k (columns: plan.sources) and
// post targets x (k + e) (columns: the sources, then t_0..t_{e-1}), so that
// compose_stages(code.field, *pre, *post) == plan.coeffs. Returns false (nothing written)
// when the plan reads no parity shard, or its sources are not k shards of which the data
// ones are every data shard but e. `plan`: from plan_decode for `code`.
bool two_stage_form(const LinearCode &code, const DecodePlan &plan, Matrix *pre, Matrix *post);

// Sets plan->pre / plan->post to the cheapest schedule of the two-stage family: each target
// takes the cheaper of its two-stage row and its direct row (coeffs; ties: direct),
// intermediates no row uses are dropped, and the result is kept only when stage 1 plus
// stage 2 is strictly cheaper than coeffs. Cheaper is tried first under CostModel::kSetBits
// (the shift-and-XOR lowering pays per set bit: rs-vand's encoder coefficients are short,
// its decode coefficients random, so its two-stage form is a tie in products but 1.5-4.8x
// faster with clmul-shift), then under kProducts (ones and zeros in P: isal-rs losing data
// 0..3 of RS(10,4) costs 34 products instead of 40). The kernel builder runs the schedule
// only when it is strictly cheaper under its own lowering's model and emits coeffs
// otherwise. Sources, targets and coeffs never change. `plan`: from plan_decode for `code`.
//
// With the cost model of the lowering that will run the plan, the intermediates may be any
// basis of the syndromes, t' = E t: a greedy search over elementary changes of basis (t_a +=
// lambda t_b, t_a *= lambda, each turning one entry into 0 or 1) takes the one saving the most
// of that cost without adding a product, round by round, within a fixed work budget
// (deterministic; about 0.6-1.8 ms for RS(10,4), nothing for wide decodes). A lowering that
// pays per set bit (cap > 1: clmul-shift; clmul-mixed up to its cap) is searched under the
// set-bit pass: rs-vand RS(10,4) losing data 0..3, GF(2^16) 154 -> 117 set bits (the encoder
// has 152), GF(2^32) 212 -> 167, GF(2^64) 374 -> 286. One that pays per product (kProducts:
// GFNI, split tables, clmul-insn) is planned under the product count only, searched there:
// RS(10,4) losing data 0..3, 40 -> 33 products. kNoSearch: both passes, no search.
void schedule_decode(const LinearCode &code, DecodePlan *plan,
                     CostModel lowering = CostModel::kNoSearch);

// Constant multiplies a decoder for `plan` performs: count_products of pre plus post when
// the plan is factored, of coeffs otherwise.
size_t decode_products(const DecodePlan &plan);

}  // namespace ecjit::codes
