// AotShapeSet: tables of the build-time shape kernels per x86 level and field, and the choice for this CPU.
#include "runtime/aot_shapes/aot_shape_set.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "runtime/aot_shapes/host_levels.h"

#ifdef ECJIT_AOT_SHAPES
// Written at build time by `ecjit-aot aot --op shape` (runtime/aot_shapes/CMakeLists.txt).
#include "aot_shapes_avx2_16.h"
#include "aot_shapes_avx2_8.h"
#include "aot_shapes_gfni_16.h"
#include "aot_shapes_gfni_32.h"
#include "aot_shapes_gfni_8.h"
#include "aot_shapes_gfni512_16.h"
#include "aot_shapes_gfni512_32.h"
#include "aot_shapes_gfni512_8.h"
#include "aot_shapes_pclmul_32.h"
#include "aot_shapes_pclmul_64.h"
#include "aot_shapes_sse_16.h"
#include "aot_shapes_sse_8.h"
#include "aot_shapes_vpclmul_32.h"
#include "aot_shapes_vpclmul_64.h"
#include "aot_shapes_vpclmul512_64.h"
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
  const std::string_view t(target);
  set.vector_bits = t.rfind("x86_64-v4", 0) == 0 ? 512 : t.rfind("x86_64-v3", 0) == 0 ? 256 : 128;
  for (const Shape &s : shapes)
    for (int w = 0; w < kAotWidthCount; ++w)
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

namespace {

#ifdef ECJIT_AOT_SHAPES
// Every set of GF(2^bits), fastest first: 512-bit (x86-64-v4), GFNI on 256 bits (none for
// GF(2^64)), then the 256-bit and the 128-bit sets without GFNI (split-table for GF(2^8/16),
// carry-less multiplies for GF(2^32/64)). Empty for other fields. Never destroyed: codecs' kernels
// point into them, and background jobs may run while exit handlers do.
const std::vector<AotShapeSet> &entries(unsigned bits) {
  using ir::Strategy;
  static const std::vector<AotShapeSet> *const gf8 = new std::vector<AotShapeSet>{
      make_set("x86_64-v4+gfni", 8, Strategy::kGfni, ecjit_aot_gfni512_8_shapes),
      make_set("x86_64-v3+gfni", 8, Strategy::kGfni, ecjit_aot_gfni_8_shapes),
      make_set("x86_64-v3", 8, Strategy::kSplitTable, ecjit_aot_avx2_8_shapes),
      make_set("x86_64-v2", 8, Strategy::kSplitTable, ecjit_aot_sse_8_shapes)};
  static const std::vector<AotShapeSet> *const gf16 = new std::vector<AotShapeSet>{
      make_set("x86_64-v4+gfni", 16, Strategy::kGfni, ecjit_aot_gfni512_16_shapes),
      make_set("x86_64-v3+gfni", 16, Strategy::kGfni, ecjit_aot_gfni_16_shapes),
      make_set("x86_64-v3", 16, Strategy::kSplitTable, ecjit_aot_avx2_16_shapes),
      make_set("x86_64-v2", 16, Strategy::kSplitTable, ecjit_aot_sse_16_shapes)};
  static const std::vector<AotShapeSet> *const gf32 = new std::vector<AotShapeSet>{
      make_set("x86_64-v4+gfni", 32, Strategy::kGfni, ecjit_aot_gfni512_32_shapes),
      make_set("x86_64-v3+gfni", 32, Strategy::kGfni, ecjit_aot_gfni_32_shapes),
      make_set("x86_64-v3+pclmul,+vpclmulqdq", 32, Strategy::kClmulInsn, ecjit_aot_vpclmul_32_shapes),
      make_set("x86_64-v2+pclmul", 32, Strategy::kClmulInsn, ecjit_aot_pclmul_32_shapes)};
  static const std::vector<AotShapeSet> *const gf64 = new std::vector<AotShapeSet>{
      make_set("x86_64-v4+pclmul,+vpclmulqdq", 64, Strategy::kClmulInsn, ecjit_aot_vpclmul512_64_shapes),
      make_set("x86_64-v3+pclmul,+vpclmulqdq", 64, Strategy::kClmulInsn, ecjit_aot_vpclmul_64_shapes),
      make_set("x86_64-v2+pclmul", 64, Strategy::kClmulInsn, ecjit_aot_pclmul_64_shapes)};
  static const std::vector<AotShapeSet> *const none = new std::vector<AotShapeSet>();
  return bits == 8 ? *gf8 : bits == 16 ? *gf16 : bits == 32 ? *gf32 : bits == 64 ? *gf64 : *none;
}
#endif

}  // namespace

const AotShapeSet *host_shape_set(unsigned bits, bool without_gfni) {
#ifdef ECJIT_AOT_SHAPES
  for (const AotShapeSet &set : entries(bits))
    if (host_runs(set.target) && !(without_gfni && set.strategy == ir::Strategy::kGfni)) return &set;
#else
  (void)bits;
  (void)without_gfni;
#endif
  return nullptr;
}

std::vector<const AotShapeSet *> runnable_shape_sets(unsigned bits) {
  std::vector<const AotShapeSet *> sets;
#ifdef ECJIT_AOT_SHAPES
  for (const AotShapeSet &set : entries(bits))
    if (host_runs(set.target)) sets.push_back(&set);
#else
  (void)bits;
#endif
  return sets;
}

}  // namespace ecjit::aot
