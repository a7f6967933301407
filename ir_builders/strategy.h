// Strategy: the lowering of constant Galois-field multiplies into IR (DESIGN.md, "Strategies").
#pragma once

#include <optional>
#include <string>

namespace ecjit::ir {

enum class Strategy {
  kAuto,        // let the caller (tuner) pick; resolved before a builder runs
  kClmulShift,  // dissertation ch. 5.2: shifts + XORs into lo/hi accumulators, one Barrett
                // reduction per output vector (eq. 3.25)
};

const char *strategy_name(Strategy s);
std::optional<Strategy> parse_strategy(const std::string &name);

}  // namespace ecjit::ir
