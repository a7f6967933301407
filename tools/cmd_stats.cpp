// `ecjit stats`: XOR/shift/AND counts of a kernel in IR and machine code, .text size; --sweep redoes Nešković 2018, Fig. 5-4.
#include <cstdio>
#include <string>
#include <vector>

#include "ir_builders/ir_stats.h"
#include "ir_builders/kernel_builder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "tools/asm_counts.h"
#include "tools/commands.h"
#include "tools/kernel_request.h"
#include "tools/xor_table.h"

namespace ecjit::tools {
namespace {

const char kCmd[] = "stats";

CommandDef stats_def() {
  CommandDef d;
  d.name = kCmd;
  d.synopsis = "--spec S [--target T] [--strategy X] [--opt O] [--op encode|decode [--erased LIST]]\n"
               "       ecjit stats --sweep [--target T] [--strategy X] [--csv FILE]\n"
               "       ecjit stats --xor-table [--csv FILE]";
  d.summary = "count XOR, shift and AND instructions of a kernel in IR and machine code; code size";
  d.details =
      "Counts in the builder's raw IR, in the IR after the pipeline at --opt, and in the\n"
      "assembly for --target, both over the whole kernel and over its main vector loop (the\n"
      "IR blocks named vloop*; in assembly, the blocks LLVM's comments attribute to them).\n"
      "A vector instruction counts once. Machine shifts include adds of a register to itself\n"
      "(x + x = x << 1). Code size is the sum of the text sections of the object file.\n"
      "\n"
      "--sweep reproduces Nešković 2018, Figure 5-4 (ch. 5.3): RS(n, k = 3n/4) over GF(2^8)\n"
      "(spec rs-vand:k=K,m=N-K) for n = 4..64 step 4, main-loop counts: shifts in the IR at O0\n"
      "and at O3, XORs at O3, next to the text's estimates n*k*l/2 (unoptimized shifts) and\n"
      "7.7n (optimized shifts); prints a table and writes it as CSV. The sweep uses the\n"
      "lowering of Nešković 2018, clmul-shift, unless --strategy says otherwise.\n"
      "\n"
      "--xor-table counts the schedules of bit-matrix codes (no compile): Zhou and Tian 2019, Table 3\n"
      "(XOR + copy operations of Cauchy bit-matrices per (i, j) strategy) and Plank et al. 2009's XORs\n"
      "per coding word per family, each beside the paper's figure (docs/xor-codes.md).";
  d.options = kernel_options();
  d.options.push_back({"sweep", "", "run the Figure 5-4 sweep instead of one kernel"});
  d.options.push_back({"xor-table", "", "print the XOR-count tables of bit-matrix codes (Plank et al. 2009, "
                                        "Zhou and Tian 2019)"});
  d.options.push_back({"csv", "FILE", "with --sweep or --xor-table: CSV output file (--sweep default stats_sweep.csv)"});
  return d;
}

struct Counts {
  size_t xors = 0, shifts = 0, ands = 0, instructions = 0;
};

Counts from_ir(const ir::IrStats &s) { return {s.xors, s.shifts, s.ands, s.instructions}; }
Counts from_asm(const AsmCounts &s) { return {s.xors, s.shifts, s.ands, s.instructions}; }

void print_row(const std::string &what, const std::string &scope, const Counts &c) {
  std::printf("  %-26s %-13s %8zu %8zu %8zu %8zu\n", what.c_str(), scope.c_str(), c.xors, c.shifts,
              c.ands, c.instructions);
}

// IR counts (whole kernel, main loop) of the module built for `r` with or without the pipeline.
llvm::Expected<jit::BuiltModule> built(const KernelRequest &r, bool optimize_it,
                                       Counts *whole, Counts *loop) {
  auto b = jit::build_module(r.req, optimize_it);
  if (!b) return b.takeError();
  *whole = from_ir(ir::count_ir_ops(*b->module));
  *loop = from_ir(ir::count_ir_ops(*b->module, ir::kMainLoopBlock));
  return b;
}

int run_one(const Args &args) {
  std::string error;
  std::optional<KernelRequest> req = make_kernel_request(args, &error);
  if (!req) return usage_error(kCmd, error);
  const KernelRequest &r = *req;
  const std::string level = opt_level_name(r.req.opt);
  Counts raw_all, raw_loop, opt_all, opt_loop;
  auto raw = built(r, false, &raw_all, &raw_loop);
  if (!raw) return runtime_error(kCmd, describe(r) + ": " + error_message(raw.takeError()));
  auto opt = built(r, true, &opt_all, &opt_loop);
  if (!opt) return runtime_error(kCmd, describe(r) + ": " + error_message(opt.takeError()));
  auto text = assembly_of(r, *opt);
  if (!text) return runtime_error(kCmd, describe(r) + ": " + error_message(text.takeError()));
  auto object = jit::kernel_code(r.req, jit::EmitKind::kObject);
  if (!object) return runtime_error(kCmd, describe(r) + ": " + error_message(object.takeError()));
  auto bytes = text_section_bytes(*object);
  if (!bytes) return runtime_error(kCmd, "reading the object file: " + error_message(bytes.takeError()));

  const AsmFamily family = asm_family(r.req.target.triple);
  const AsmStats as = count_asm(*text, family, ir::kMainLoopBlock);
  if (r.req.fft_kernel)
    std::printf("%s\n  kernel %s\n\n", describe(r).c_str(), r.req.symbol().c_str());
  else if (r.req.xor_kernel)
    std::printf("%s\n  kernel %s, %zu output packets x %u input packets per block\n\n", describe(r).c_str(),
                r.req.symbol().c_str(), r.req.xor_kernel->outputs.size(), r.req.xor_kernel->program.inputs);
  else
    std::printf("%s\n  kernel %s, %u outputs x %u inputs\n\n", describe(r).c_str(),
                r.req.desc.symbol.c_str(), r.req.desc.coeffs.rows, r.req.desc.inputs());
  std::printf("  %-26s %-13s %8s %8s %8s %8s\n", "", "", "xor", "shift", "and", "all");
  print_row("IR raw (builder)", "main loop", raw_loop);
  print_row("", "whole kernel", raw_all);
  print_row("IR after " + level, "main loop", opt_loop);
  print_row("", "whole kernel", opt_all);
  const std::string mc = "machine code (" + std::string(asm_family_name(family)) + ", " + level + ")";
  if (as.loop_found)
    print_row(mc, "main loop", from_asm(as.loop));
  else
    std::printf("  %-26s %-13s (no block comment names the main loop)\n", mc.c_str(), "main loop");
  print_row(as.loop_found ? "" : mc, "whole kernel", from_asm(as.all));
  std::printf("\n  code size: %llu bytes of text in the %s object file\n",
              (unsigned long long)*bytes, r.req.target.triple.c_str());
  return 0;
}

struct SweepRow {
  unsigned n, k;
  size_t shifts_o0, shifts_o3, xors_o0, xors_o3, asm_shifts, asm_xors;
};

int run_sweep(const Args &args) {
  for (const char *o : {"spec", "op", "erased", "opt"})
    if (args.has(o))
      return usage_error(kCmd, std::string("--") + o + " does not apply to --sweep (it fixes the "
                                                       "codes and compares O0 with O3)");
  const std::string target = args.get("target", "host");
  const std::string csv_path = args.get("csv", "stats_sweep.csv");
  constexpr unsigned kL = 8;  // GF(2^8)
  std::vector<SweepRow> rows;
  std::printf("Figure 5-4: instructions in the main loop of RS(n, k = 3n/4) encoders over GF(2^8)\n"
              "(spec rs-vand, target %s, one vector instruction counts once)\n\n", target.c_str());
  std::printf("%4s %4s %4s %10s %10s %10s %10s %10s %10s %10s %10s\n", "n", "k", "m", "shift O0",
              "shift O3", "xor O0", "xor O3", "nkl/2", "7.7n", "asm shift", "asm xor");
  for (unsigned n = 4; n <= 64; n += 4) {
    const unsigned k = 3 * n / 4;
    const std::string spec = "rs-vand:k=" + std::to_string(k) + ",m=" + std::to_string(n - k) + ",gf=8";
    std::string error;
    std::optional<KernelRequest> q0 = make_encode_request(spec, target, jit::OptLevel::kO0, &error);
    if (!q0) return usage_error(kCmd, error);
    std::optional<KernelRequest> q3 = make_encode_request(spec, target, jit::OptLevel::kO3, &error);
    if (!q3) return usage_error(kCmd, error);
    KernelRequest &r0 = *q0, &r3 = *q3;
    // The figure is about Nešković 2018's lowering: clmul-shift unless asked otherwise.
    std::optional<ir::Strategy> s = ir::Strategy::kClmulShift;
    if (args.has("strategy")) s = ir::parse_strategy(args.get("strategy"));
    if (!s)
      return usage_error(kCmd, "unknown strategy '" + args.get("strategy") + "'; known: " +
                                   strategy_list());
    r0.req.strategy = r3.req.strategy = *s;
    r0.resolved_strategy = r3.resolved_strategy =
        jit::resolve_strategy(*s, r3.req.target, r3.code->field.bits());
    Counts all0, loop0, all3, loop3;
    auto b0 = built(r0, true, &all0, &loop0);
    if (!b0) return runtime_error(kCmd, describe(r0) + ": " + error_message(b0.takeError()));
    auto b3 = built(r3, true, &all3, &loop3);
    if (!b3) return runtime_error(kCmd, describe(r3) + ": " + error_message(b3.takeError()));
    auto text = assembly_of(r3, *b3);
    if (!text) return runtime_error(kCmd, describe(r3) + ": " + error_message(text.takeError()));
    const AsmStats as = count_asm(*text, asm_family(r3.req.target.triple), ir::kMainLoopBlock);
    const AsmCounts &mc = as.loop_found ? as.loop : as.all;
    rows.push_back({n, k, loop0.shifts, loop3.shifts, loop0.xors, loop3.xors, mc.shifts, mc.xors});
    const SweepRow &w = rows.back();
    std::printf("%4u %4u %4u %10zu %10zu %10zu %10zu %10u %10.1f %10zu %10zu\n", n, k, n - k,
                w.shifts_o0, w.shifts_o3, w.xors_o0, w.xors_o3, n * k * kL / 2, 7.7 * n,
                w.asm_shifts, w.asm_xors);
    std::fflush(stdout);
  }
  FILE *f = std::fopen(csv_path.c_str(), "w");
  if (!f) return runtime_error(kCmd, "cannot write '" + csv_path + "'");
  std::fprintf(f, "n,k,m,shifts_O0,shifts_O3,xors_O0,xors_O3,ref_nkl_2,ref_7_7n,asm_shifts_O3,asm_xors_O3\n");
  for (const SweepRow &w : rows)
    std::fprintf(f, "%u,%u,%u,%zu,%zu,%zu,%zu,%u,%.1f,%zu,%zu\n", w.n, w.k, w.n - w.k, w.shifts_o0,
                 w.shifts_o3, w.xors_o0, w.xors_o3, w.n * w.k * kL / 2, 7.7 * w.n, w.asm_shifts,
                 w.asm_xors);
  if (std::fclose(f) != 0) return runtime_error(kCmd, "writing '" + csv_path + "' failed");
  std::printf("\nnkl/2 and 7.7n are Nešković 2018's estimates for unoptimized and optimized shifts;\n"
              "asm columns count the O3 machine code of the main loop. CSV written to %s\n",
              csv_path.c_str());
  return 0;
}

}  // namespace

int cmd_stats(int argc, char **argv) {
  const CommandDef def = stats_def();
  Args args;
  if (std::optional<int> done = parse_command(def, argc, argv, &args)) return *done;
  if (args.has("sweep") && args.has("xor-table")) return usage_error(kCmd, "--sweep and --xor-table exclude each other");
  if (args.has("sweep")) return run_sweep(args);
  if (args.has("xor-table")) return print_xor_table(args.get("csv", ""));
  if (args.has("csv")) return usage_error(kCmd, "--csv applies to --sweep and --xor-table only");
  return run_one(args);
}

}  // namespace ecjit::tools
