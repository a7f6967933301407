// OpKey: shard-set words up to the last used one, inline or on the heap; FNV-1a over them.
#include "runtime/op_key.h"

#include <algorithm>
#include <cstring>

namespace ecjit::runtime {

OpKey::OpKey(Op op, const ShardSet &a, const ShardSet &b) : op_(op) {
  const unsigned end = std::max(a.end_index(), b.end_index());
  words_ = (end + 63) / 64;
  uint64_t *w = inline_.data();
  if (words_ > kInlineWords) {
    heap_.assign(2 * size_t(words_), 0);
    w = heap_.data();
  }
  std::copy_n(a.words().begin(), words_, w);
  std::copy_n(b.words().begin(), words_, w + words_);
}

bool OpKey::operator==(const OpKey &o) const {
  return op_ == o.op_ && words_ == o.words_ &&
         std::memcmp(words(), o.words(), 2 * size_t(words_) * sizeof(uint64_t)) == 0;
}

size_t OpKey::hash() const {
  uint64_t h = (1469598103934665603ULL ^ op_) * 1099511628211ULL;
  const uint64_t *w = words();
  for (size_t i = 0; i < 2 * size_t(words_); ++i) h = (h ^ w[i]) * 1099511628211ULL;
  return size_t(h ^ (h >> 29));
}

}  // namespace ecjit::runtime
