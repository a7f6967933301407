// plan_decoder: codes::plan_decode under the lowering's cost model, then the kernel request and its name.
#include "jit/decoder_planner.h"

#include "ir_builders/kernel_builder.h"
#include "ir_builders/lowering.h"

namespace ecjit::jit {

std::string decoder_op(const std::vector<unsigned> &targets, const std::vector<unsigned> &sources) {
  std::string op = "decode_t";
  for (size_t i = 0; i < targets.size(); ++i) op += (i ? "_" : "") + std::to_string(targets[i]);
  op += "_s";
  for (size_t i = 0; i < sources.size(); ++i) op += (i ? "_" : "") + std::to_string(sources[i]);
  return op;
}

Result<DecoderPlan> plan_decoder(const codes::LinearCode &code, const std::vector<bool> &present,
                                 const std::vector<unsigned> &wanted, const ir::TargetInfo &target,
                                 const std::string &target_name, ir::Strategy strategy, DecoderUse use,
                                 OptLevel opt, bool two_stage) {
  const ir::Strategy resolved = resolve_strategy(strategy, target, code.field.bits());
  auto plan = codes::plan_decode(code, present, wanted,
                                 two_stage ? ir::strategy_cost_model(resolved, code.field)
                                           : codes::CostModel::kNoSearch,
                                 two_stage);
  if (!plan.ok()) return plan.status();
  DecoderPlan d{std::move(*plan), "", CompileRequest{ir::KernelDesc{code.field, codes::Matrix(), ""},
                                                     target, resolved, opt}};
  d.op = decoder_op(d.plan.targets, d.plan.sources);
  d.request.desc.symbol = ir::kernel_symbol(d.op, code.spec.to_string(), target_name);
  d.request.desc.whole_vectors = use == DecoderUse::kPromoted;
  // A compile per erasure set is paid on the way to a caller: LLVM's schedulers cost half of
  // its code generation and did not change a decoder's speed (docs/performance.md).
  if (use != DecoderUse::kAheadOfTime) d.request.codegen = Codegen::kNoSchedulers;
  if (d.plan.factored()) {
    d.request.desc.coeffs = d.plan.post;
    d.request.desc.pre = d.plan.pre;
  } else {
    d.request.desc.coeffs = d.plan.coeffs;
  }
  return d;
}

bool shape_kernels_serve(const codes::LinearCode &code, std::optional<ir::Strategy> shape_strategy) {
  return shape_strategy && code.k >= 1 && code.k <= kMaxShapeInputs && code.m > 0;
}

}  // namespace ecjit::jit
