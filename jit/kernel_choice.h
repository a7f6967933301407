// KernelChoice: how a compiled kernel's lowering was chosen, one value from the tuner to the kernel to its slot.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ecjit/kernel_decision.h"
#include "ir_builders/strategy.h"

namespace ecjit::jit {

// The strategy and main-loop unroll depth a kernel was built with, how they were chosen
// (static, forced, tuned, recorded), what the tuner timed, and the same as a sentence (empty
// for a fixed choice).
struct KernelChoice {
  ir::Strategy strategy = ir::Strategy::kAuto;
  unsigned unroll = 1;
  std::string why;
  DecisionSource source = DecisionSource::kStatic;
  std::vector<MeasuredCandidate> measured;  // empty: nothing timed
};

// A choice nothing was timed for: `strategy` at unroll 1, and why.
inline KernelChoice static_choice(ir::Strategy strategy, std::string why) {
  return {strategy, 1, std::move(why), DecisionSource::kStatic, {}};
}

}  // namespace ecjit::jit
