// OpKeyHash: FNV-1a over the operation and both shard-set words.
#include "runtime/op_key.h"

namespace ecjit::runtime {

size_t OpKeyHash::operator()(const OpKey &k) const {
  uint64_t h = 1469598103934665603ULL ^ k.op;
  for (uint64_t w : k.a) h = (h ^ w) * 1099511628211ULL;
  for (uint64_t w : k.b) h = (h ^ w) * 1099511628211ULL;
  return size_t(h);
}

}  // namespace ecjit::runtime
