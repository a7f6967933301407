// Local repair: parity rows over fewer than k data shards (an LRC's local parities) rebuild a lost shard from their few shards.
#pragma once

#include <optional>
#include <vector>

#include "codes/linear_code.h"

namespace ecjit::codes {

// A parity row whose support is smaller than k, as the check it makes: the sum over its
// shards of coeffs[i] * shard shards[i] is zero (the parity shard's coefficient is 1).
// `shards` ascending; the parity shard is last.
struct LocalCheck {
  std::vector<unsigned> shards;
  std::vector<uint64_t> coeffs;
  bool xor_only() const;  // every coefficient is 1: a shard is the XOR of the others
};

// The code's local checks: its family's (codes/families.h), else its parity rows over fewer
// than k shards in row order (none for an MDS code: its rows are full).
std::vector<LocalCheck> local_checks(const LinearCode &code);

// Rebuilding `targets` one local check each, in `steps` order: shard target = sum of
// coeffs[i] * shard sources[i], sources present or rebuilt by an earlier step.
struct LocalRepair {
  unsigned target;
  std::vector<unsigned> sources;
  std::vector<uint64_t> coeffs;
};
struct LocalPlan {
  std::vector<LocalRepair> steps;
  std::vector<unsigned> reads;  // the present shards read, ascending
  bool xor_only = true;         // every step is an XOR
};

// The local plan for rebuilding `wanted` (each not present) from the shards in `present`,
// choosing for each the check with the fewest shards; nullopt when some wanted shard is in
// no check whose other shards are present or rebuilt first, or when it would read more than
// k shards (the global plan reads k).
// `checks` is local_checks(code) (a codec computes it once).
std::optional<LocalPlan> plan_local(const LinearCode &code, const std::vector<LocalCheck> &checks,
                                    const std::vector<bool> &present, const std::vector<unsigned> &wanted);

}  // namespace ecjit::codes
