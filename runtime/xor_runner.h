// XorRunner: runs a bit-matrix kernel's program without compiling it (the first-call path of XOR codes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir_builders/xor_kernel.h"

namespace ecjit::runtime {

// Executes an ir::XorKernelDesc with the same ABI and results as its compiled kernel, with
// no compile: it serves a shard set's first calls while that kernel compiles in the
// background. The program is regrouped once, at construction, into multi-source XORs: a
// value read by one op only is folded into its reader, so every statement is
// "dst = src_1 ^ ... ^ src_n" over values that are outputs or read more than once (the
// region XORs of Jerasure's schedules, with the sum kept in registers). Statements run per
// block over chunks of the packet (kChunk bytes), each in one pass: the n sources read, dst
// written once. Outputs are written in place (overwrite mode); other values live in
// per-thread scratch slots reused once dead. Immutable; thread-safe.
class XorRunner {
 public:
  static constexpr unsigned kChunk = 2048;
  explicit XorRunner(ir::XorKernelDesc desc);
  void run(const uint8_t *const *in, uint8_t *const *out, size_t len) const;
  const ir::XorKernelDesc &desc() const { return desc_; }
  // Source reads per block position of all statements (the runner's work).
  size_t source_reads() const { return srcs_.size(); }

 private:
  // Where a value lives during a chunk.
  struct Loc {
    enum Kind : uint8_t { kInput, kOutput, kScratch, kZero } kind = kZero;
    uint32_t index = 0;  // input / output number, or scratch slot
  };
  struct Statement {
    Loc dst;
    uint32_t first = 0, count = 0;  // its sources: srcs_[first .. first + count)
    bool accumulate = false;        // dst ^= sum (an output in accumulate mode)
  };
  ir::XorKernelDesc desc_;
  std::vector<Statement> stmts_;
  std::vector<Loc> srcs_;
  unsigned slots_ = 0;
};

}  // namespace ecjit::runtime
