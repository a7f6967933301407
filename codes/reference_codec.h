// The scalar reference codec: the oracle every generated kernel is tested against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "codes/matrix.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Symbols are l/8 bytes, little-endian, packed back to back in each shard.
uint64_t load_symbol(const uint8_t *p, unsigned bytes);
void store_symbol(uint8_t *p, unsigned bytes, uint64_t v);

// out[r] = sum_c M(r, c) * in[c] for every symbol position; len bytes per shard, a
// multiple of the symbol size. Outputs must not alias inputs. Plain Field::mul per symbol.
void apply_matrix(const Field &f, const Matrix &M, const uint8_t *const *in,
                  uint8_t *const *out, size_t len);

// Computes the m parity shards from the k data shards. Errors: kNullPointer, kShardSize.
Status ref_encode(const LinearCode &code, const uint8_t *const *data, uint8_t *const *parity,
                  size_t len);

// shards: n pointers; present[s] says whether shard s holds valid data. Rebuilds every
// shard that is not present, in place. Errors: kShardCount, kNullPointer, kShardSize,
// kTooManyErasures, kSingular.
Status ref_reconstruct(const LinearCode &code, uint8_t *const *shards,
                       const std::vector<bool> &present, size_t len);

}  // namespace ecjit::codes
