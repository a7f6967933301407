// read_trace: seeded synthetic read traces shaped like the MSR Cambridge volumes of Shen et al. 2016 (its Table II).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ecjit::tools {

struct TraceRead {
  uint64_t offset = 0;  // bytes, 4 KiB aligned
  uint64_t size = 0;    // bytes, a multiple of 4 KiB
};

// One of Shen et al. 2016's workloads: its name, type, number of read operations and mean read
// size (Table II). The traces themselves are not distributed with the paper's text.
struct Workload {
  const char *name;
  const char *type;
  unsigned reads;
  double mean_kib;
};
const std::vector<Workload> &shen2016_workloads();

// `count` reads (0: the workload's own count): sizes are 4 KiB units, 1 + a geometric number
// with the workload's mean (Figure 5's exact histogram is not in the text); offsets uniform
// over a volume of `volume` bytes. The same seed gives the same trace.
std::vector<TraceRead> synthetic_trace(const Workload &w, uint64_t seed, uint64_t volume, unsigned count = 0);

}  // namespace ecjit::tools
