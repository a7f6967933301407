// xor_planner: bit-matrices of a code's operations, their schedules and packet maps.
#include "jit/xor_planner.h"

#include <algorithm>

#include "ir_builders/kernel_builder.h"

namespace ecjit::jit {
namespace {

std::string join(const std::vector<unsigned> &v) {
  std::string s;
  for (unsigned x : v) s += (s.empty() ? "" : "_") + std::to_string(x);
  return s;
}

// The columns of the data shards `shards` of M, as a matrix over their packets only.
codes::BitMatrix columns_of(const codes::BitMatrix &M, const std::vector<unsigned> &shards, unsigned w) {
  codes::BitMatrix S(M.rows, unsigned(shards.size()) * w);
  for (unsigned r = 0; r < M.rows; ++r)
    for (size_t i = 0; i < shards.size(); ++i)
      for (unsigned x = 0; x < w; ++x)
        if (M.get(r, shards[i] * w + x)) S.set(r, unsigned(i) * w + x);
  return S;
}

void finish(XorPlan *p, const codes::BitMatrixCode &code, const std::string &target_name) {
  p->desc.w = code.w;
  p->desc.packet = code.packet;
  p->desc.symbol = ir::kernel_symbol(p->op, code.spec.to_string(), target_name);
}

}  // namespace

Status apply_schedule(XorPlan *p, codes::XorSchedule s) {
  p->schedule = s;
  p->desc.program = codes::make_schedule(p->map, s);
  return codes::check_program(p->desc.program, p->map);
}

Result<XorPlan> with_best_schedule(XorPlan plan) {
  codes::XorSchedule chosen = codes::XorSchedule::kSmart;
  Result<codes::XorProgram> best = codes::best_schedule(plan.map, &chosen);
  if (!best.ok()) return best.status();
  plan.desc.program = std::move(*best);
  plan.schedule = chosen;
  return plan;
}

Result<XorPlan> xor_encoder_plan(const codes::BitMatrixCode &code, const std::string &target_name) {
  XorPlan p;
  p.op = "encode";
  p.map = code.parity;
  for (unsigned j = 0; j < code.k; ++j)
    for (unsigned x = 0; x < code.w; ++x) p.desc.inputs.push_back({j, x});
  for (unsigned i = 0; i < code.m; ++i)
    for (unsigned x = 0; x < code.w; ++x) p.desc.outputs.push_back({i, x});
  finish(&p, code, target_name);
  Result<codes::XorProgram> best = codes::best_schedule(p.map, &p.schedule);
  if (!best.ok()) return best.status();
  p.desc.program = std::move(*best);
  return p;
}

Result<XorPlan> xor_decoder_plan(const codes::BitMatrixCode &code, const std::vector<bool> &present,
                                 const std::vector<unsigned> &targets, const std::string &target_name,
                                 bool best) {
  Result<codes::BitDecodePlan> plan = codes::plan_bitmatrix_decode(code, present, targets);
  if (!plan.ok()) return plan.status();
  XorPlan p;
  p.map = std::move(plan->map);
  p.sources = plan->source_shards;
  for (const codes::PacketRef &r : plan->sources) {
    const unsigned slot = unsigned(std::lower_bound(p.sources.begin(), p.sources.end(), r.shard) - p.sources.begin());
    p.desc.inputs.push_back({slot, r.index});
  }
  for (unsigned t = 0; t < targets.size(); ++t)
    for (unsigned x = 0; x < code.w; ++x) p.desc.outputs.push_back({t, x});
  p.op = "decode_t" + join(targets) + "_s" + join(p.sources);
  finish(&p, code, target_name);
  ECJIT_RETURN_IF_ERROR(apply_schedule(&p, codes::XorSchedule::kSmart));
  return best ? with_best_schedule(std::move(p)) : Result<XorPlan>(std::move(p));
}

Result<XorPlan> xor_update_plan(const codes::BitMatrixCode &code, const std::vector<unsigned> &changed,
                                const std::string &target_name) {
  const unsigned c = unsigned(changed.size()), w = code.w, cw = c * w;
  const codes::BitMatrix M = columns_of(code.parity, changed, w);
  codes::XorProgram sched = codes::make_schedule(M, codes::XorSchedule::kSmart);
  ECJIT_RETURN_IF_ERROR(codes::check_program(sched, M));
  XorPlan p;
  p.op = "update_" + join(changed);
  p.desc.accumulate = true;
  // Inputs: old packets (pointers 0..c-1), new packets (c..2c-1); ops 0..cw-1 form the
  // deltas (values 2cw..3cw-1), then the schedule of M runs on them.
  codes::XorProgram &prog = p.desc.program;
  prog.inputs = 2 * cw;
  for (unsigned i = 0; i < cw; ++i) prog.ops.push_back({i, cw + i});
  auto remap = [&](uint32_t v) -> uint32_t {
    if (v == codes::XorProgram::kZero) return v;
    return v < cw ? 2 * cw + v : 3 * cw + (v - cw);
  };
  for (const auto &o : sched.ops) prog.ops.push_back({remap(o.a), remap(o.b)});
  for (uint32_t v : sched.outputs) prog.outputs.push_back(remap(v));
  for (unsigned half = 0; half < 2; ++half)
    for (unsigned i = 0; i < c; ++i)
      for (unsigned x = 0; x < w; ++x) p.desc.inputs.push_back({half * c + i, x});
  for (unsigned i = 0; i < code.m; ++i)
    for (unsigned x = 0; x < w; ++x) p.desc.outputs.push_back({i, x});
  p.map = codes::BitMatrix(M.rows, 2 * cw);  // over [old; new]
  for (unsigned r = 0; r < M.rows; ++r)
    for (unsigned col = 0; col < cw; ++col)
      if (M.get(r, col)) {
        p.map.set(r, col);
        p.map.set(r, cw + col);
      }
  ECJIT_RETURN_IF_ERROR(codes::check_program(prog, p.map));
  finish(&p, code, target_name);
  return p;
}

Result<XorPlan> xor_partial_plan(const codes::BitMatrixCode &code, unsigned data_index,
                                 const std::string &target_name) {
  XorPlan p;
  p.op = "partial_d" + std::to_string(data_index);
  p.map = columns_of(code.parity, {data_index}, code.w);
  p.desc.accumulate = true;
  for (unsigned x = 0; x < code.w; ++x) p.desc.inputs.push_back({0, x});
  for (unsigned i = 0; i < code.m; ++i)
    for (unsigned x = 0; x < code.w; ++x) p.desc.outputs.push_back({i, x});
  finish(&p, code, target_name);
  ECJIT_RETURN_IF_ERROR(apply_schedule(&p, codes::XorSchedule::kSmart));
  return p;
}

}  // namespace ecjit::jit
