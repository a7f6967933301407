// read_trace: Table II's workloads as seeded geometric read sizes at uniform offsets.
#include "tools/read_trace.h"

#include <algorithm>
#include <random>

namespace ecjit::tools {

const std::vector<Workload> &shen2016_workloads() {
  static const std::vector<Workload> w = {
      {"mds_0", "media server", 132318, 25.3},
      {"rsrch_1", "research project", 43, 13.9},
      {"web_1", "web/SQL server", 87058, 45.9},
      {"web_3", "web/SQL server", 10050, 74.9},
  };
  return w;
}

std::vector<TraceRead> synthetic_trace(const Workload &w, uint64_t seed, uint64_t volume, unsigned count) {
  constexpr uint64_t kUnit = 4096;
  std::mt19937_64 rng(seed);
  // units = 1 + G, G geometric on {0, 1, ...} with mean mean_kib / 4 - 1.
  const double extra = std::max(0.0, w.mean_kib / 4.0 - 1.0);
  std::geometric_distribution<uint64_t> units(1.0 / (1.0 + extra));
  std::vector<TraceRead> trace(count ? count : w.reads);
  for (TraceRead &r : trace) {
    r.size = std::min<uint64_t>(1 + units(rng), volume / kUnit / 2) * kUnit;
    r.offset = std::uniform_int_distribution<uint64_t>(0, (volume - r.size) / kUnit)(rng) * kUnit;
  }
  return trace;
}

}  // namespace ecjit::tools
