// Tuner: compiles every applicable strategy for a kernel, times each, keeps the fastest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

struct TuneResult {
  std::unique_ptr<CompiledKernel> kernel;  // the winner (null when from_record and caller recompiles)
  ir::Strategy strategy = ir::Strategy::kClmulShift;
  // One line on the decision, e.g. "split-table 15.1 GB/s > clmul-shift 5.2 GB/s
  // (64 KiB x 14 shards, 2 ms each)" or "recorded: ...".
  std::string why;
  bool from_record = false;  // the decision came from the disk cache's tuning record
  bool from_disk = false;    // the winner's object came from the disk cache
};

// Picks the strategy for `req` (req.strategy must be kAuto, req.desc a plain overwrite
// kernel: out = coeffs * in). With a disk cache holding a tuning record for this kernel
// the recorded strategy is compiled (or loaded) directly. Otherwise each strategy that can
// lower this field on this target is JIT-compiled, run on L2-sized shards for about
// `budget_ms` each after a warm-up, and the fastest by bytes per second wins; the decision
// is recorded on disk. Output never depends on the choice: every candidate is the same
// linear map. Errors: only when no candidate compiles.
llvm::Expected<TuneResult> tune_kernel(JitSession &session, const CompileRequest &req,
                                       const DiskCache *disk, double budget_ms = 5.0);

// The strategies that can serve a field on a target (clmul-shift always).
std::vector<ir::Strategy> candidate_strategies(const ir::TargetInfo &target, unsigned field_bits);

}  // namespace ecjit::jit
