// xor_packet_tuner: one encoder per candidate packet compiled, timed in turns, the fastest recorded.
#include "jit/xor_packet_tuner.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "jit/kernel_timing.h"
#include "jit/xor_planner.h"

namespace ecjit::jit {
namespace {

struct Candidate : TimedKernel {
  unsigned packet = 0;
  std::unique_ptr<CompiledKernel> kernel;
};

// The record key: the code (packet=auto) and the kernel key of its encoder at the default
// packet (target, CPU features, opt level), never the choice.
std::string record_key(const CodeSpec &spec, const XorPlan &reference, const ir::TargetInfo &target, OptLevel opt) {
  CodeSpec s = spec;
  s.packet = kDefaultPacket;
  s.packet_auto = true;
  return kernel_cache_key(xor_compile_request(reference.desc, target, opt)) + "|" + s.to_string() + "|xor-packet";
}

llvm::Error spec_error(const Status &st) {
  return llvm::createStringError(std::errc::invalid_argument, "%s", st.message().c_str());
}

}  // namespace

llvm::Expected<XorPacketChoice> tune_xor_packet(JitSession &session, const CodeSpec &spec,
                                                const ir::TargetInfo &target, const std::string &target_name,
                                                OptLevel opt, const DiskCache *disk, const TuneOptions &options) {
  auto plan_at = [&](unsigned packet) -> Result<XorPlan> {
    CodeSpec s = spec;
    s.packet = packet;
    s.packet_auto = false;
    Result<codes::BitMatrixCode> code = codes::build_bitmatrix_code(s);
    if (!code.ok()) return code.status();
    return xor_encoder_plan(*code, target_name);
  };
  Result<XorPlan> reference = plan_at(kDefaultPacket);
  if (!reference.ok()) return spec_error(reference.status());
  const std::string key = record_key(spec, *reference, target, opt);
  if (const std::optional<TuningRecord> record = load_tuning_record(disk, key)) {
    unsigned p = 0;
    for (unsigned c : kXorPacketCandidates)
      if (record->choice == std::to_string(c)) p = c;
    if (p) return XorPacketChoice{p, "recorded: " + record->why, DecisionSource::kRecorded, {}};
  }
  if (reference->desc.program.xors() > kMaxPacketTunedXors)
    return XorPacketChoice{kDefaultPacket,
                           "packet " + std::to_string(kDefaultPacket) + ", the default: the encoder's " +
                               std::to_string(reference->desc.program.xors()) + " XORs per block position are past " +
                               std::to_string(kMaxPacketTunedXors) + " (each candidate would compile for seconds)",
                           DecisionSource::kStatic, {}};
  auto canceled = [&] { return options.cancel && options.cancel->load(std::memory_order_relaxed); };
  // Every candidate whose block is at most 64 KiB; shards of one length, whole blocks of all.
  const unsigned w = reference->desc.w;
  std::vector<Candidate> cands;
  for (unsigned p : kXorPacketCandidates)
    if (size_t(w) * p <= 65536) cands.emplace_back().packet = p;
  std::vector<TimedKernel *> compiled;
  size_t incumbent = SIZE_MAX;  // index of kDefaultPacket among the compiled
  for (Candidate &c : cands) {
    if (canceled()) return llvm::createStringError(std::errc::operation_canceled, "tuning canceled");
    Result<XorPlan> plan = plan_at(c.packet);
    if (!plan.ok()) continue;
    bool from_disk = false;
    auto k = jit_kernel(session, xor_compile_request(plan->desc, target, opt), nullptr, disk, &from_disk);
    if (!k) {
      llvm::consumeError(k.takeError());
      continue;
    }
    c.kernel = std::move(*k);
    c.address = c.kernel->address();
    if (c.packet == kDefaultPacket) incumbent = compiled.size();
    compiled.push_back(&c);
  }
  if (compiled.empty())
    return llvm::createStringError(std::errc::invalid_argument, "packet=auto: no candidate encoder compiled");
  const size_t block_all = size_t(w) * kXorPacketCandidates[std::size(kXorPacketCandidates) - 1];
  const size_t len = std::max<size_t>(1, 65536 / block_all) * block_all;
  const unsigned inputs = reference->desc.in_pointers(), outputs = reference->desc.out_pointers();
  TimingBench bench(inputs, outputs, len);
  if (!bench.ok())
    return llvm::createStringError(std::errc::not_enough_memory, "packet=auto: no memory for %u shards of %zu bytes",
                                   inputs + outputs, len);
  if (!time_in_turns(bench, compiled, len, options.budget_ms, options.cancel))
    return llvm::createStringError(std::errc::operation_canceled, "tuning canceled");
  const Candidate *winner = static_cast<const Candidate *>(compiled.front());
  for (TimedKernel *t : compiled)
    if (t->best > winner->best) winner = static_cast<const Candidate *>(t);
  XorPacketChoice choice;
  std::string rates;
  for (TimedKernel *t : compiled) {
    const unsigned packet = static_cast<const Candidate *>(t)->packet;
    choice.candidates.push_back(t->measured(std::to_string(packet)));
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%u B %.1f GB/s", rates.empty() ? "" : ", ", packet, t->best / 1e9);
    rates += buf;
  }
  std::string note;
  if (incumbent != SIZE_MAX && winner != compiled[incumbent] && winner->best < compiled[incumbent]->best * kPacketMargin) {
    winner = static_cast<const Candidate *>(compiled[incumbent]);
    note = " (within " + std::to_string(int((kPacketMargin - 1) * 100 + 0.5)) + "%: the default stays)";
  }
  choice.packet = winner->packet;
  choice.why = "packet " + std::to_string(winner->packet) + " fastest of: " + rates + note + " (" +
               std::to_string(inputs + outputs) + " shards x " + std::to_string(len) + " B)";
  store_tuning_record(disk, key, {std::to_string(choice.packet), choice.why});
  return choice;
}

}  // namespace ecjit::jit
