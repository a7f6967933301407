// Helpers shared by the CodecImpl sources: the shard-length error and kernel-name pieces.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ecjit/status.h"

namespace ecjit::runtime {

// Up to this many shards the pointer arrays for a decode live on the stack.
constexpr size_t kStackShards = 512;

// kShardSize: `len` is not a multiple of the symbol size `sb` (bytes).
Status shard_size_error(size_t len, unsigned sb);

// "3_5_7": the indices joined by '_', for a kernel name.
std::string join_indices(const std::vector<unsigned> &v);

}  // namespace ecjit::runtime
