// AotShapeSet: tables of the build-time shape kernels per x86 level, and the choice for this CPU.
#include "runtime/aot_shapes/aot_shape_set.h"

#include "runtime/aot_shapes/host_levels.h"

#ifdef ECJIT_AOT_SHAPES
// Written at build time by `ecjit-aot aot --op shape` (runtime/aot_shapes/CMakeLists.txt).
#include "aot_shapes_avx2.h"
#include "aot_shapes_gfni.h"
#include "aot_shapes_sse.h"
#endif

namespace ecjit::aot {
namespace {

#ifdef ECJIT_AOT_SHAPES
template <typename Shape, size_t N>
AotShapeSet make_set(const char *target, ir::Strategy strategy, const Shape (&shapes)[N]) {
  AotShapeSet set;
  set.target = target;
  set.strategy = strategy;
  for (const Shape &s : shapes)
    for (int w = 0; w < 4; ++w)
      if (unsigned(kAotWidths[w]) == s.inputs && s.outputs >= 1 && s.outputs <= unsigned(kAotRows))
        set.fn[w][s.outputs - 1][s.accumulate ? 1 : 0] = s.fn;
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

const AotShapeSet *host_shape_set(bool split_table_only) {
#ifdef ECJIT_AOT_SHAPES
  static const AotShapeSet gfni = make_set("x86_64-v3+gfni", ir::Strategy::kGfni, ecjit_aot_gfni_shapes);
  static const AotShapeSet avx2 = make_set("x86_64-v3", ir::Strategy::kSplitTable, ecjit_aot_avx2_shapes);
  static const AotShapeSet sse = make_set("x86_64-v2", ir::Strategy::kSplitTable, ecjit_aot_sse_shapes);
  if (!split_table_only && host_runs_x86_64_v3() && host_has_gfni()) return &gfni;
  if (host_runs_x86_64_v3()) return &avx2;
  if (host_runs_x86_64_v2()) return &sse;
#else
  (void)split_table_only;
#endif
  return nullptr;
}

}  // namespace ecjit::aot
