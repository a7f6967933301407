// TargetInfo: what a kernel builder needs to know about the machine it emits IR for.
#pragma once

#include <string>

namespace ecjit::ir {

// Filled by jit/ from a TargetSpec; ir_builders never detects anything itself.
struct TargetInfo {
  std::string triple;    // LLVM target triple, set on the module
  std::string cpu;       // "target-cpu" function attribute
  std::string features;  // "target-features" function attribute, e.g. "+avx2,-avx512f"
  // Width of the widest integer vector register the kernel may use, in bits
  // (512, 256, 128); 64 means no vector unit: symbols are packed into 64-bit GPRs.
  unsigned vector_bits = 128;
  unsigned vector_regs = 16;  // architectural vector registers (register-blocking hint)
  // Widest vector lane, in bits, with native element-wise shifts (Hexagon HVX: 32; x86, NEON,
  // RVV: 64). Symbols wider than this are processed in 64-bit scalar registers instead of
  // vectors, because the backend would scalarize such vectors lane by lane (slow to compile
  // and to run).
  unsigned max_lane_bits = 64;
  // What one carry-less multiply of vector width costs in vector XORs (reciprocal
  // throughputs in the CPU's scheduling model): at 512 bits 4 on Zen 4 and Zen 5 (one
  // VPCLMULQDQ per 2 cycles, two XORs per cycle), 2 on Ice Lake to Granite Rapids. 0 =
  // unknown (no such instruction in the tier, or no per-instruction model, as for the
  // generic x86-64-v4). Steers the static strategy choice (jit::resolve_strategy).
  double clmul_cost_xors = 0;
};

}  // namespace ecjit::ir
