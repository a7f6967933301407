// `ecjit ir` and `ecjit asm`: print a kernel's LLVM IR (raw or optimized) or its assembly for any target.
#include <cstdio>

#include "tools/commands.h"
#include "tools/kernel_request.h"

namespace ecjit::tools {
namespace {

CommandDef ir_def() {
  CommandDef d;
  d.name = "ir";
  d.synopsis = "--spec S [--target T] [--strategy X] [--opt O0..O3 | --no-opt] [--op encode|decode [--erased LIST]|shape [--outputs R]]";
  d.summary = "print the LLVM IR of an encoder or decoder kernel";
  d.details =
      "Builds the kernel for the code and target and prints its LLVM IR after the optimization\n"
      "pipeline at --opt (default O3). --no-opt prints the builder's raw IR, Nešković 2018's\n"
      "redundant shift-and-XOR form. For --op decode the kernel rebuilds the --erased shards from\n"
      "the first k present ones, in two stages when the planner factors the decode, planned and\n"
      "named by jit::plan_decoder as the runtime's decoders are. --op shape prints the kernel\n"
      "that serves the first calls of any erasure set: k inputs, --outputs R, coefficients read\n"
      "at run time (docs/operations.md, degraded reads). Array codes (xcode:p=7, bpcode:p=7):\n"
      "--op decode is the rebuild of the --erased disks (default disk 0), in place on the disks.\n"
      "rs-fft: --op encode (unrolled encoder), decode (the decode core, multipliers as data),\n"
      "steps (the kernel that runs every larger code's schedules) or transform-steps (the same\n"
      "without the decode core's kinds: what a codec compiles first, for its encodes); GFNI\n"
      "affine blocks where the target has GFNI (x86_64-v3+gfni), nibble lookups otherwise.";
  d.options = kernel_options();
  d.options.push_back({"no-opt", "", "print the IR as the builder emits it, before any pass"});
  return d;
}

CommandDef asm_def() {
  CommandDef d;
  d.name = "asm";
  d.synopsis = "--spec S [--target T] [--strategy X] [--opt O0..O3] [--op encode|decode [--erased LIST]|shape [--outputs R]]";
  d.summary = "print the assembly of an encoder or decoder kernel, for any target LLVM has";
  d.details =
      "Compiles the kernel ahead of time with LLVM's code generator for --target and prints the\n"
      "assembly. Works for every target this LLVM was built with, not only this machine:\n"
      "host, host-avx2, x86_64-v3, x86_64-v4+gfni, aarch64+neon, armv7, hexagon-v68+hvx, riscv64,\n"
      "riscv64-v. Array codes and rs-fft as for `ecjit ir`.";
  d.options = kernel_options();
  return d;
}

int run_ir_or_asm(const CommandDef &def, bool assembly, int argc, char **argv) {
  Args args;
  if (std::optional<int> done = parse_command(def, argc, argv, &args)) return *done;
  if (args.has("no-opt") && args.has("opt"))
    return usage_error(def.name, "--no-opt and --opt exclude each other");
  std::string error;
  std::optional<KernelRequest> req = make_kernel_request(args, &error);
  if (!req) return usage_error(def.name, error);
  const KernelRequest &r = *req;

  llvm::Expected<std::string> text =
      assembly ? kernel_assembly(r)
               : jit::kernel_ir(r.req, /*optimize_it=*/!args.has("no-opt"));
  if (!text) return runtime_error(def.name, describe(r) + ": " + error_message(text.takeError()));
  std::string header = describe(r);
  if (args.has("no-opt")) header = header.substr(0, header.rfind(", ")) + ", raw builder IR (no passes run)";
  std::printf("%s %s\n", assembly ? "#" : ";", header.c_str());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return 0;
}

}  // namespace

int cmd_ir(int argc, char **argv) { return run_ir_or_asm(ir_def(), false, argc, argv); }
int cmd_asm(int argc, char **argv) { return run_ir_or_asm(asm_def(), true, argc, argv); }

}  // namespace ecjit::tools
