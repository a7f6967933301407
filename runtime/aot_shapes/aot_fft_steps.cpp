// AotFftSteps: the table of build-time rs-fft step kernels per x86 level and field.
#include "runtime/aot_shapes/aot_fft_steps.h"

#include "runtime/aot_shapes/host_levels.h"

#ifdef ECJIT_AOT_SHAPES
// Written at build time by `ecjit-aot aot --op steps` (runtime/aot_shapes/CMakeLists.txt).
#include "aot_fft_steps_avx2_8.h"
#include "aot_fft_steps_avx2_16.h"
#include "aot_fft_steps_gfni_8.h"
#include "aot_fft_steps_gfni_16.h"
#include "aot_fft_steps_gfni512_8.h"
#include "aot_fft_steps_gfni512_16.h"
#include "aot_fft_steps_sse_8.h"
#include "aot_fft_steps_sse_16.h"
#endif

namespace ecjit::aot {
namespace {

#ifdef ECJIT_AOT_SHAPES
// One set from its generated header's names (ecjit_aot_fft_steps_<level>_<bits>).
#define ECJIT_FFT_STEPS_SET(LEVEL, level, bits, target)                                                      \
  AotFftSteps {                                                                                             \
    target, bits, ECJIT_AOT_FFT_STEPS_##LEVEL##_##bits##_MULTIPLIES,                                        \
        ECJIT_AOT_FFT_STEPS_##LEVEL##_##bits##_WHOLE_COLUMNS != 0, ECJIT_AOT_FFT_STEPS_##LEVEL##_##bits##_VECTOR_BITS, \
        reinterpret_cast<void *>(&ecjit_aot_fft_steps_##level##_##bits##_transform_steps),                  \
        reinterpret_cast<void *>(&ecjit_aot_fft_steps_##level##_##bits##_steps)                             \
  }

// Every set of GF(2^bits), widest first. Never destroyed: an rs-fft engine's background jobs
// hold pointers into them, and may run while exit handlers do.
const std::vector<AotFftSteps> &sets(unsigned bits) {
  static const std::vector<AotFftSteps> *const gf8 = new std::vector<AotFftSteps>{
      ECJIT_FFT_STEPS_SET(GFNI512, gfni512, 8, "x86_64-v4+gfni"),
      ECJIT_FFT_STEPS_SET(GFNI, gfni, 8, "x86_64-v3+gfni"),
      ECJIT_FFT_STEPS_SET(AVX2, avx2, 8, "x86_64-v3"),
      ECJIT_FFT_STEPS_SET(SSE, sse, 8, "x86_64-v2")};
  static const std::vector<AotFftSteps> *const gf16 = new std::vector<AotFftSteps>{
      ECJIT_FFT_STEPS_SET(GFNI512, gfni512, 16, "x86_64-v4+gfni"),
      ECJIT_FFT_STEPS_SET(GFNI, gfni, 16, "x86_64-v3+gfni"),
      ECJIT_FFT_STEPS_SET(AVX2, avx2, 16, "x86_64-v3"),
      ECJIT_FFT_STEPS_SET(SSE, sse, 16, "x86_64-v2")};
  static const std::vector<AotFftSteps> *const none = new std::vector<AotFftSteps>();
  return bits == 8 ? *gf8 : bits == 16 ? *gf16 : *none;
}
#undef ECJIT_FFT_STEPS_SET
#endif

}  // namespace

std::vector<const AotFftSteps *> runnable_fft_steps(unsigned gf_bits) {
  std::vector<const AotFftSteps *> out;
#ifdef ECJIT_AOT_SHAPES
  for (const AotFftSteps &set : sets(gf_bits))
    if (host_runs(set.target)) out.push_back(&set);
#else
  (void)gf_bits;
#endif
  return out;
}

}  // namespace ecjit::aot
