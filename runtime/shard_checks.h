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

// The pointers of one aliasing check in an open-addressing table (the calling thread's, kept
// between checks; a new PointerSet empties it): add(p, output) says whether p was added before
// and this or that one is an output. At most `count` adds per set.
class PointerSet {
 public:
  explicit PointerSet(size_t count);
  bool add(const uint8_t *p, bool output);

 private:
  size_t mask_;
};

// A rebuild's buffers: shards[t] is written for each t with written(t), shards[s] read for
// each s with present[s] (n entries; no shard both). kInvalidArgument where a written buffer
// is a read one ("<what>: rebuilt shard t is the same buffer as present shard s (outputs must
// not alias inputs)") or another written one ("rebuilt shards a and b are the same buffer
// (each output needs its own)", a < b); read ones may repeat. Pairwise up to 64 pairs, past
// that a PointerSet first (O(n): a wide code's reconstruct) and the pairwise scan only to name
// the pair.
template <class Written>
Status check_rebuilt_buffers(const char *what, uint8_t *const *shards, unsigned n, const std::vector<bool> &present,
                             const Written &written) {
  size_t outs = 0, ins = 0;
  for (unsigned s = 0; s < n; ++s) {
    if (written(s)) ++outs;
    else if (present[s]) ++ins;
  }
  if (outs * (outs + ins) > 64) {
    PointerSet set(outs + ins);
    bool collide = false;
    for (unsigned s = 0; s < n && !collide; ++s)
      if (present[s] || written(s)) collide = set.add(shards[s], written(s));
    if (!collide) return Status::Ok();
  }
  for (unsigned t = 0; t < n; ++t) {
    if (!written(t)) continue;
    for (unsigned s = 0; s < n; ++s)
      if (shards[s] == shards[t] && s != t && (present[s] || (s > t && written(s))))
        return Status(StatusCode::kInvalidArgument,
                      std::string(what) + ": " +
                          (present[s] ? "rebuilt shard " + std::to_string(t) + " is the same buffer as present shard " +
                                            std::to_string(s) + " (outputs must not alias inputs)"
                                      : "rebuilt shards " + std::to_string(t) + " and " + std::to_string(s) +
                                            " are the same buffer (each output needs its own)"));
  }
  return Status::Ok();
}

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
