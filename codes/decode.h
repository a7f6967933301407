// Decode plans: which k shards to read and the matrix that rebuilds the missing ones.
#pragma once

#include <vector>

#include "codes/linear_code.h"
#include "codes/matrix.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Rebuilding `targets` from `sources`: shard targets[r] = sum_c coeffs(r, c) * shard sources[c].
// Optionally also a two-stage schedule of the same map with fewer constant multiplies
// (codes/decode_schedule.h): intermediates t = pre * sources, then
// targets = post * [sources; t]. When pre is not empty, compose_stages(field, pre, post) ==
// coeffs; the sources read are the same either way.
struct DecodePlan {
  std::vector<unsigned> sources;  // k shard indices that are read, ascending
  std::vector<unsigned> targets;  // shard indices rebuilt, ascending
  Matrix coeffs;                  // targets.size() x k: the direct map (always set)
  Matrix pre;                     // t x k, or empty (0 x 0): no two-stage schedule
  Matrix post;                    // targets.size() x (k + t); empty when pre is

  bool factored() const { return pre.rows != 0; }
};

// Plans the rebuild of `wanted` from the shards in `present` (present[s] for s < n).
// Sources are the first k present shards in index order, so data shards are preferred
// and a missing parity shard is re-encoded from data where the data is complete. pre/post
// are set when the two-stage schedule has strictly fewer products (schedule_decode).
// Errors: kShardCount (present has the wrong size), kInvalidArgument (a wanted index out
// of range or duplicated), kTooManyErasures (fewer than k shards present), kSingular (the
// chosen k shards do not determine the data: the code is not MDS for this set).
// `lowering`: the cost model of the lowering that will run the plan (schedule_decode);
// kNoSearch (the default) when the caller runs the direct map or names no lowering.
// `schedule` false: the direct map only (no two-stage schedule is looked for; pre and post
// stay empty), for callers that run coeffs as data (shape kernels).
Result<DecodePlan> plan_decode(const LinearCode &code, const std::vector<bool> &present,
                               const std::vector<unsigned> &wanted,
                               CostModel lowering = CostModel::kNoSearch, bool schedule = true);

// Plans the rebuild of every shard not present.
Result<DecodePlan> plan_reconstruct(const LinearCode &code, const std::vector<bool> &present,
                                    CostModel lowering = CostModel::kNoSearch);

}  // namespace ecjit::codes
