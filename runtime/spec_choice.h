// spec_choice: a codec's encoder info opens with why "rs:k=,m=" chose its construction.
#pragma once

#include "ecjit/code_spec.h"
#include "ecjit/codec.h"

namespace ecjit::runtime {

// info with spec.chosen_by (codes::choose_rs) before its why; unchanged for a named family.
inline KernelInfo with_spec_choice(KernelInfo info, const CodeSpec &spec) {
  if (spec.chosen_by.empty()) return info;
  info.why = spec.chosen_by + (info.why.empty() ? "" : "; " + info.why);
  info.decision.chosen_spec = spec.to_string();
  return info;
}

}  // namespace ecjit::runtime
