// lrc:k=,l=,r=: Azure-style locally repairable codes (Huang et al. 2012) - l local XOR parities, r global ones, maximally recoverable.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Shards of lrc:k=K,l=L,r=R (m = L + R): data 0..K-1 in L local groups of K/L consecutive
// shards; shard K + g is the XOR of group g (a local parity); shards K + L .. K + L + R - 1
// are global parities over all K data shards. One lost shard of a group is the XOR of the
// group's other K/L shards (codes/locality.h); more losses take the global parities.
//
// The global coefficients make the code maximally recoverable (Huang et al. 2012's
// "information-theoretically decodable" patterns): every erasure pattern that an LRC of this
// layout can decode at all decodes, namely those with
//   sum over groups g of max(0, e_g - p_g) <= surviving global parities
// (e_g: lost data shards of group g, p_g: 1 when g's local parity survives); LRC(12,2,2)
// then decodes every 3 losses and 86% of the 4-loss patterns. They are the first of a fixed
// sequence of candidates (seeded by k, l, r and the field, so a spec always names the same
// code) that passes the check of lrc_verified_losses() losses.

// The row's rules: l >= 1 dividing k, r >= 1, gf 8 or 16, k + l + r below the field's size
// and within kMaxShards; kInvalidSpec naming the rule.
Status check_lrc(const CodeSpec &spec);
// Reads l= and r= (k is read already) into spec->l, spec->r and spec->m = l + r.
Status read_lrc_keys(const std::map<std::string, std::string> &kv, CodeSpec *spec);
// "k=K,l=L,r=R" for to_string().
std::string write_lrc_keys(const CodeSpec &spec);
// The (l + r) x k parity matrix of a checked spec.
Matrix lrc_parity(const Field &field, const CodeSpec &spec);

// Erasure patterns of an lrc code, by the layout alone (shard indices as above).
struct LrcLayout {
  unsigned k = 0, l = 0, r = 0;
  unsigned group_size() const { return k / l; }
  unsigned n() const { return k + l + r; }
  // Whether a maximally recoverable code of this layout decodes the loss of `lost` (by the
  // counting rule above).
  bool decodable(const std::vector<bool> &lost) const;
};
LrcLayout lrc_layout(const CodeSpec &spec);

// Whether `parity` (the code's (l + r) x k parity matrix) decodes exactly the patterns
// layout.decodable() admits, over every pattern of at most `max_losses` losses.
bool lrc_recovers_all(const Field &field, const LrcLayout &layout, const Matrix &parity, unsigned max_losses);
// The losses up to which a spec's coefficients were checked: every pattern (l + r losses, as
// many as any pattern of the layout can have) while that is at most 2^16 patterns, else r + 1.
unsigned lrc_verified_losses(const LrcLayout &layout);

}  // namespace ecjit::codes
