// Recoverability of a non-MDS matrix code: erasure patterns it decodes per number of losses, and the shards one loss reads.
#pragma once

#include <cstdint>
#include <vector>

#include "codes/linear_code.h"

namespace ecjit::codes {

struct LossCount {
  unsigned losses = 0;
  uint64_t patterns = 0;     // C(n, losses)
  uint64_t checked = 0;      // patterns checked (all of them, or a seeded sample)
  uint64_t recoverable = 0;  // of those checked, the ones whose surviving shards determine the data
};

struct Recoverability {
  std::vector<LossCount> by_losses;  // 1 .. m losses
  // One lost shard: the shards its repair reads (a local check's others, else k), averaged
  // and worst over the shards a local check covers and over all n.
  unsigned local_shards = 0;  // shards some local check repairs
  double local_reads_avg = 0;
  unsigned local_reads_max = 0;
  double reads_avg = 0;  // over every shard
};

// Whether the code [I; parity] (k data shards, parity.rows parity shards) decodes the loss of
// the shards lost[s]: the surviving parity rows have full rank on the lost data columns.
bool decodes_loss(const Field &field, const Matrix &parity, unsigned k, const std::vector<bool> &lost);

// C(n, e) as a double (the count of e-loss patterns of n shards; saturates gracefully).
double binomial(unsigned n, unsigned e);

// Counts, for 1 .. m losses, the patterns the code decodes: every pattern while there are at
// most `budget` of that size, otherwise `budget` of them drawn with a fixed seed.
Recoverability recoverability(const LinearCode &code, uint64_t budget);

}  // namespace ecjit::codes
