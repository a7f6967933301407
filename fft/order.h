// order_fft_steps_by_block: an rs-fft schedule reordered so that its block-local steps run block by block.
#pragma once

#include <cstdint>
#include <vector>

#include "fft/step.h"

namespace ecjit::sched {

// The work slots a step writes or reads (pointers below `slots`; pointers at or above
// `slots` are shards, read only or - a folded FFT step's restored shards - each written by one
// step, and never conflict): at most sixteen (a three-layer step
// XORing into eight more), held in place - the schedule passes ask for every step's on an
// erasure set's first call. A derivative-fused step (kFftStepFft4D / Fft8D) lists its own
// slots only: the other groups it reads (fft_derivative_groups) are up to 112 slots more, and
// the passes here move no step past it (its block is kFftBlockNone).
struct FftWorkSlots {
  uint32_t n = 0;
  uint32_t x[16];
  const uint32_t *begin() const { return x; }
  const uint32_t *end() const { return x + n; }
  bool empty() const { return n == 0; }
};
FftWorkSlots fft_step_work_slots(const FftStep &step, uint32_t slots);

// Reorders `steps` (one schedule on `slots` work slots) for locality: work slot p is in block
// p / block_slots; a step is local when its work slots are all in one block. Each maximal run
// of local steps is stably sorted by block, so the lower layers of a transform run one block
// at a time (a block's tiles can stay in L2) instead of one layer at a time over every slot.
// Steps of different blocks touch disjoint work slots and the shards are only read, so they
// commute: every slot sees its steps in the original order and the result is unchanged.
// Steps with work slots in several blocks stay where they are and end a run. block_slots 0
// or >= slots leaves the order as it is. O(steps log steps).
void order_fft_steps_by_block(std::vector<FftStep> *steps, uint32_t slots, uint32_t block_slots);

// A piece of a decode run from three step lists (0 pre, 1 core, 2 post): steps [begin, end)
// of list `list`.
struct FftSegment {
  uint32_t list, begin, end;
};

// The order of a decode's ends. `pre` (the steps filling the work slots from the shards) and
// `post` (those finishing the restored slots) are stably sorted by block in place, and the
// segments returned run pre's steps of a block just before core's first run of block-local
// steps of that block, and post's steps of a block just after core's last run's steps of it:
// a block's tiles are filled, transformed and finished while in L2 instead of a pass over
// every slot before and after the transforms (1024:1024: 4 MiB of tiles out to L3 and back).
// Valid as order_fft_steps_by_block is: local steps of different blocks touch disjoint work
// slots. `core` must be ordered by order_fft_steps_by_block with the same block_slots.
// Returns {pre, core, post} whole (empty lists left out) where a pre or post step spans
// blocks, core's first or last run is not in block order, or block_slots is 0 or >= slots.
// core_blocks: fft_step_blocks(core, slots, block_slots) when the caller keeps it (a code's
// whole decode core is the same for every erasure set: 16384:16384's 97k steps take ~1 ms to
// classify); null: computed here.
std::vector<FftSegment> order_fft_ends_by_block(std::vector<FftStep> *pre, const std::vector<FftStep> &core,
                                                std::vector<FftStep> *post, uint32_t slots, uint32_t block_slots,
                                                const std::vector<uint32_t> *core_blocks = nullptr);

// Each step's block (its work slots / block_slots), kFftBlockSpans where its slots span blocks,
// kFftBlockNone where it has no work slot or is derivative-fused (nothing moves past it).
constexpr uint32_t kFftBlockSpans = UINT32_MAX, kFftBlockNone = UINT32_MAX - 1;
std::vector<uint32_t> fft_step_blocks(const std::vector<FftStep> &steps, uint32_t slots, uint32_t block_slots);

}  // namespace ecjit::sched
