// Tuner: compiles every applicable strategy for a kernel, times each, keeps the fastest.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

struct TuneResult {
  // The winner; null when the candidate handed in as TuneOptions::given won (reuse it).
  std::unique_ptr<CompiledKernel> kernel;
  // The decision: the winner's strategy and unroll depth (vectors per input in one step of its
  // main loop), kTuned or kRecorded (the disk cache's tuning record), every candidate timed
  // with its rate (none for a recorded decision) and one line on it, e.g. "split-table fastest
  // of: split-table 15.1 GB/s, clmul-shift 5.2 GB/s (14 shards x 16384 B)" or "recorded: ...".
  KernelChoice choice;
  bool from_disk = false;  // the winner's object came from the disk cache
  bool from_record() const { return choice.source == DecisionSource::kRecorded; }
};

struct TuneOptions {
  // Timing per candidate, in milliseconds (split into rounds, after a warm-up).
  double budget_ms = 5.0;
  // A candidate compiled already (the kernel serving calls while the tuner runs): timed
  // like the others but not compiled again. kAuto / null = none.
  ir::Strategy given_strategy = ir::Strategy::kAuto;
  void *given_address = nullptr;
  // When set and true, tuning stops at the next compile or timing slice with an error
  // (a Jit being destroyed does not wait for a whole tuning run).
  const std::atomic<bool> *cancel = nullptr;
};

// The kernel of a tuning decision recorded in the disk cache for `req` (req.strategy must be
// kAuto), compiled or loaded with the recorded strategy; nullopt when there is no valid
// record (none, unreadable, or its kernel fails to build).
std::optional<TuneResult> recorded_kernel(JitSession &session, const CompileRequest &req,
                                          const DiskCache *disk);

// Picks the strategy for `req` (req.strategy must be kAuto, req.desc a plain overwrite
// kernel: out = coeffs * in). With a disk cache holding a tuning record for this kernel
// the recorded strategy is compiled (or loaded) directly. Otherwise each strategy that can
// lower this field on this target is JIT-compiled (except options.given_strategy, whose
// kernel is handed in), run on L2-sized shards for about `budget_ms` each after a warm-up,
// and the fastest by bytes per second wins - unless it is within 5% of the static choice
// (options.given_strategy, else resolve_strategy(kAuto)), which then stays. When the
// kernel's loop body is short (at most 48 nonzero coefficients), the winner is then
// compiled with its main loop unrolled 2x (and 4x, up to 24 coefficients) and timed against
// itself; a depth at least 5% faster replaces it. Each candidate is timed on page-aligned
// shards (O_DIRECT / mmap buffers) and on shards at staggered page offsets (heap buffers)
// and scored by the harmonic mean of the two rates. The decision is recorded on disk. Output never depends on the choice: every candidate is the same
// linear map. Errors: only when no candidate compiles, the timing buffers cannot be
// allocated, or options.cancel is raised.
llvm::Expected<TuneResult> tune_kernel(JitSession &session, const CompileRequest &req,
                                       const DiskCache *disk,
                                       const TuneOptions &options = TuneOptions());

// The disk-cache key of `req`'s tuning record (the same for every strategy and unroll depth
// of req). The record's text: "<strategy>[ unroll=<2..8>]\n<why>"; recorded_kernel ignores
// one it cannot parse.
std::string tuning_record_key(const CompileRequest &req);

// A tuning decision as the disk cache keeps it (text under a record key): the choice, its
// first line, and why, the rest. load: nullopt without a disk or a record; store: nothing
// without a disk.
struct TuningRecord {
  std::string choice, why;
};
std::optional<TuningRecord> load_tuning_record(const DiskCache *disk, const std::string &key);
void store_tuning_record(const DiskCache *disk, const std::string &key, const TuningRecord &record);

// The strategies that can serve a field on a target (clmul-shift always).
std::vector<ir::Strategy> candidate_strategies(const ir::TargetInfo &target, unsigned field_bits);

}  // namespace ecjit::jit
