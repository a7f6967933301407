// isal_noexec_test: ecjit's libisal.so.2 where its JIT cannot run as asked - executable memory
// denied (a seccomp filter failing mmap / mprotect with PROT_EXEC, as SELinux's deny_execmem
// or PaX MPROTECT do), or ECJIT_ISAL_STRATEGY naming a strategy the target lacks. The drop-in
// must report the real state in ecjit_isal_jit_status(), keep the host program's stderr quiet,
// and still encode byte-identically to the system ISA-L. Each runs in a child process (the
// filter cannot be lifted; the JIT starts once per process).
#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "test/isal_compat/isal_lib.h"

using namespace ecjit_test;

namespace {

// mmap / mprotect / pkey_mprotect with PROT_EXEC in their protection argument fail (EPERM).
bool deny_exec_memory() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pkey_mprotect, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Encodes with a Cauchy RS(10,4) matrix through both libraries, 50 rounds (past the point
// where a matrix would compile): whether every round is byte-identical.
bool encodes_like_isal(const IsalLib &sys, const IsalLib &ours) {
  const int k = 10, m = 4, len = 4099;
  std::vector<u8> enc(14 * 10), tbls_sys(k * m * 32), tbls_ours(k * m * 32);
  sys.fn<GenFn>("gf_gen_cauchy1_matrix")(enc.data(), k + m, k);
  sys.fn<InitFn>("ec_init_tables")(k, m, enc.data() + k * k, tbls_sys.data());
  ours.fn<InitFn>("ec_init_tables")(k, m, enc.data() + k * k, tbls_ours.data());
  std::vector<std::vector<u8>> data(k, std::vector<u8>(len)), p1(m, std::vector<u8>(len)), p2(m, std::vector<u8>(len));
  for (int i = 0; i < k; ++i)
    for (int b = 0; b < len; ++b) data[i][b] = u8(b * 7 + i * 13 + (b >> 5));
  std::vector<u8 *> dp, pp1, pp2;
  for (auto &d : data) dp.push_back(d.data());
  for (int r = 0; r < m; ++r) pp1.push_back(p1[r].data()), pp2.push_back(p2[r].data());
  for (int round = 0; round < 50; ++round) {  // past the point where a matrix would compile
    sys.fn<EncFn>("ec_encode_data")(len, k, m, tbls_sys.data(), dp.data(), pp1.data());
    ours.fn<EncFn>("ec_encode_data")(len, k, m, tbls_ours.data(), dp.data(), pp2.data());
    if (p1 != p2) return false;
  }
  return true;
}

// What a child process left: whether it ran and exited, its exit code, what it wrote to
// `out` (the drop-in's status lines) and what reached its stderr once it redirected it to
// err_fd. `body` runs in the child and returns its exit code.
struct Child {
  bool exited = false;
  int code = -1, signal = 0;
  std::string said, printed;
};
Child in_child(const std::function<int(FILE *out, int err_fd)> &body) {
  Child c;
  char out_path[] = "/tmp/ecjit-isal-child-out-XXXXXX", err_path[] = "/tmp/ecjit-isal-child-err-XXXXXX";
  const int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  EXPECT_GE(out_fd, 0);
  EXPECT_GE(err_fd, 0);
  if (out_fd < 0 || err_fd < 0) return c;
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    FILE *out = fdopen(out_fd, "w");
    const int code = body(out, err_fd);
    fclose(out);
    _exit(code);
  }
  int wstatus = 0;
  EXPECT_EQ(waitpid(pid, &wstatus, 0), pid);
  c.said = read_file(out_path);
  c.printed = read_file(err_path);
  unlink(out_path);
  unlink(err_path);
  c.exited = WIFEXITED(wstatus);
  c.code = c.exited ? WEXITSTATUS(wstatus) : -1;
  c.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
  return c;
}

TEST(IsalNoExec, ReportsTheStateQuietlyAndStillEncodes) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the seccomp filter is written for x86-64";
#endif
  const Child c = in_child([](FILE *out, int err_fd) {
    // Both libraries (and LLVM with ours) are mapped before the filter: only the JIT's
    // own executable memory is refused afterwards.
    IsalLib sys(kSystemIsal), ours(ECJIT_ISAL_COMPAT_PATH);
    if (!sys.ok() || !ours.ok()) return 10;
    if (!deny_exec_memory()) return 11;
    void *probe = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED) return 12;  // the filter does not hold
    dup2(err_fd, 2);                     // what the drop-in prints to the host's stderr
    auto status = ours.fn<const char *(*)()>("ecjit_isal_jit_status");
    fprintf(out, "%s\n", status());
    if (!encodes_like_isal(sys, ours)) return 13;
    fprintf(out, "%s\n", status());
    return 0;
  });
  ASSERT_TRUE(c.exited) << "child died: signal " << c.signal;
  if (c.code == 11) GTEST_SKIP() << "seccomp filters are not available here";
  ASSERT_EQ(c.code, 0) << "10: load, 12: filter ineffective, 13: parity differs from ISA-L";
  EXPECT_EQ(c.said.rfind("ok", 0), std::string::npos) << "status claims the JIT works: " << c.said;
  EXPECT_NE(c.said.find("executable memory"), std::string::npos) << c.said;
  EXPECT_EQ(c.printed, "") << "the drop-in wrote to the host's stderr";
}

// ECJIT_ISAL_STRATEGY=gfni on a target without GFNI (ECJIT_ISAL_TARGET=host-gfni, every
// machine) is refused - the status names the strategy and what the target lacks, no JIT -
// and split-table, which every x86-64 target with a byte shuffle runs, is honoured; both
// encode ISA-L's bytes quietly.
TEST(IsalStrategy, ForcedStrategyIsHonouredOrRefused) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86-64 strategies";
#endif
  for (const char *strategy : {"gfni", "split-table"}) {
    const Child c = in_child([strategy](FILE *out, int err_fd) {
      setenv("ECJIT_ISAL_TARGET", "host-gfni", 1);
      setenv("ECJIT_ISAL_STRATEGY", strategy, 1);
      unsetenv("ECJIT_ISAL_JIT");
      IsalLib sys(kSystemIsal), ours(ECJIT_ISAL_COMPAT_PATH);
      if (!sys.ok() || !ours.ok()) return 10;
      dup2(err_fd, 2);
      if (!encodes_like_isal(sys, ours)) return 13;
      fprintf(out, "%s\n", ours.fn<const char *(*)()>("ecjit_isal_jit_status")());
      return 0;
    });
    ASSERT_TRUE(c.exited) << strategy << ": child died";
    ASSERT_EQ(c.code, 0) << strategy << ": 10: load, 13: parity differs from ISA-L";
    if (std::string(strategy) == "gfni") {
      EXPECT_NE(c.said.find("ECJIT_ISAL_STRATEGY=gfni refused"), std::string::npos) << c.said;
      EXPECT_NE(c.said.find("gfni"), std::string::npos) << c.said;
    } else {
      EXPECT_EQ(c.said.rfind("ok: target host-gfni, strategy split-table", 0), 0u) << c.said;
    }
    EXPECT_EQ(c.printed, "") << strategy << ": the drop-in wrote to the host's stderr";
  }
}

}  // namespace
