// OpKey: a specialised kernel's identity inside one codec (operation and shard sets), hashable without allocating.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ecjit/shard_set.h"

namespace ecjit::runtime {

// A specialised kernel's identity inside one codec: the operation and up to two shard sets
// (decode: present set and rebuilt set; update: changed set; partial: the data index).
// Fixed size, so a cache lookup does not allocate.
struct OpKey {
  enum Op : uint8_t { kDecode, kUpdate, kPartial } op = kDecode;
  std::array<uint64_t, ShardSet::kWords> a{}, b{};
  bool operator==(const OpKey &o) const { return op == o.op && a == o.a && b == o.b; }
};
struct OpKeyHash {
  size_t operator()(const OpKey &k) const;
};

}  // namespace ecjit::runtime
