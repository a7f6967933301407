// XorRunner: runs a bit-matrix kernel's program without compiling it (the first-call path of XOR codes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir_builders/xor_kernel.h"

namespace ecjit::runtime {

// Executes an ir::XorKernelDesc with the same ABI and results as its compiled kernel: per
// block, the packet in chunks of up to kChunk bytes, each op one XOR of two chunks into a
// scratch slot (slots reused once a value is dead: linear scan at construction), each
// output copied (or XORed, accumulate) from its value. Vector loops written portably; a
// few times slower than the unrolled kernel, and no compile: it serves an erasure set's
// first calls while that kernel compiles in the background. Immutable; thread-safe (scratch
// is per thread).
class XorRunner {
 public:
  static constexpr unsigned kChunk = 256;
  explicit XorRunner(ir::XorKernelDesc desc);
  void run(const uint8_t *const *in, uint8_t *const *out, size_t len) const;
  const ir::XorKernelDesc &desc() const { return desc_; }

 private:
  ir::XorKernelDesc desc_;
  std::vector<int32_t> slot_;  // per op value: its scratch slot
  unsigned slots_ = 0;
};

}  // namespace ecjit::runtime
