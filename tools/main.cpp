// ecjit: the command-line tool; dispatches to one subcommand per file and prints the overall usage.
#include <cstdio>
#include <cstring>

#include "llvm/Config/llvm-config.h"
#include "tools/commands.h"

namespace {

struct Command {
  const char *group;  // the heading it is listed under
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

constexpr Command kCommands[] = {
    {"codecs", "demo", ecjit::tools::cmd_demo,
     "JIT-compile a codec for this CPU, check it against the reference codec, time it"},
    {"codecs", "edp", ecjit::tools::cmd_edp, "degraded reads under horizontal, vertical and EDP data placement (Shen et al. 2016)"},
    {"codecs", "check-mds", ecjit::tools::cmd_check_mds,
     "check that a code is MDS; --table: which families are MDS up to which k, m"},
    {"inspect kernels", "ir", ecjit::tools::cmd_ir, "print the LLVM IR of a kernel (raw or optimized)"},
    {"inspect kernels", "asm", ecjit::tools::cmd_asm, "print the assembly of a kernel for any LLVM target"},
    {"inspect kernels", "stats", ecjit::tools::cmd_stats,
     "count XOR/shift/AND in IR and machine code, code size; --sweep: Nešković 2018, Fig. 5-4"},
    {"ahead of time", "aot", ecjit::tools::cmd_aot,
     "write an object file + C header for a target (aarch64, armv7, hexagon, riscv64, x86)"},
    {"files", "protect", ecjit::tools::cmd_protect, "write redundancy files (with unit signatures) for files and directories"},
    {"files", "scrub", ecjit::tools::cmd_scrub, "check protected files by signatures; --repair rebuilds bad units"},
    {"files", "restore", ecjit::tools::cmd_restore, "rebuild a protected file (missing, truncated, corrupt) from its redundancy"},
    {"files", "prune", ecjit::tools::cmd_prune, "drop the redundancy of protected files that are gone (dry run by default)"},
#ifdef ECJIT_HAVE_ECCFS
    {"files", "eccfs", ecjit::tools::cmd_eccfs, "a tree protected by workers around one Redis (init, notify, monitor, scan, worker, status, wait)"},
#endif
};

void usage(FILE *out) {
  std::fprintf(out,
               "usage: ecjit <command> [options]    (ecjit <command> --help for its options)\n"
               "\nerasure-coding kernels generated as LLVM IR and JIT-compiled\n");
  const char *group = "";
  for (const Command &c : kCommands) {
    if (std::strcmp(group, c.group) != 0) std::fprintf(out, "\n%s:\n", group = c.group);
    std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  }
  std::fprintf(out,
               "\n  --help     print this help\n  --version  print the ecjit and LLVM versions\n"
               "\nexit status: 0 success, 1 failure (compile error, mismatch, not MDS), 2 bad "
               "arguments;\nprotect / scrub / restore also 3 repaired, 4 damage not repaired, 5 data lost\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!std::strcmp(cmd, "--help") || !std::strcmp(cmd, "-h") || !std::strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!std::strcmp(cmd, "--version")) {
    std::printf("ecjit %s (LLVM %s)\n", ECJIT_VERSION, LLVM_VERSION_STRING);
    return 0;
  }
  for (const Command &c : kCommands)
    if (!std::strcmp(cmd, c.name)) return c.run(argc - 2, argv + 2);
  std::fprintf(stderr, "ecjit: error: unknown command '%s' (see ecjit --help)\n", cmd);
  return 2;
}
