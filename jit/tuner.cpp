// Tuner: time candidate kernels on L2-sized shards, keep the fastest, remember the choice.
#include "jit/tuner.h"

#include "jit/kernel_timing.h"

#include <cstdio>
#include <algorithm>

#include "ir_builders/lowering.h"
#include "llvm/IR/LLVMContext.h"

namespace ecjit::jit {
namespace {

// How much faster than the static choice a candidate must be to replace it (and an
// unrolled kernel than the winner's one-vector loop).
constexpr double kMargin = 1.05;
// Unroll depths tried for the winning strategy, while its loop body (nonzero coefficients
// times depth) stays within kMaxUnrolledTerms, which bounds code size and compile time. What
// a depth buys depends on the shards' layout (Bench): on page-aligned shards Zen 4 runs
// RS(4,2) gfni at 60 GB/s one vector per step and 74 unrolled 4x, RS(10,4) AVX2 split tables
// 14.1 -> 15.9 unrolled 2x; on staggered shards the depths tie or lose (17.7 -> 16.6).
constexpr unsigned kUnrollDepths[] = {2, 4};
constexpr uint64_t kMaxUnrolledTerms = 96;

struct Candidate : TimedKernel {
  ir::Strategy strategy = ir::Strategy::kAuto;
  unsigned unroll = 1;
  std::unique_ptr<CompiledKernel> kernel;  // null for the given candidate
  bool from_disk = false;
};

// A candidate's name, "gfni" or "gfni unroll=4": in the why texts, and the first line of
// a tuning record (parse_label reads it back).
std::string label(ir::Strategy s, unsigned unroll) {
  std::string out = ir::strategy_name(s);
  if (unroll > 1) out += " unroll=" + std::to_string(unroll);
  return out;
}

// "name 12.34 GB/s, name 5.67 GB/s"
std::string rates(const std::vector<Candidate *> &cands) {
  std::string out;
  for (const Candidate *c : cands) {
    char buf[32];
    snprintf(buf, sizeof buf, " %.2f GB/s", c->best / 1e9);
    out += (out.empty() ? "" : ", ") + label(c->strategy, c->unroll) + buf;
  }
  return out;
}

// The same candidates as values, for KernelDecision::candidates.
void measure(const std::vector<Candidate *> &cands, std::vector<MeasuredCandidate> *out) {
  for (const Candidate *c : cands)
    if (std::none_of(out->begin(), out->end(), [&](const MeasuredCandidate &m) {
          return m.name == ir::strategy_name(c->strategy) && m.unroll == c->unroll;
        }))
      out->push_back(c->measured(ir::strategy_name(c->strategy), c->unroll));
}

// Nonzero coefficients of both stages: the terms one step of the main loop computes.
uint64_t loop_terms(const ir::KernelDesc &desc) {
  uint64_t n = 0;
  for (uint64_t c : desc.coeffs.a) n += c != 0;
  for (uint64_t c : desc.pre.a) n += c != 0;
  return n;
}

bool parse_label(const std::string &head, ir::Strategy *s, unsigned *unroll) {
  const size_t sp = head.find(' ');
  auto parsed = ir::parse_strategy(head.substr(0, sp));
  if (!parsed || *parsed == ir::Strategy::kAuto) return false;
  *s = *parsed;
  *unroll = 1;
  if (sp == std::string::npos) return true;
  const std::string rest = head.substr(sp + 1);
  if (rest.size() != 8 || rest.compare(0, 7, "unroll=") != 0 || rest[7] < '1' || rest[7] > '8')
    return false;
  *unroll = unsigned(rest[7] - '0');
  return true;
}

}  // namespace

std::string tuning_record_key(const CompileRequest &req) {
  CompileRequest r = req;
  r.strategy = ir::Strategy::kClmulShift;  // a fixed stand-in: the key must not depend on the choice
  r.unroll = 1;
  return kernel_cache_key(r) + "|tuning";
}

std::optional<TuningRecord> load_tuning_record(const DiskCache *disk, const std::string &key) {
  if (!disk) return std::nullopt;
  const std::optional<std::string> text = disk->load_text(key);
  if (!text) return std::nullopt;
  const size_t nl = text->find('\n');
  return TuningRecord{text->substr(0, nl), nl == std::string::npos ? std::string() : text->substr(nl + 1)};
}

void store_tuning_record(const DiskCache *disk, const std::string &key, const TuningRecord &record) {
  if (disk) disk->store_text(key, record.choice + "\n" + record.why);
}

std::vector<ir::Strategy> candidate_strategies(const ir::TargetInfo &target, unsigned field_bits) {
  std::vector<ir::Strategy> out;
  auto field = codes::Field::make(field_bits);
  if (!field.ok()) return out;
  for (const std::string &name : ir::known_strategies()) {
    auto s = ir::parse_strategy(name);
    if (!s || *s == ir::Strategy::kAuto) continue;
    auto lowering = ir::make_lowering(*s, *field, target);
    if (lowering) out.push_back(*s);
    else llvm::consumeError(lowering.takeError());
  }
  return out;
}

std::optional<TuneResult> recorded_kernel(JitSession &session, const CompileRequest &req,
                                          const DiskCache *disk) {
  const std::optional<TuningRecord> record = load_tuning_record(disk, tuning_record_key(req));
  TuneResult result;
  if (!record || !parse_label(record->choice, &result.choice.strategy, &result.choice.unroll)) return std::nullopt;
  CompileRequest r = req;
  r.strategy = result.choice.strategy;
  r.unroll = result.choice.unroll;
  auto k = jit_kernel(session, r, nullptr, disk, &result.from_disk);
  if (!k) {
    llvm::consumeError(k.takeError());  // the caller tunes again
    return std::nullopt;
  }
  result.kernel = std::move(*k);
  result.choice.source = DecisionSource::kRecorded;
  result.choice.why = "recorded: " + record->why;
  result.kernel->describe(result.choice);
  return result;
}

llvm::Expected<TuneResult> tune_kernel(JitSession &session, const CompileRequest &req,
                                       const DiskCache *disk, const TuneOptions &options) {
  if (std::optional<TuneResult> recorded = recorded_kernel(session, req, disk))
    return std::move(*recorded);
  auto canceled = [&] { return options.cancel && options.cancel->load(std::memory_order_relaxed); };
  llvm::Error errors = llvm::Error::success();
  // Stopping early drops the compile errors gathered so far.
  auto stop = [&errors] {
    llvm::consumeError(std::move(errors));
    return llvm::createStringError(std::errc::operation_canceled, "tuning canceled");
  };
  const std::vector<ir::Strategy> strategies = candidate_strategies(req.target, req.desc.field.bits());
  const unsigned inputs = req.desc.inputs(), outputs = req.desc.coeffs.rows;
  const unsigned sb = req.desc.field.bytes();
  // L2-sized working set: at most 64 KiB per shard, 256 KiB over all shards.
  size_t len = std::min<size_t>(64 * 1024, (256 * 1024) / std::max(1u, inputs + outputs));
  len = std::max<size_t>(len / 64 * 64, 64) / sb * sb;
  auto compile = [&](ir::Strategy s, unsigned unroll, std::vector<Candidate> *into) {
    Candidate c;
    c.strategy = s;
    c.unroll = unroll;
    CompileRequest r = req;
    r.strategy = s;
    r.unroll = unroll;
    auto k = jit_kernel(session, r, nullptr, disk, &c.from_disk);
    if (!k) {
      errors = llvm::joinErrors(std::move(errors), k.takeError());
      return;
    }
    c.kernel = std::move(*k);
    c.address = c.kernel->address();
    into->push_back(std::move(c));
  };
  TimingBench bench(inputs, outputs, len);
  if (!bench.ok()) {
    llvm::consumeError(std::move(errors));
    return llvm::createStringError(std::errc::not_enough_memory,
                                   "tuning: no memory for %u shards of %zu bytes",
                                   inputs + outputs, len);
  }
  // Times `cands` in turns and scores them (Candidate::best); false when canceled.
  auto time = [&](const std::vector<Candidate *> &cands) {
    return time_in_turns(bench, std::vector<TimedKernel *>(cands.begin(), cands.end()), len, options.budget_ms,
                         options.cancel);
  };

  // Phase 1: every strategy, one vector per step.
  std::vector<Candidate> compiled;
  for (ir::Strategy s : strategies) {
    if (canceled()) return stop();
    if (s == options.given_strategy && options.given_address) {
      Candidate c;
      c.strategy = s;
      c.address = options.given_address;
      compiled.push_back(std::move(c));
      continue;
    }
    compile(s, 1, &compiled);
  }
  std::vector<Candidate *> phase1;
  for (Candidate &c : compiled) phase1.push_back(&c);
  if (!time(phase1)) return stop();
  Candidate *winner = nullptr;
  for (Candidate *c : phase1)
    if (!winner || c->best > winner->best) winner = c;
  std::string why = rates(phase1);
  std::vector<MeasuredCandidate> measured;
  measure(phase1, &measured);
  // The static choice (the kernel serving calls meanwhile, else what "auto" resolves to)
  // stays unless another candidate beats it by kMargin: the timing runs on L2-sized shards,
  // and a near tie there (GF(2^16) split-table vs clmul-shift on Zen 3: 6.25 vs 6.30 GB/s)
  // can turn into a 1.5x loss at 64 KiB shards, where the value-independent lowerings keep up.
  const ir::Strategy incumbent = options.given_strategy != ir::Strategy::kAuto
                                     ? options.given_strategy
                                     : resolve_strategy(ir::Strategy::kAuto, req.target,
                                                        req.desc.field.bits());
  auto stays = std::find_if(compiled.begin(), compiled.end(),
                            [&](const Candidate &c) { return c.strategy == incumbent; });
  if (winner && stays != compiled.end() && &*stays != winner && winner->best < stays->best * kMargin) {
    winner = &*stays;
    why += " (within " + std::to_string(int((kMargin - 1) * 100 + 0.5)) + "%: the static choice stays)";
  }
  if (!winner) {
    if (errors) return std::move(errors);
    return llvm::createStringError(std::errc::not_supported, "no strategy can lower this kernel");
  }
  why = std::string(ir::strategy_name(winner->strategy)) + " fastest of: " + why;

  // Phase 2: the winner unrolled, for short loop bodies; a depth must beat one vector per
  // step by kMargin. Timed afresh against the winner, in turns.
  std::vector<Candidate> unrolled;
  const uint64_t terms = loop_terms(req.desc);
  for (unsigned u : kUnrollDepths) {
    if (terms * u > kMaxUnrolledTerms) break;
    if (canceled()) return stop();
    compile(winner->strategy, u, &unrolled);
  }
  if (!unrolled.empty()) {
    std::vector<Candidate *> phase2{winner};
    for (Candidate &c : unrolled) phase2.push_back(&c);
    if (!time(phase2)) return stop();
    measure(phase2, &measured);
    Candidate *deepest = winner;
    for (Candidate &c : unrolled)
      if (c.best > deepest->best) deepest = &c;
    if (deepest->best >= winner->best * kMargin) {
      why += "; " + label(deepest->strategy, deepest->unroll) + " fastest of: " + rates(phase2);
      winner = deepest;
    } else {
      why += "; unrolled: " + rates(phase2) + " (within " +
             std::to_string(int((kMargin - 1) * 100 + 0.5)) + "%: one vector per step stays)";
    }
  }
  llvm::consumeError(std::move(errors));
  TuneResult result;
  result.kernel = std::move(winner->kernel);
  result.from_disk = winner->from_disk;
  result.choice = {winner->strategy, winner->unroll,
                   why + " (" + std::to_string(inputs + outputs) + " shards x " + std::to_string(len) + " B)",
                   DecisionSource::kTuned, std::move(measured)};
  if (result.kernel) result.kernel->describe(result.choice);
  store_tuning_record(disk, tuning_record_key(req), {label(winner->strategy, winner->unroll), result.choice.why});
  return std::move(result);
}

}  // namespace ecjit::jit
