// build_fft_step_kernel: one kernel per target that runs rs-fft schedules (fft/schedule.h) of whole-tile steps,
// for codes of any size.
#pragma once

#include <memory>
#include <string>

#include "codes/rs_fft_field.h"
#include "fft/step.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Whether a target's step kernel runs three-layer steps (kFftStepFft8 / Ifft8) well: eight
// whole-column slots and seven multipliers fit its vector registers (AVX-512BW with GFNI).
// Schedules built with radix8 use them; others keep two-layer steps.
bool fft_radix8_steps(const TargetInfo &target);

// Emits
//   void <symbol>(uint8_t *const *ptr, const FftStep *steps, size_t count,
//                 const uint8_t *tables, size_t bytes)
// running the steps in order, each as a loop over the tile's 64-byte columns with its
// multiplier's tables held in registers (fft_column.h's lookups). Nothing is specialised on
// the code: one kernel per field (`gf`: how it multiplies) serves every (k, m) and every
// erasure pattern of it. `kinds`: FftStepKinds::kTransforms leaves the decode core's kinds
// out (a step of one of them is skipped: the runtime gives such a kernel only schedules that
// fft_steps_are_transforms).
// Errors (llvm::Error): a target without a 16-entry byte shuffle, empty symbol, verifier.
llvm::Expected<std::unique_ptr<llvm::Module>> build_fft_step_kernel(llvm::LLVMContext &ctx,
                                                                    const std::string &symbol,
                                                                    const TargetInfo &target,
                                                                    codes::fft::Gf gf = codes::fft::Gf::k16,
                                                                    sched::FftStepKinds kinds = sched::FftStepKinds::kAll);

}  // namespace ecjit::ir
