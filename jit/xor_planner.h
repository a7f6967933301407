// xor_planner: the bit-matrix kernels of a code (encoder, decoders, updates), planned alike for the runtime and the tools.
#pragma once

#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/xor_schedule.h"
#include "ecjit/status.h"
#include "ir_builders/xor_kernel.h"

namespace ecjit::jit {

// A kernel of a bit-matrix code: what it computes (map, over the packets desc.inputs names)
// and the schedule it runs.
struct XorPlan {
  ir::XorKernelDesc desc;
  codes::BitMatrix map;               // rows = desc.outputs, cols = the program's inputs
  std::vector<unsigned> sources;      // decode: the shards read, in kernel pointer order
  std::string op;                     // symbol part: "encode", "decode_t0_1_s2_3_4", ...
  codes::XorSchedule schedule = codes::XorSchedule::kSmart;
};

// The encoder: in = the k data shards, out = the m parity shards; best_schedule.
Result<XorPlan> xor_encoder_plan(const codes::BitMatrixCode &code, const std::string &target_name);
// The decoder of `targets` from `present` (codes::plan_bitmatrix_decode): in = the source
// shards ascending, out = the targets in order; schedule `s` (the runtime's first calls use
// smart: microseconds to plan; compiled kernels best_schedule). Errors: plan_bitmatrix_decode's.
Result<XorPlan> xor_decoder_plan(const codes::BitMatrixCode &code, const std::vector<bool> &present,
                                 const std::vector<unsigned> &targets, const std::string &target_name,
                                 bool best);
// Delta update of the data shards `changed` (ascending): in = their old contents, then their
// new ones; out ^= parity columns x (old ^ new) over the m parity shards (accumulate).
Result<XorPlan> xor_update_plan(const codes::BitMatrixCode &code, const std::vector<unsigned> &changed,
                                const std::string &target_name);
// One data shard's contribution: in = that shard, out ^= its parity columns (accumulate).
Result<XorPlan> xor_partial_plan(const codes::BitMatrixCode &code, unsigned data_index,
                                 const std::string &target_name);
// Sets p's program to schedule `s` of p->map, checked against it (check_program).
Status apply_schedule(XorPlan *p, codes::XorSchedule s);
// The same plan with best_schedule's program (for a kernel compiled in the background).
Result<XorPlan> with_best_schedule(XorPlan plan);

}  // namespace ecjit::jit
