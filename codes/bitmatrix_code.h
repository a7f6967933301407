// BitMatrixCode: a systematic XOR code (shards of blocks of w packets), its reference codec and decode plans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codes/bitmatrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Shards 0..k-1 hold data, k..k+m-1 parity, each a whole number of blocks of w packets of
// `packet` bytes (Jerasure's layout: block b of shard s is bytes [b w packet, (b+1) w
// packet), its packet x the x-th `packet` bytes of that). Parity packet (i, l) of a block =
// XOR of the data packets (j, x) of the same block with parity.get(i w + l, j w + x).
struct BitMatrixCode {
  CodeSpec spec;
  unsigned k = 0, m = 0, w = 0, packet = 0;
  BitMatrix parity;               // (m w) x (k w)
  std::vector<uint64_t> symbols;  // the m x k matrix over GF(2^w) it expands, when it has one

  unsigned n() const { return k + m; }
  size_t block_bytes() const { return size_t(w) * packet; }
  // The w bit-rows of shard s in the generator [I; parity] ((k w) columns).
  BitMatrix shard_rows(unsigned s) const;
};

// Builds the code of a bit-matrix spec (CodeSpec::bitmatrix()). Errors: kInvalidSpec (also
// for packet=auto, which a Jit resolves by timing before it builds the code).
Result<BitMatrixCode> build_bitmatrix_code(const CodeSpec &spec);

// A packet of the stripe: shard `shard`, packet `index` (0..w-1) of each block.
struct PacketRef {
  unsigned shard = 0;
  unsigned index = 0;
  bool operator==(const PacketRef &o) const { return shard == o.shard && index == o.index; }
};

// out packets = M * in packets, block by block: M is out.size() x in.size(), `shards`
// points at every shard of the stripe (reads from in's shards, writes out's), len a multiple
// of block_bytes. Bit-serial and direct (a row's set bits XORed in order): the oracle.
void apply_bitmatrix(const BitMatrix &M, const std::vector<PacketRef> &in,
                     const std::vector<PacketRef> &out, unsigned w, unsigned packet,
                     uint8_t *const *shards, size_t len);

// Computes the m parity shards (apply_bitmatrix of the parity bit-matrix). Errors:
// kNullPointer, kShardSize (len not a multiple of the block).
Status ref_bitmatrix_encode(const BitMatrixCode &code, const uint8_t *const *data,
                            uint8_t *const *parity, size_t len);

// How to rebuild `targets` from what is present: the packets read (k w bit-rows of the
// generator that are independent, taken shard by shard in index order - the first k
// present shards of an MDS code) and the (targets w) x (k w) bit-matrix from them to the
// targets' packets (rows: target t's packet x at t_index w + x).
struct BitDecodePlan {
  std::vector<unsigned> targets;
  std::vector<PacketRef> sources;
  std::vector<unsigned> source_shards;  // shards the sources come from, ascending
  BitMatrix map;
  std::vector<PacketRef> target_packets() const;
};
// Errors: kTooManyErasures (fewer than k w independent rows present: more than the code
// can lose), kInvalidArgument (a target that is present or out of range).
Result<BitDecodePlan> plan_bitmatrix_decode(const BitMatrixCode &code, const std::vector<bool> &present,
                                            const std::vector<unsigned> &targets);

// Rebuilds every shard not present, in place, with apply_bitmatrix. Errors: kShardCount,
// kNullPointer, kShardSize, kTooManyErasures.
Status ref_bitmatrix_reconstruct(const BitMatrixCode &code, uint8_t *const *shards,
                                 const std::vector<bool> &present, size_t len);

}  // namespace ecjit::codes
