// plan_decoder: the one way a decoder of an erasure set is planned, named and requested - for the runtime, `ecjit ir/asm/stats` and `ecjit aot` alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "ecjit/status.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"
#include "jit/decoder_use.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"

namespace ecjit::jit {

// A planned decoder: which shards it reads and rebuilds, how (the direct map or a two-stage
// schedule), its operation name and the compile request that builds it.
struct DecoderPlan {
  codes::DecodePlan plan;
  std::string op;          // decoder_op(plan.targets, plan.sources)
  CompileRequest request;  // desc: coeffs (or pre + post), symbol kernel_symbol(op, spec, target_name)
};

// "decode_t<targets>_s<sources>", indices joined by '_': the operation part of every
// decoder's symbol (ecjit_decode_t0_3_s1_2_4_5__<spec>__<target>).
std::string decoder_op(const std::vector<unsigned> &targets, const std::vector<unsigned> &sources);

// Plans the rebuild of `wanted` from `present` (codes::plan_decode) for a kernel of
// `strategy` (kAuto: resolve_strategy's static choice) on `target`, named after the code's
// spec and `target_name`, built for `use`. With `two_stage` the plan is searched under that
// strategy's cost model (ir::strategy_cost_model) and the kernel runs the two-stage schedule
// when the planner found a cheaper one; without, the direct map. Errors: those of
// codes::plan_decode (kShardCount, kInvalidArgument, kTooManyErasures, kSingular).
Result<DecoderPlan> plan_decoder(const codes::LinearCode &code, const std::vector<bool> &present,
                                 const std::vector<unsigned> &wanted, const ir::TargetInfo &target,
                                 const std::string &target_name, ir::Strategy strategy, DecoderUse use,
                                 OptLevel opt = OptLevel::kO3, bool two_stage = true);

// The widest code (data shards) shape kernels serve; the public API names the same limit
// ecjit::kMaxShapeInputs (runtime/jit_impl.cpp checks that the two agree).
inline constexpr unsigned kMaxShapeInputs = 64;

// Whether shape kernels (run-time coefficients) serve the first calls of `code`'s erasure
// sets, given the field's shape strategy on the target (ir::pick_shape_strategy, as
// KernelService::shape_strategy holds it; nullopt: none): there is one and the code has
// 1..kMaxShapeInputs data shards and parity. Then a Jit with shape kernels on
// promotes hot sets (DecoderUse::kPromoted); otherwise it compiles each set's decoder on
// first use (kPerSet).
bool shape_kernels_serve(const codes::LinearCode &code, std::optional<ir::Strategy> shape_strategy);

}  // namespace ecjit::jit
