// MDS check: is every k x k submatrix of [I; A] invertible (any m erasures recoverable)?
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/linear_code.h"

namespace ecjit::codes {

struct MdsReport {
  bool mds = true;            // no singular submatrix found
  bool exhaustive = true;     // every submatrix was checked (otherwise a seeded sample)
  uint64_t checked = 0;       // square submatrices of A checked
  uint64_t total = 0;         // square submatrices of A in all (saturates at UINT64_MAX)
  // A failing case when !mds: the parity rows and data columns of a singular square
  // submatrix of A, equivalently an erasure set that cannot be decoded.
  std::vector<unsigned> bad_rows;
  std::vector<unsigned> bad_cols;
  // Bit-matrix codes: erasure sets of m shards were checked instead (checked / total count
  // them), and `lost` is one that cannot be rebuilt when !mds.
  bool erasure_sets = false;
  std::vector<unsigned> lost;
  std::string to_string() const;
};

// Every k x k submatrix of [I; A] is invertible iff every square submatrix of A is
// (Laplace expansion along the identity rows). Checks all of them when there are at most
// `budget`, otherwise `budget` of them drawn with a fixed seed.
MdsReport check_mds(const LinearCode &code, uint64_t budget = 2000000);

// A bit-matrix code is MDS iff every set of m lost shards leaves k w independent bit-rows
// (then so does every smaller set). Checks every m-subset of the n shards when there are at
// most `budget`, otherwise `budget` of them drawn with a fixed seed.
MdsReport check_mds(const BitMatrixCode &code, uint64_t budget = 2000000);

}  // namespace ecjit::codes
