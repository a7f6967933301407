// AotProduct: one matrix product out (^)= C x in run as calls of the ahead-of-time shape kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/aot_shapes/aot_shape_set.h"

namespace ecjit::aot {

// The calls that compute out[r] (^)= sum_c C(r, c) * in[c] for a rows x cols matrix C on a
// set's kernels: every block of up to set.rows rows, its columns in chunks of kAotWidths
// (the widest the set has that fits first); the first chunk of an overwriting product
// overwrites, every other chunk accumulates. Each call's coefficients are copied once, here, into the order its kernel
// reads, so a call does no work besides the kernels.
class AotProduct {
 public:
  // `prepared`: C row-major (coefficient (r, c) at (r * cols + c) * coeff_bytes) in the set's
  // layout. nullopt when a kernel the product needs is missing (an incomplete set) or the
  // matrix is empty.
  static std::optional<AotProduct> make(const AotShapeSet &set, unsigned rows, unsigned cols,
                                        bool accumulate, const uint8_t *prepared, size_t coeff_bytes);

  // in: cols shards, out: rows shards, len bytes each (any length; no alignment needed).
  void run(const uint8_t *const *in, uint8_t *const *out, size_t len) const {
    for (const Step &s : steps_) s.fn(in + s.c0, out + s.r0, len, tables_.data() + s.offset);
  }

  size_t calls() const { return steps_.size(); }

 private:
  struct Step {
    AotShapeFn fn;
    unsigned r0, c0;
    size_t offset;  // into tables_
  };
  std::vector<Step> steps_;
  std::vector<uint8_t> tables_;
};

}  // namespace ecjit::aot
