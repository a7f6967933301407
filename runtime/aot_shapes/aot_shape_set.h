// AotShapeSet: GF(2^8/16/32/64) shape kernels compiled at build time by ecjit's own AOT path, so first calls never wait for the JIT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir_builders/strategy.h"

namespace ecjit::aot {

// Column widths of the ahead-of-time kernels; a matrix of any width runs as chunks of these
// (widest a set has first), the first chunk of an overwrite writing, the others accumulating
// (each chunk after the first reads and writes the outputs again). GF(2^8) sets have every
// width, so the usual k (4, 6, 8, 10, 12, 16) are one chunk; the wide fields' sets 8, 4, 2, 1.
constexpr int kAotWidths[] = {16, 12, 10, 8, 6, 4, 2, 1};
constexpr int kAotWidthCount = int(sizeof kAotWidths / sizeof kAotWidths[0]);
constexpr int kAotRows = 8;  // at most 8 outputs per kernel (= the JIT's shape rows)

using AotShapeFn = void (*)(const uint8_t *const *in, uint8_t *const *out, size_t len,
                            const uint8_t *coeffs);

// The kernels built for one x86 level and field (runtime/aot_shapes/CMakeLists.txt):
// fn[w][r - 1][a] takes kAotWidths[w] inputs, r outputs (1..rows), overwrites (a = 0) or
// accumulates (a = 1) - null for a width the set was not built with -, reading GF(2^bits)
// coefficients prepared in `strategy`'s layout (codes::CoeffLayout).
struct AotShapeSet {
  const char *target = "";  // e.g. "x86_64-v3+gfni"
  unsigned bits = 8;        // the field, GF(2^bits)
  unsigned rows = 0;        // outputs per kernel at most
  unsigned vector_bits = 128;  // 512 on x86-64-v4, 256 on -v3, 128 on -v2
  ir::Strategy strategy = ir::Strategy::kSplitTable;
  AotShapeFn fn[kAotWidthCount][kAotRows][2] = {};
};

// Whether this build contains the kernels (an x86-64 build with the ecjit-aot generator).
bool aot_shapes_built();

// The fastest set of GF(2^bits) (8, 16, 32 or 64) this CPU runs: the 512-bit one on
// x86-64-v4 (GFNI for GF(2^8/16/32), VPCLMULQDQ for GF(2^64)), then 256-bit gfni (none for
// GF(2^64)), then the 256-bit set and the 128-bit one without GFNI - split-table for
// GF(2^8/16), clmul-insn for GF(2^32/64) (PCLMULQDQ; VPCLMULQDQ for 256 bits). With
// without_gfni: the fastest that is not gfni. Null when none was built or none runs here.
// Thread-safe.
const AotShapeSet *host_shape_set(unsigned bits, bool without_gfni);

// Every set of GF(2^bits) built and run by this CPU, fastest first (tests run each).
std::vector<const AotShapeSet *> runnable_shape_sets(unsigned bits);

}  // namespace ecjit::aot
