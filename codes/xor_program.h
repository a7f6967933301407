// XorProgram: a straight-line XOR program over packets (a schedule), checked against its bit-matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codes/bitmatrix.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Static single assignment: values 0 .. inputs-1 are the input packets; op i defines value
// inputs + i = value a ^ value b (a, b < inputs + i); output r is value outputs[r], or
// kZero for a packet of zeros. Every schedule (dumb, smart, matching) is one of these;
// the xor lowering (ir_builders/xor_kernel.h) unrolls it, the runtime can interpret it.
struct XorProgram {
  static constexpr uint32_t kZero = 0xffffffffu;
  struct Op {
    uint32_t a = 0;
    uint32_t b = 0;
    bool operator==(const Op &o) const { return a == o.a && b == o.b; }
  };
  unsigned inputs = 0;
  std::vector<Op> ops;
  std::vector<uint32_t> outputs;

  size_t values() const { return inputs + ops.size(); }
  size_t xors() const { return ops.size(); }
  // Packet copies the program costs when run packet by packet in memory, as Jerasure runs
  // a schedule (and Zhou and Tian 2019 count): a value a ^ b whose a cannot be overwritten in place
  // (an input, an output, or a value read again later) first copies a; an output that is an
  // input, or a value another output already holds, is one copy too.
  size_t copies() const;
  // Human-readable listing, one op per line (tests, `ecjit ir --op` dumps).
  std::string to_string() const;
};

// Whether `p` computes M: p.inputs == M.cols, one output per row, and each output the XOR
// of exactly the inputs its row has set (symbolic evaluation over GF(2), no data). Errors:
// kInternal with the first row that differs, or the malformed op.
Status check_program(const XorProgram &p, const BitMatrix &M);

// out[r] = XOR of the packets of p's inputs, packet by packet (the reference interpreter):
// in[i] / out[r] point at one packet each, `bytes` long. Scratch for every value.
void run_program(const XorProgram &p, const uint8_t *const *in, uint8_t *const *out,
                 size_t bytes);

}  // namespace ecjit::codes
