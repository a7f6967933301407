// AotShapeSet: tables of the build-time shape kernels per x86 level, and the choice for this CPU.
#include "runtime/aot_shapes/aot_shape_set.h"

#include <algorithm>

#include "runtime/aot_shapes/host_levels.h"

#ifdef ECJIT_AOT_SHAPES
// Written at build time by `ecjit-aot aot --op shape` (runtime/aot_shapes/CMakeLists.txt).
#include "aot_shapes_avx2_16.h"
#include "aot_shapes_avx2_8.h"
#include "aot_shapes_gfni_16.h"
#include "aot_shapes_gfni_8.h"
#include "aot_shapes_sse_16.h"
#include "aot_shapes_sse_8.h"
#endif

namespace ecjit::aot {
namespace {

#ifdef ECJIT_AOT_SHAPES
template <typename Shape, size_t N>
AotShapeSet make_set(const char *target, unsigned bits, ir::Strategy strategy, const Shape (&shapes)[N]) {
  AotShapeSet set;
  set.target = target;
  set.bits = bits;
  set.strategy = strategy;
  for (const Shape &s : shapes)
    for (int w = 0; w < 4; ++w)
      if (unsigned(kAotWidths[w]) == s.inputs && s.outputs >= 1 && s.outputs <= unsigned(kAotRows)) {
        set.fn[w][s.outputs - 1][s.accumulate ? 1 : 0] = s.fn;
        set.rows = std::max(set.rows, s.outputs);
      }
  return set;
}
#endif

}  // namespace

bool aot_shapes_built() {
#ifdef ECJIT_AOT_SHAPES
  return true;
#else
  return false;
#endif
}

const AotShapeSet *host_shape_set(unsigned bits, bool split_table_only) {
#ifdef ECJIT_AOT_SHAPES
  struct Sets {
    AotShapeSet gfni, avx2, sse;
  };
  static const Sets gf8{make_set("x86_64-v3+gfni", 8, ir::Strategy::kGfni, ecjit_aot_gfni_8_shapes),
                        make_set("x86_64-v3", 8, ir::Strategy::kSplitTable, ecjit_aot_avx2_8_shapes),
                        make_set("x86_64-v2", 8, ir::Strategy::kSplitTable, ecjit_aot_sse_8_shapes)};
  static const Sets gf16{make_set("x86_64-v3+gfni", 16, ir::Strategy::kGfni, ecjit_aot_gfni_16_shapes),
                         make_set("x86_64-v3", 16, ir::Strategy::kSplitTable, ecjit_aot_avx2_16_shapes),
                         make_set("x86_64-v2", 16, ir::Strategy::kSplitTable, ecjit_aot_sse_16_shapes)};
  if (bits != 8 && bits != 16) return nullptr;
  const Sets &sets = bits == 8 ? gf8 : gf16;
  if (!split_table_only && host_runs_x86_64_v3() && host_has_gfni()) return &sets.gfni;
  if (host_runs_x86_64_v3()) return &sets.avx2;
  if (host_runs_x86_64_v2()) return &sets.sse;
#else
  (void)bits;
  (void)split_table_only;
#endif
  return nullptr;
}

}  // namespace ecjit::aot
