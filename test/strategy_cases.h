// The (strategy, field, tier) combinations this machine can run: the set the tuner picks from.
#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir_builders/strategy.h"
#include "jit/tuner.h"
#include "jit_test_util.h"

namespace ecjit::test {

// The host tiers: the full CPU, then masked down to 256-bit, 128-bit and no vector unit
// (one entry per distinct vector width this machine has).
inline std::vector<std::string> host_tiers() {
  std::vector<std::string> out;
  std::set<unsigned> widths;
  for (const char *t : {"host", "host-avx512f", "host-avx2", "host-sse2"}) {
    auto info = resolve_target(t);
    if (!info) {
      llvm::consumeError(info.takeError());
      continue;
    }
    if (widths.insert(info->vector_bits).second) out.push_back(t);
  }
  return out;
}

struct StrategyCase {
  ir::Strategy strategy;
  unsigned l;
  std::string target;
};

inline void PrintTo(const StrategyCase &c, std::ostream *os) {
  *os << ir::strategy_name(c.strategy) << "_gf" << c.l << "_" << c.target;
}

// Every (strategy, field, tier) that pick(target info, field bits) lists on a host tier.
template <typename Pick>
std::vector<StrategyCase> host_cases(Pick pick) {
  std::vector<StrategyCase> out;
  for (const std::string &t : host_tiers()) {
    auto info = resolve_target(t);
    if (!info) {
      llvm::consumeError(info.takeError());
      continue;
    }
    for (unsigned l : {8u, 16u, 32u, 64u})
      for (ir::Strategy s : pick(*info, l)) out.push_back({s, l, t});
  }
  return out;
}

// Every (strategy, field, tier) that jit::candidate_strategies offers on a host tier.
inline std::vector<StrategyCase> strategy_cases() {
  return host_cases([](const ir::TargetInfo &info, unsigned l) {
    return jit::candidate_strategies(info, l);
  });
}

}  // namespace ecjit::test
