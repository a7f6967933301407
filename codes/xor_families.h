// The bit-matrix (XOR) code families: one registry row each (spec rules + construction).
#pragma once

#include <cstdint>
#include <vector>

#include "codes/bitmatrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// A bit-matrix family's row: what CodeSpec::parse checks and how the code is built.
struct BitFamily {
  CodeFamily family;
  const char *name;
  // Spec rules beyond k, m >= 1: w range, m fixed, k <= f(w) ... kInvalidSpec naming the rule.
  Status (*check)(const CodeSpec &spec);
  // The (m w) x (k w) parity bit-matrix and, for families defined by a matrix over GF(2^w),
  // that matrix (m x k, row-major; empty otherwise).
  Status (*build)(const CodeSpec &spec, BitMatrix *parity, std::vector<uint64_t> *symbols);
  // The spec key of the word size: "w", or "p" for array codes (a prime; w = p - 1 rows).
  const char *word_key;
  // That key's value when the spec gives none, for k data shards (0: it must be given).
  unsigned (*default_word)(CodeFamily family, unsigned k);
  // m when the spec gives none (0: it must be given).
  unsigned default_m;
  // k when the spec gives none but gives the word key: the family's full width for that
  // word (RDP p - 1, EVENODD and STAR p, the RAID-6 codes of Jerasure w or 8); null: k must
  // be given.
  unsigned (*full_width)(CodeFamily family, unsigned word) = nullptr;
};

bool is_prime(unsigned p);

// The row of `f`, null when f is not a bit-matrix family.
const BitFamily *bit_family(CodeFamily f);
// Every bit-matrix family (for names in messages and help).
const std::vector<BitFamily> &bit_families();

// Jerasure's cauchy_original_coding_matrix: a_ij = 1 / (i ^ (m + j)) over GF(2^w).
std::vector<uint64_t> cauchy_original_matrix(const WordField &f, unsigned k, unsigned m);
// Jerasure's cauchy_good_general_coding_matrix: for m = 2 and w <= 11 the row of ones over
// the k elements with the fewest bit-matrix ones (ties: smaller element first) - Jerasure's
// cauchy_best_r6 table, which is that order (checked against Debian's libJerasure 2, which
// has the table for w <= 11 only); otherwise the original Cauchy matrix normalised
// (normalize_matrix).
std::vector<uint64_t> cauchy_good_matrix(const WordField &f, unsigned k, unsigned m);
// Bit-matrix normalisation (Zhou and Tian 2019, sec. 2.2.2; Jerasure's cauchy_improve_coding_matrix) of
// an m x k matrix a (row-major) in place: each column divided by its first entry, then each
// row 1..m-1 divided by the entry that leaves the fewest bit-matrix ones.
void normalize_matrix(const WordField &f, unsigned k, unsigned m, std::vector<uint64_t> *a);

// The spec with what a search chose written out: cauchy-opt with seed= becomes the same code
// as points= (the search runs once per process); every other spec is returned as it is.
// Store this form with data: it decodes the same whatever a later search would pick.
CodeSpec resolved_spec(const CodeSpec &spec);

}  // namespace ecjit::codes
