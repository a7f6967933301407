// commands: the entry point of each ecjit subcommand (argv holds the words after its name).
#pragma once

namespace ecjit::tools {

// Each returns the process exit code: 0 success, 1 runtime failure, 2 bad arguments.
int cmd_demo(int argc, char **argv);
int cmd_ir(int argc, char **argv);
int cmd_asm(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_check_mds(int argc, char **argv);
int cmd_aot(int argc, char **argv);
int cmd_edp(int argc, char **argv);
// protect / scrub / restore exit with 0 clean, 1 failure, 2 bad arguments, 3 repaired,
// 4 damage not repaired, 5 data lost.
int cmd_protect(int argc, char **argv);
// `ecjit eccfs <init|notify|monitor|scan|worker|status|wait>` (built with hiredis: ECJIT_HAVE_ECCFS).
int cmd_eccfs(int argc, char **argv);
int cmd_scrub(int argc, char **argv);
int cmd_restore(int argc, char **argv);
// prune: 0 done, 1 failure, 2 bad arguments.
int cmd_prune(int argc, char **argv);

}  // namespace ecjit::tools
