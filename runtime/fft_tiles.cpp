// rs-fft tile geometry: tile sizes and block sizes from this core's L1d and L2, for FftEngine's schedules and tile loop.
#include "runtime/fft_tiles.h"

#include <unistd.h>

#include <algorithm>

namespace ecjit::runtime {

// Half of this core's L2 (sysconf; 512 KiB where it does not say).
size_t l2_budget() {
  static const size_t b = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? size_t(l2) / 2 : size_t(512) << 10;
  }();
  return b;
}

// Tile bytes for `slots` work slots: the largest tiles of at least 2 KiB whose slots fit in
// half of L2, so every step of a tile runs on L2 (Zen 5, 1 MiB L2: 128:128 at 64 KiB shards
// 1.31-1.34 -> 1.40-1.42x reed-solomon-simd's encode with 2 KiB tiles, three alternating runs
// each; its decode unchanged); where even 2 KiB tiles do not fit, 4 KiB: the steps then run
// block by block (lower layers) and set by set (upper layers: order_fft_steps_by_block), each
// block or set in L2, so a tile's size trades each step's set-up against nothing but the
// sweeps over all slots (Zen 5, 4 KiB shards: 4096:4096 3.7 -> 4.8 GB/s encode, 16384:16384
// 2.1 -> 2.8 against 1 KiB tiles; 1024:1024 best at 4 KiB as before, 1 KiB lost a quarter).
size_t tile_bytes(size_t slots) {
  size_t t = 16384;
  while (t > 2048 && t * slots > l2_budget()) t /= 2;
  return t * slots <= l2_budget() ? t : 4096;
}

// The distance between two work slots' tiles of the decode core: a tile and one column more.
// Tiles a power of two apart put a column of every slot in one L1 set (12 ways on Zen 5),
// which the derivative-fused steps' reads of other groups overflow (Zen 5, losing m at
// random, GB/s: 32:32 64 KiB shards 6.8 -> 8.4, 128:128 4 KiB 4.7 -> 5.8, 1024:1024 4 KiB
// 2.8 -> 3.5; two or nine columns more gained less).
size_t core_slot_stride(size_t tile) { return tile + 64; }

// The largest power of two b >= 4 (a two-layer step's span) with b tiles of `tile` bytes
// within `budget`; 4 where not even that fits.
static uint32_t slots_within(size_t tile, size_t budget) {
  uint32_t b = 4;
  while (size_t(b) * 2 * tile <= budget) b *= 2;
  return b;
}

// Work slots whose tiles (of `tile` bytes) fit in half of L2, for
// sched::order_fft_steps_by_block; 0 when the tiles of all slots fit anyway.
uint32_t l2_block_slots(uint32_t slots, size_t tile) {
  return size_t(slots) * tile <= l2_budget() ? 0 : slots_within(tile, l2_budget());
}

// Three quarters of this core's L1d (sysconf; 32 KiB where it does not say).
size_t l1_budget() {
  static const size_t b = [] {
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return (l1 > 0 ? size_t(l1) : size_t(32) << 10) / 4 * 3;
  }();
  return b;
}

// Blocks of a decode core whose slots' tiles fit in L2 anyway: work slots whose tiles (`stride`
// bytes apart) fit in three quarters of L1d (a power of two, at least 4), 0 where that is not
// fewer than `slots`. The core's lower passes then run block by block, each block's slots
// filled from the shards just before them and finished just after (order_fft_ends_by_block):
// the shards' multiplies write tiles the next steps read from L1, not from L2. Emerald Rapids
// (48 KiB L1d: 32 slots of 1 KiB tiles), m lost at random, two Jits' decodes interleaved in
// one process: 64:64 at 64 KiB shards +6-9%, 128:128 at 4 KiB +6-8%, at 64 KiB +4-8%, 100:28
// +2-3%, 256:256 at 16 KiB +0-2%, GF(2^8) 64:64 / 128:128 +15-20%; 32:32 unchanged; blocks of
// 16 slots gained about half of that, 64 (past L1) nothing. Cores past L2 keep their L2 blocks
// (1024:1024 with L1 blocks nested inside them: +0-2%, not kept).
uint32_t l1_block_slots(uint32_t slots, size_t stride) {
  if (4 * stride > l1_budget()) return 0;
  const uint32_t b = slots_within(stride, l1_budget());
  return b < slots ? b : 0;
}

}  // namespace ecjit::runtime
