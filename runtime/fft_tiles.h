// rs-fft tile geometry from this core's caches: the tiles FftEngine runs a schedule on and the blocks its steps are ordered by.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ecjit::runtime {

// The decode core's tiles: 1 KiB whatever the core's size. Its upper passes (the IFFT's last,
// the FFT's first with the derivative's reads of other groups up to n / 8 slots away) sweep
// every slot, and the shards stream in and out beside its scratch: small tiles keep both in
// L2. Zen 5 (1 MiB L2, 32 MiB L3), m lost at random against 2 KiB tiles: 4096:4096 at 4 KiB
// shards 1.5 -> 2.1 GB/s, 1024:1024 even; 16384:16384 as fast as with 4 KiB. Emerald Rapids
// (2 MiB L2), against the 4 KiB tiles cores whose slots fit half of L2 had (two Jits' decodes
// interleaved in one process): 128:128 at 64 KiB shards +12%, at 4 KiB +10%, 64:64 +13%,
// 100:28 +9%, 256:256 at 16 KiB +5%, GF(2^8) 64:64 / 128:128 +15% / +13%; 512-byte tiles
// gained less (128:128 at 4 KiB +3%), and encode tiles changed nothing either way.
constexpr size_t kCoreTileBytes = 1024;

// Half of this core's L2 (sysconf; 512 KiB where it does not say).
size_t l2_budget();
// Three quarters of this core's L1d (sysconf; 32 KiB where it does not say).
size_t l1_budget();
// Tile bytes for an encode's `slots` work slots: the largest tiles of at least 2 KiB whose
// slots fit in half of L2, else 4 KiB (fft_tiles.cpp has the measurements).
size_t tile_bytes(size_t slots);
// The distance between two work slots' tiles of the decode core: a tile and one column more.
size_t core_slot_stride(size_t tile);
// Work slots whose tiles (of `tile` bytes) fit in half of L2, for
// sched::order_fft_steps_by_block; 0 when the tiles of all slots fit anyway.
uint32_t l2_block_slots(uint32_t slots, size_t tile);
// Work slots of a decode core whose tiles (`stride` bytes apart) fit in three quarters of L1d
// (a power of two, at least 4), 0 where that is not fewer than `slots`.
uint32_t l1_block_slots(uint32_t slots, size_t stride);

}  // namespace ecjit::runtime
