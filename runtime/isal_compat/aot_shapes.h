// AotShapes: the drop-in's shape kernels compiled at build time by `ecjit aot --op shape`, so first calls never wait for the JIT.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir_builders/strategy.h"

namespace ecjit::isal {

// Column widths of the ahead-of-time kernels; a matrix of any width runs as chunks of these
// (widest first), the first chunk of an overwrite writing, the others accumulating.
constexpr int kAotWidths[] = {8, 4, 2, 1};
constexpr int kAotRows = 8;  // outputs 1..8 per kernel (= kShapeRows)

using AotShapeFn = void (*)(const uint8_t *const *in, uint8_t *const *out, size_t len,
                            const uint8_t *coeffs);

// The kernels built for one x86 level (runtime/isal_compat/CMakeLists.txt): fn[w][r - 1][a]
// takes kAotWidths[w] inputs, r outputs, overwrites (a = 0) or accumulates (a = 1), reading
// coefficients prepared in `strategy`'s layout (codes::CoeffLayout).
struct AotShapeSet {
  const char *target = "";  // e.g. "x86_64-v3+gfni"
  ir::Strategy strategy = ir::Strategy::kSplitTable;
  AotShapeFn fn[4][kAotRows][2] = {};
};

// The fastest set this CPU runs (gfni before split-table AVX2 before split-table SSSE3), or,
// with split_table_only, the fastest split-table set (caller-built tables are read as they
// are). Null when the library was built without them (not x86-64, no ecjit tool in the
// build), when no set runs here, or when ECJIT_ISAL_AOT=0 or ECJIT_ISAL_TARGET is set (the
// JIT's kernels for that target serve instead). Thread-safe.
const AotShapeSet *aot_shape_set(bool split_table_only);

}  // namespace ecjit::isal
