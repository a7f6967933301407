// Helpers shared by the CodecImpl sources.
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

Status shard_size_error(size_t len, unsigned sb) {
  return Status(StatusCode::kShardSize, "len = " + std::to_string(len) +
                                            " is not a multiple of the symbol size " +
                                            std::to_string(sb) + " bytes");
}

Status check_distinct_outputs(const char *what, const PointerGroup &out,
                              std::initializer_list<PointerGroup> in) {
  for (size_t o = 0; o < out.count; ++o) {
    const uint8_t *p = out.ptrs[o];
    for (size_t q = o + 1; q < out.count; ++q)
      if (out.ptrs[q] == p)
        return Status(StatusCode::kInvalidArgument,
                      std::string(what) + ": " + out.name + "s " + std::to_string(o) + " and " +
                          std::to_string(q) + " are the same buffer (each output needs its own)");
    for (const PointerGroup &g : in)
      for (size_t i = 0; i < g.count; ++i)
        if (g.ptrs[i] == p)
          return Status(StatusCode::kInvalidArgument,
                        std::string(what) + ": " + out.name + " " + std::to_string(o) +
                            " is the same buffer as " + g.name + " " + std::to_string(i) +
                            " (outputs must not alias inputs)");
  }
  return Status::Ok();
}

std::string join_indices(const std::vector<unsigned> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "_" : "") + std::to_string(v[i]);
  return s;
}

}  // namespace ecjit::runtime
