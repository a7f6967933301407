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
  auto index = [](const PointerGroup &g, size_t i) {
    return std::to_string(g.indices ? g.indices[i] : unsigned(i));
  };
  for (size_t o = 0; o < out.count; ++o) {
    const uint8_t *p = out.ptrs[o];
    for (size_t q = o + 1; q < out.count; ++q)
      if (out.ptrs[q] == p)
        return Status(StatusCode::kInvalidArgument,
                      std::string(what) + ": " + out.name + "s " + index(out, o) + " and " +
                          index(out, q) + " are the same buffer (each output needs its own)");
    for (const PointerGroup &g : in)
      for (size_t i = 0; i < g.count; ++i)
        if (g.ptrs[i] == p)
          return Status(StatusCode::kInvalidArgument,
                        std::string(what) + ": " + out.name + " " + index(out, o) +
                            " is the same buffer as " + g.name + " " + index(g, i) +
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
