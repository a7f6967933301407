// AotShapeSet: GF(2^8/16/32/64) shape kernels compiled at build time by ecjit's own AOT path, so first calls never wait for the JIT.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir_builders/strategy.h"

namespace ecjit::aot {

// Column widths of the ahead-of-time kernels; a matrix of any width runs as chunks of these
// (widest first), the first chunk of an overwrite writing, the others accumulating.
constexpr int kAotWidths[] = {8, 4, 2, 1};
constexpr int kAotRows = 8;  // at most 8 outputs per kernel (= the JIT's shape rows)

using AotShapeFn = void (*)(const uint8_t *const *in, uint8_t *const *out, size_t len,
                            const uint8_t *coeffs);

// The kernels built for one x86 level and field (runtime/aot_shapes/CMakeLists.txt):
// fn[w][r - 1][a] takes kAotWidths[w] inputs, r outputs (1..rows), overwrites (a = 0) or
// accumulates (a = 1), reading GF(2^bits) coefficients prepared in `strategy`'s layout
// (codes::CoeffLayout).
struct AotShapeSet {
  const char *target = "";  // e.g. "x86_64-v3+gfni"
  unsigned bits = 8;        // the field, GF(2^bits)
  unsigned rows = 0;        // outputs per kernel at most
  ir::Strategy strategy = ir::Strategy::kSplitTable;
  AotShapeFn fn[4][kAotRows][2] = {};
};

// Whether this build contains the kernels (an x86-64 build with the ecjit-aot generator).
bool aot_shapes_built();

// The fastest set of GF(2^bits) (8, 16, 32 or 64) this CPU runs: gfni (none for GF(2^64)),
// then the 256-bit set, then the 128-bit one - split-table for GF(2^8/16), clmul-insn for
// GF(2^32/64) (PCLMULQDQ; VPCLMULQDQ for 256 bits). with without_gfni: the fastest that is
// not gfni. Null when none was built or none runs here. Thread-safe.
const AotShapeSet *host_shape_set(unsigned bits, bool without_gfni);

}  // namespace ecjit::aot
