// LinearCode: a systematic (k + m, k) code over GF(2^l), built from a CodeSpec by its family.
#pragma once

#include <string>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Shards 0..k-1 hold data, k..k+m-1 hold parity; parity = A * data, A is m x k.
struct LinearCode {
  CodeSpec spec;
  Field field;
  unsigned k = 0;
  unsigned m = 0;
  Matrix parity;  // m x k

  unsigned n() const { return k + m; }
  // The (k + m) x k generator matrix [I_k; A].
  Matrix generator() const;
  // Row of the generator for shard s (a unit row for data shards).
  std::vector<uint64_t> generator_row(unsigned s) const;
  // Entry j of that row, without building it.
  uint64_t generator_entry(unsigned s, unsigned j) const { return s < k ? uint64_t(s == j) : parity.at(s - k, j); }
};

// Builds the code a spec describes (the spec must have come from CodeSpec::parse, or be
// equally valid). Errors: kInvalidSpec; kUnsupported for rs-fft, which is not a matrix code
// over a polynomial-basis field (runtime's FftCodec serves it; codes/rs_fft.h).
Result<LinearCode> build_code(const CodeSpec &spec);

// Convenience: parse + build.
Result<LinearCode> build_code(const std::string &spec_text);

}  // namespace ecjit::codes
