// rs_auto: the spec "rs:k=,m=" - a Reed-Solomon code whose construction (a Cauchy matrix or
// the additive FFT) is chosen by a cost model of encode plus rebuild time.
#pragma once

#include <string>

#include "ecjit/code_spec.h"

namespace ecjit::codes {

// Estimated nanoseconds per data byte (1 / GB/s) of one construction: encode, and rebuild
// of m shards lost at random (for the FFT the erasure-locator core; a matrix decode runs
// about as fast as its encode).
struct RsCost {
  double encode = 0;
  double decode = 0;
  double total() const { return encode + decode; }
};

// The model, fitted to this project's kernels at 64 KiB shards (one thread, Zen 5 with AVX-512 + GFNI,
// the measurements in docs/performance.md, "rs: matrix or FFT"): a matrix code
// runs m products per data byte, ~430 / m GB/s while its k x m coefficients stay small
// (k m <= 512), ~230 / m past that, GF(2^16) a third of GF(2^8); the FFT encoder does
// w = (chunks + 1) P log2 P / k butterfly layers per data symbol (P the transform size:
// next_pow2 of the smaller of k and m, chunks the transforms of the larger side), ~170 / w
// GB/s, and its core ~70 / (N log2 N / k) GB/s with N = next_pow2(k + m). It depends on
// (k, m) only, never on the machine: the choice decides the parity bytes, so the same spec
// must name the same code everywhere. Within 2x of every measured rate past 40 shards; below
// that the FFT runs 2-7x faster than modelled (unrolled kernels, few losses decoded as a
// matrix) and the matrix wins all the same (test/code_spec_test.cpp holds the measurements).
RsCost matrix_cost(unsigned k, unsigned m, unsigned gf);
RsCost fft_cost(unsigned k, unsigned m);

// The construction "rs:k=,m=" stands for: rs-cauchy over GF(2^8) (k + m <= 256) or GF(2^16)
// (k + m <= kMaxShards), or rs-fft - over Leopard-RS's GF(2^8) where k + next_pow2(m) <= 256
// (klauspost's leopard8 code; never slower than GF(2^16) there), else reed-solomon-simd's
// GF(2^16) - whichever the model costs least (one FFT model for both fields: the field does
// not move the matrix / FFT boundary at any measured point); chosen_by says which it was and
// why (both costs). Errors: kInvalidSpec when k or m is 0 or neither construction takes
// (k, m), with both rules.
Result<CodeSpec> choose_rs(unsigned k, unsigned m);

}  // namespace ecjit::codes
