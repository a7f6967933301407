// AotFftSteps: the rs-fft step kernels compiled at build time by ecjit's own AOT path, so a new rs-fft codec serves before (or without) the JIT.
#pragma once

#include <vector>

namespace ecjit::aot {

// The two step kernels of one field and x86 level (runtime/aot_shapes/CMakeLists.txt,
// `ecjit-aot aot --op steps`): the executors of rs-fft step programs
// (ir_builders/fft_step_kernel.h), each serving every (k, m). They read the multiplier
// tables of `multiplies` (sched::fft_mul_tables: GFNI matrices or nibble tables) and take
// three-layer steps where `whole_columns`; a schedule made for a target of the same two
// (ir::fft_multiply_name, ir::fft_radix8_steps) runs on them as on the JIT's own.
struct AotFftSteps {
  const char *target = "";          // e.g. "x86_64-v3"
  unsigned gf_bits = 16;            // 8: Leopard-RS's GF(2^8); 16: reed-solomon-simd's GF(2^16)
  const char *multiplies = "";      // "gfni" or "split-table"
  bool whole_columns = false;
  unsigned vector_bits = 0;         // 512 on x86-64-v4, 256 on -v3, 128 on -v2
  void *transform_steps = nullptr;  // the transforms' kinds (ir::FftKernelDesc::Kind::kTransformSteps)
  void *steps = nullptr;            // every kind, the decode core's too (kSteps)
};

// Every set of GF(2^gf_bits) (8 or 16) built and run by this CPU, widest first; empty off
// x86-64 or in a build without the ecjit-aot generator. Thread-safe.
std::vector<const AotFftSteps *> runnable_fft_steps(unsigned gf_bits);

}  // namespace ecjit::aot
