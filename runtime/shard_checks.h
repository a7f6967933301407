// Helpers shared by the CodecImpl sources: the shard-length error and kernel-name pieces.
#pragma once

#include <initializer_list>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecjit/code_spec.h"
#include "ecjit/span.h"
#include "ecjit/status.h"

namespace ecjit::runtime {

// Up to this many shards the pointer arrays for a decode live on the stack.
constexpr size_t kStackShards = 512;

// kShardSize: `len` is not a multiple of the symbol size `sb` (bytes).
Status shard_size_error(size_t len, unsigned sb);

// A group of shard pointers for check_distinct_outputs: `name` says what they are in messages
// ("data shard"), numbered from 0.
struct PointerGroup {
  const char *name;
  const uint8_t *const *ptrs;
  size_t count;
};

// kInvalidArgument when an output buffer is the same pointer as another output or as an
// input (outputs are written while the inputs are read: an alias would be silently corrupted,
// or corrupt another output); inputs may repeat. `what` names the operation. Partial overlaps
// of different pointers stay the caller's contract (documented per operation). Compares
// pointers pairwise up to 64 pairs (RS(10,4): 56); past that through a hash set of the
// pointers, O(n), the calling thread's table kept (128 outputs and 256 inputs: ~1 us where
// the pairwise scan took ~10), the pairwise scan only naming a collision.
Status check_distinct_outputs(const char *what, const PointerGroup &out,
                              std::initializer_list<PointerGroup> in);

// The pointer checks of encode (every code): kShardCount (not k data and m parity), kNullPointer
// (an array or a shard), kInvalidArgument (a parity pointer equal to a data or another parity
// pointer). The length is the caller's (its unit differs per kind of code).
Status check_encode_shards(const CodeSpec &spec, Span<const uint8_t *const> data,
                           Span<uint8_t *const> parity);
// The same for encode_partial: kInvalidArgument (data_index >= k, aliasing), kShardCount,
// kNullPointer.
Status check_partial_shards(const CodeSpec &spec, unsigned data_index, const uint8_t *shard,
                            Span<uint8_t *const> parity_acc);

// "3_5_7": the indices joined by '_', for a kernel name.
std::string join_indices(const std::vector<unsigned> &v);

}  // namespace ecjit::runtime
