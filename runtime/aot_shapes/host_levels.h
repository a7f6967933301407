// host_levels: whether this CPU runs code built for an x86-64 micro-architecture level, GFNI, carry-less multiplies.
#pragma once

#include <string_view>

namespace ecjit::aot {

// Whether this CPU and OS run code built for an LLVM x86-64 micro-architecture level (v2:
// SSSE3, SSE4.1/4.2, POPCNT, CX16; v3: also AVX, AVX2, BMI1/2, FMA, F16C, LZCNT, MOVBE with
// ymm state enabled; v4: also AVX512F/BW/CD/DQ/VL with opmask and zmm state enabled), GFNI,
// PCLMULQDQ and (with v3) VPCLMULQDQ: the levels the ahead-of-time shape kernels are built for
// (aot_shape_set.h). False off x86. Computed once; thread-safe.
bool host_runs_x86_64_v2();
bool host_runs_x86_64_v3();
bool host_runs_x86_64_v4();
bool host_has_gfni();
bool host_has_pclmul();
bool host_has_vpclmulqdq();

// Whether this CPU runs code built for an ecjit target of the built-in kernels:
// "x86_64-v2", "-v3" or "-v4", each with "+gfni", "+pclmul", "+vpclmulqdq" added (e.g.
// "x86_64-v3+pclmul,+vpclmulqdq"). False for anything else.
bool host_runs(std::string_view target);

}  // namespace ecjit::aot
