// has_feature: whether a TargetInfo's CPU and feature string enable an LLVM subtarget feature.
#pragma once

#include <string>

#include "ir_builders/target_info.h"

namespace ecjit::ir {

// Whether `feature` (an LLVM feature name without '+', e.g. "ssse3", "avx2", "avx512bw",
// "neon") is on for `target`. The feature string is applied in order after the CPU's own
// features, the last "+f" / "-f" winning. On x86 the CPU name's features and LLVM's
// implications are honoured both ways ("x86-64-v3" has ssse3; "-sse3" also clears ssse3),
// through LLVM's X86 target parser; other architectures look at the feature string only.
// Pure function of its arguments; thread-safe.
bool has_feature(const TargetInfo &target, const std::string &feature);

}  // namespace ecjit::ir
