// Array codes given by parity chains over a (p-1)-row array: EVENODD, RDP and STAR, as bit-matrices (chains from codes/array_layout).
#pragma once

#include "codes/bitmatrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// The array of a code with prime p has p - 1 rows: element (i, j) is packet i of shard j
// (w = p - 1, Jerasure's layout), so a parity chain is a bit-matrix row. A code shortened to
// k < its full width has all-zero columns in place of the missing data shards. Row p - 1 is
// the imaginary all-zero row the diagonals wrap through. <x> is x mod p.
//
// EVENODD (Blaum, Brady, Bruck, Menon 1995), k <= p, m = 2: P_i = XOR_j a(i, j);
//   Q_i = S ^ XOR_j a(<i - j>, j), with S = XOR_{j >= 1} a(p - 1 - j, j) (the diagonal that is
//   not stored, folded into every Q element).
// RDP (Corbett et al., FAST-04), k <= p - 1, m = 2: P_i = XOR_j a(i, j); the p - 1 stored
//   diagonals run through the data and P columns (P is column p - 1):
//   Q_d = XOR_{j < p} b(<d - j>, j), b = the data, or P for j = p - 1.
// STAR (Huang, Xu, FAST-05 / IEEE TC 2008), k <= p, m = 3: EVENODD's P and Q, and the
//   anti-diagonal parity R_i = S' ^ XOR_j a(<i + j>, j), S' = XOR_{j >= 1} a(j - 1, j).
// Each function checks its rule (p prime, k, m) and returns kInvalidSpec naming it.
Status check_evenodd(const CodeSpec &spec);
Status check_rdp(const CodeSpec &spec);
Status check_star(const CodeSpec &spec);
// The (m w) x (k w) parity bit-matrix of spec (w = p - 1; spec already checked).
Status build_evenodd(const CodeSpec &spec, BitMatrix *parity, std::vector<uint64_t> *symbols);
Status build_rdp(const CodeSpec &spec, BitMatrix *parity, std::vector<uint64_t> *symbols);
Status build_star(const CodeSpec &spec, BitMatrix *parity, std::vector<uint64_t> *symbols);
// The smallest prime p the family admits for k data shards (its default p).
unsigned default_prime(CodeFamily family, unsigned k);

}  // namespace ecjit::codes
