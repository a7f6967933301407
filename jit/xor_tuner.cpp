// xor_tuner: schedules of one bit-matrix kernel compiled, timed in turns, the fastest kept.
#include "jit/xor_tuner.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "jit/kernel_timing.h"

namespace ecjit::jit {
namespace {

// Set bits of a map past which matching schedules are not built (codes::best_schedule's rule:
// matching recounts every pair of every row per round and takes seconds past it).
constexpr size_t kMaxMatchingOnes = 8192;
// How much faster than the incumbent another schedule must run to replace it.
constexpr double kMargin = 1.05;

struct Candidate : TimedKernel {
  XorPlan plan;
  std::unique_ptr<CompiledKernel> kernel;
  bool from_disk = false;
};

std::string rates(const std::vector<Candidate *> &cands) {
  std::string out;
  for (const Candidate *c : cands) {
    char buf[64];
    snprintf(buf, sizeof buf, " %.2f GB/s (%zu XORs)", c->best / 1e9, c->plan.desc.program.xors());
    out += (out.empty() ? "" : ", ") + std::string(codes::schedule_name(c->plan.schedule)) + buf;
  }
  return out;
}

bool same_program(const codes::XorProgram &a, const codes::XorProgram &b) {
  return a.inputs == b.inputs && a.ops == b.ops && a.outputs == b.outputs;
}

llvm::Expected<std::unique_ptr<CompiledKernel>> compile(JitSession &session, const XorPlan &plan,
                                                        const ir::TargetInfo &target, OptLevel opt,
                                                        const DiskCache *disk, bool *from_disk) {
  return jit_kernel(session, xor_compile_request(plan.desc, target, opt), nullptr, disk, from_disk);
}

}  // namespace

std::string xor_tuning_record_key(const XorPlan &plan, const ir::TargetInfo &target, OptLevel opt) {
  XorPlan keyed = plan;
  keyed.desc.program = codes::XorProgram();  // the key must not depend on the choice
  std::string k = kernel_cache_key(xor_compile_request(keyed.desc, target, opt)) + "|map" +
                  std::to_string(plan.map.rows) + "x" + std::to_string(plan.map.cols) + ":";
  for (unsigned r = 0; r < plan.map.rows; ++r) {
    uint64_t word = 0;
    for (unsigned c = 0; c < plan.map.cols; ++c) {
      word = word << 1 | uint64_t(plan.map.get(r, c));
      if (c % 64 == 63 || c + 1 == plan.map.cols) {
        k += std::to_string(word) + ".";
        word = 0;
      }
    }
    k += ",";
  }
  return k + "|xor-schedule";
}

std::optional<XorPlan> recorded_xor_plan(const XorPlan &plan, const ir::TargetInfo &target, OptLevel opt,
                                         const DiskCache *disk, std::string *why) {
  const std::optional<TuningRecord> record = load_tuning_record(disk, xor_tuning_record_key(plan, target, opt));
  codes::XorSchedule s;
  if (!record || !codes::parse_schedule(record->choice, &s)) return std::nullopt;
  if (s != codes::XorSchedule::kSmart && plan.map.ones() > kMaxMatchingOnes) return std::nullopt;
  XorPlan chosen = plan;
  if (s != plan.schedule && !apply_schedule(&chosen, s).ok()) return std::nullopt;
  if (why) *why = record->why;
  return chosen;
}

std::optional<XorTuneResult> recorded_xor_kernel(JitSession &session, const XorPlan &plan,
                                                 const ir::TargetInfo &target, OptLevel opt, const DiskCache *disk,
                                                 bool given) {
  XorTuneResult result;
  std::optional<XorPlan> chosen = recorded_xor_plan(plan, target, opt, disk, &result.why);
  if (!chosen) return std::nullopt;
  result.plan = std::move(*chosen);
  if (!given || !same_program(result.plan.desc.program, plan.desc.program)) {
    auto k = compile(session, result.plan, target, opt, disk, &result.from_disk);
    if (!k) {
      llvm::consumeError(k.takeError());  // the caller tunes again
      return std::nullopt;
    }
    result.kernel = std::move(*k);
  }
  result.source = DecisionSource::kRecorded;
  result.why = "recorded: " + result.why;
  return result;
}

llvm::Expected<XorTuneResult> tune_xor_kernel(JitSession &session, const XorPlan &plan, const ir::TargetInfo &target,
                                              OptLevel opt, const DiskCache *disk, const TuneOptions &options) {
  const bool given = options.given_address != nullptr;
  if (std::optional<XorTuneResult> recorded = recorded_xor_kernel(session, plan, target, opt, disk, given))
    return std::move(*recorded);
  auto canceled = [&] { return options.cancel && options.cancel->load(std::memory_order_relaxed); };
  auto stop = [] { return llvm::createStringError(std::errc::operation_canceled, "tuning canceled"); };
  // The incumbent first; then each other schedule whose program differs from all so far.
  std::vector<Candidate> cands(1);
  cands[0].plan = plan;
  const bool match = plan.map.ones() <= kMaxMatchingOnes;
  for (codes::XorSchedule s : {codes::XorSchedule::kSmart, codes::XorSchedule::kUniformMatching,
                               codes::XorSchedule::kWeightedMatching}) {
    if (s == plan.schedule || (s != codes::XorSchedule::kSmart && !match)) continue;
    Candidate c;
    c.plan = plan;
    if (!apply_schedule(&c.plan, s).ok()) continue;  // check_program failed: never compiled
    if (std::any_of(cands.begin(), cands.end(),
                    [&](const Candidate &o) { return same_program(o.plan.desc.program, c.plan.desc.program); }))
      continue;
    cands.push_back(std::move(c));
  }
  std::vector<Candidate *> compiled;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (canceled()) return stop();
    if (i == 0 && given) {  // the incumbent, serving calls already: timed, not compiled again
      cands[0].address = options.given_address;
      compiled.push_back(&cands[0]);
      continue;
    }
    auto k = compile(session, cands[i].plan, target, opt, disk, &cands[i].from_disk);
    if (!k) {
      if (i == 0) return k.takeError();  // the incumbent must compile
      llvm::consumeError(k.takeError());
      continue;
    }
    cands[i].kernel = std::move(*k);
    cands[i].address = cands[i].kernel->address();
    compiled.push_back(&cands[i]);
  }
  // L2-sized shards of whole blocks: at most 64 KiB per shard, 256 KiB over all of them.
  const XorPlan &p0 = cands[0].plan;
  const unsigned inputs = p0.desc.in_pointers(), outputs = p0.desc.out_pointers();
  const size_t block = size_t(p0.desc.w) * p0.desc.packet;
  const size_t len = std::max<size_t>(1, std::min<size_t>(64 * 1024, (256 * 1024) / (inputs + outputs)) / block) * block;
  XorTuneResult result;
  Candidate *winner = compiled.front();
  if (compiled.size() > 1) {
    TimingBench bench(inputs, outputs, len);
    if (!bench.ok())
      return llvm::createStringError(std::errc::not_enough_memory, "xor tuning: no memory for %u shards of %zu bytes",
                                     inputs + outputs, len);
    if (!time_in_turns(bench, std::vector<TimedKernel *>(compiled.begin(), compiled.end()), len, options.budget_ms,
                       options.cancel))
      return stop();
    for (Candidate *c : compiled)
      if (c->best > winner->best) winner = c;
    std::string why = rates(compiled);
    for (const Candidate *c : compiled)
      result.candidates.push_back(c->measured(codes::schedule_name(c->plan.schedule)));
    if (winner != compiled.front() && winner->best < compiled.front()->best * kMargin) {
      winner = compiled.front();
      why += " (within " + std::to_string(int((kMargin - 1) * 100 + 0.5)) + "%: the fewest XORs stay)";
    }
    result.why = std::string(codes::schedule_name(winner->plan.schedule)) + " fastest of: " + why + " (" +
                 std::to_string(inputs + outputs) + " shards x " + std::to_string(len) + " B)";
  } else {
    result.why = std::string(codes::schedule_name(winner->plan.schedule)) + ": the only distinct schedule";
    result.source = DecisionSource::kStatic;
  }
  result.kernel = std::move(winner->kernel);
  result.plan = std::move(winner->plan);
  result.from_disk = winner->from_disk;
  store_tuning_record(disk, xor_tuning_record_key(plan, target, opt),
                      {codes::schedule_name(result.plan.schedule), result.why});
  return std::move(result);
}

}  // namespace ecjit::jit
