// OpKey: a specialised kernel's identity inside one codec (operation and shard sets), compact and hashable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ecjit/shard_set.h"

namespace ecjit::runtime {

// A specialised kernel's identity inside one codec: the operation and up to two shard sets
// (decode: present set and rebuilt set; update: changed set; partial: the data index). The
// sets are kept as their words up to the last non-zero one of either: codes of up to 128
// shards fit inline (a lookup allocates nothing, an entry costs ~80 bytes, not the 1 KiB of
// two whole ShardSets that made a codec's first 1,000 erasure sets fault in 3 MiB of heap);
// wider codes keep their words on the heap.
class OpKey {
 public:
  enum Op : uint8_t { kDecode, kUpdate, kPartial, kLocal };

  OpKey(Op op, const ShardSet &a, const ShardSet &b = ShardSet());

  Op op() const { return op_; }
  bool operator==(const OpKey &o) const;
  size_t hash() const;

 private:
  static constexpr unsigned kInlineWords = 2;  // per set: 128 shards

  const uint64_t *words() const { return words_ <= kInlineWords ? inline_.data() : heap_.data(); }

  Op op_;
  uint32_t words_ = 0;  // words kept per set
  std::array<uint64_t, 2 * kInlineWords> inline_{};  // a's words then b's
  std::vector<uint64_t> heap_;                         // the same, past kInlineWords
};

struct OpKeyHash {
  size_t operator()(const OpKey &k) const { return k.hash(); }
};

}  // namespace ecjit::runtime
