// Strategy names: the strings the tuner, the tools and the cache keys use.
#include "ir_builders/strategy.h"

namespace ecjit::ir {
namespace {

struct StrategyRow {
  Strategy strategy;
  const char *name;
};

// One row per strategy; a new lowering adds its row here.
constexpr StrategyRow kStrategies[] = {
    {Strategy::kAuto, "auto"},
    {Strategy::kClmulShift, "clmul-shift"},
    {Strategy::kSplitTable, "split-table"},
    {Strategy::kGfni, "gfni"},
    {Strategy::kClmulInsn, "clmul-insn"},
    {Strategy::kClmulMixed, "clmul-mixed"},
};

}  // namespace

const char *strategy_name(Strategy s) {
  for (const StrategyRow &row : kStrategies)
    if (row.strategy == s) return row.name;
  return "unknown";
}

std::optional<Strategy> parse_strategy(const std::string &name) {
  for (const StrategyRow &row : kStrategies)
    if (name == row.name) return row.strategy;
  return std::nullopt;
}

std::vector<std::string> known_strategies() {
  std::vector<std::string> out;
  for (const StrategyRow &row : kStrategies) out.push_back(row.name);
  return out;
}

}  // namespace ecjit::ir
