// Helpers shared by the CodecImpl sources.
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

Status shard_size_error(size_t len, unsigned sb) {
  return Status(StatusCode::kShardSize, "len = " + std::to_string(len) +
                                            " is not a multiple of the symbol size " +
                                            std::to_string(sb) + " bytes");
}

std::string join_indices(const std::vector<unsigned> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "_" : "") + std::to_string(v[i]);
  return s;
}

}  // namespace ecjit::runtime
