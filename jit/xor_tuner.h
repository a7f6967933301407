// xor_tuner: compiles a bit-matrix kernel under each schedule, times them, keeps the fastest, records the choice.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "codes/xor_schedule.h"
#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/tuner.h"
#include "jit/xor_planner.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

struct XorTuneResult {
  // Null when plan's own program won and was handed in (TuneOptions::given_address).
  std::unique_ptr<CompiledKernel> kernel;
  XorPlan plan;  // with the winner's schedule and program
  // One line on the decision, e.g. "um fastest of: smart 22.9 GB/s (779 XORs), um 45.9 GB/s
  // (425 XORs), wm 41.9 GB/s (429 XORs) (14 shards x 16384 B)", or "recorded: ...".
  std::string why;
  // Each schedule timed (name, rate); empty when one schedule was distinct or it was recorded.
  std::vector<MeasuredCandidate> candidates;
  // How the schedule was chosen: kTuned (timed now), kRecorded (the disk cache's record) or
  // kStatic (the only distinct schedule).
  DecisionSource source = DecisionSource::kTuned;
  bool from_disk = false;  // the winner's object came from the disk cache
  bool from_record() const { return source == DecisionSource::kRecorded; }
};

// The disk-cache key of the schedule record of `plan`'s kernel on `target` at `opt`: names
// its map, packets, block shape and target, not its program (the same for every schedule).
std::string xor_tuning_record_key(const XorPlan &plan, const ir::TargetInfo &target, OptLevel opt);

// `plan` with the schedule recorded for it (its program made and checked; no compile),
// `why` receiving the record's reason; nullopt without a valid record.
std::optional<XorPlan> recorded_xor_plan(const XorPlan &plan, const ir::TargetInfo &target, OptLevel opt,
                                         const DiskCache *disk, std::string *why = nullptr);

// The kernel of the schedule recorded for `plan` (compiled, or loaded from disk; none when
// the record names plan's own program and `given` says it is compiled already), nullopt
// without a valid record.
std::optional<XorTuneResult> recorded_xor_kernel(JitSession &session, const XorPlan &plan,
                                                 const ir::TargetInfo &target, OptLevel opt, const DiskCache *disk,
                                                 bool given = false);

// Picks the schedule of `plan`'s kernel by timing (the XOR count is a proxy: on Zen 5
// cauchy-good RS(10,4) w=8 runs its 425-XOR uniform matching at 45.9 GB/s and the 429-XOR
// weighted one at 41.9). With a record on disk, the recorded schedule directly. Otherwise
// the distinct programs of the smart, uniform-matching and weighted-matching schedules
// (matching only where codes::best_schedule would run it) are compiled, timed in turns on
// L2-sized shards of whole blocks (kernel_timing.h), and the fastest wins unless within 5%
// of plan's own program (the incumbent, codes::best_schedule's fewest XORs). Every program
// is checked against plan.map (check_program). options.given_address is plan's own program
// compiled already (the kernel serving calls meanwhile): timed, not compiled again, and
// result.kernel is null when it stays. The decision is recorded on disk. Errors:
// the incumbent does not compile, no memory for the timing buffers, options.cancel raised.
llvm::Expected<XorTuneResult> tune_xor_kernel(JitSession &session, const XorPlan &plan, const ir::TargetInfo &target,
                                              OptLevel opt, const DiskCache *disk,
                                              const TuneOptions &options = TuneOptions());

}  // namespace ecjit::jit
