// fold_decode_ends: a decode's first multiplies folded into the IFFT steps that read them, its last into the FFT steps that write them.
#pragma once

#include <cstdint>
#include <vector>

#include "fft/step.h"

namespace ecjit::sched {

// A decode on FftEngine's pointer layout: work slots [0, n), the shard read at point x at
// n + x (null where x is read nowhere), the shard restored at x at 2n + x (null where x is
// restored nowhere), and ptr[pre_tables] / ptr[post_tables] two arrays of one multiplier
// table per point. Its three step lists run one after another:
//   - pre fills slot x with kFftStepMul {x, n + x, table x} (ptr[pre_tables]'s table x) where
//     ptr[n + x] is not null and kFftStepZero {x} where it is;
//   - core (the transforms, maybe pruned: a Zero step it holds at a slot no core step has
//     touched yet is a point read nowhere as well);
//   - post restores x with kFftStepMul {2n + x, x, table x of ptr[post_tables]} (written in
//     post's own table field as n + x: the arrays are one, pre's then post's) exactly where
//     ptr[2n + x] is not null.
// Each IFFT step of core (kFftStepIfft4 / Ifft8, in place) that is the first to touch its
// slots, each filled by pre (or that Zero), becomes its In kind reading the shards itself;
// each FFT step (kFftStepFft4 / Fft8, in place) after which its slots are read by nothing but
// post's multiplies becomes its Out kind writing the restored shards itself. The steps folded
// leave pre, core (a Zero) and post; the rest stay in order. The lists then compute the same
// restored shards for any such pointers - also lists built for every point (pre all Mul,
// post every x): the folded steps take each point's null or not per call, so one folded core
// serves every erasure set, with the steps left in pre and post made per set for their points.
// Saves per folded slot a scratch tile's store and load and a step of its own (a 1024:1024
// decode: 2048 multiply or zero steps and ~1000 restoring ones, a third of its steps).
void fold_decode_ends(std::vector<FftStep> *pre, std::vector<FftStep> *core, std::vector<FftStep> *post,
                      uint32_t n, uint32_t pre_tables, uint32_t post_tables);

}  // namespace ecjit::sched
