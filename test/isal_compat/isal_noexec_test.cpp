// isal_noexec_test: ecjit's libisal.so.2 where executable memory is denied (a seccomp filter
// failing mmap / mprotect with PROT_EXEC, as SELinux's deny_execmem or PaX MPROTECT do).
// The drop-in must report the real state in ecjit_isal_jit_status(), keep the host program's
// stderr quiet, and still encode byte-identically to the system ISA-L. Runs in a child
// process (the filter cannot be lifted).
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

TEST(IsalNoExec, ReportsTheStateQuietlyAndStillEncodes) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the seccomp filter is written for x86-64";
#endif
  char err_path[] = "/tmp/ecjit-noexec-stderr-XXXXXX", out_path[] = "/tmp/ecjit-noexec-out-XXXXXX";
  const int err_fd = mkstemp(err_path), out_fd = mkstemp(out_path);
  ASSERT_GE(err_fd, 0);
  ASSERT_GE(out_fd, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Both libraries (and LLVM with ours) are mapped before the filter: only the JIT's
    // own executable memory is refused afterwards.
    IsalLib sys(kSystemIsal), ours(ECJIT_ISAL_COMPAT_PATH);
    FILE *out = fdopen(out_fd, "w");
    if (!sys.ok() || !ours.ok()) _exit(10);
    if (!deny_exec_memory()) _exit(11);
    void *probe = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED) _exit(12);  // the filter does not hold
    dup2(err_fd, 2);                      // what the drop-in prints to the host's stderr
    auto status = ours.fn<const char *(*)()>("ecjit_isal_jit_status");
    fprintf(out, "%s\n", status());
    // Encode with a random RS(10,4) matrix through both libraries: byte-identical.
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
      if (p1 != p2) _exit(13);
    }
    fprintf(out, "%s\n", status());
    fclose(out);
    _exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  const std::string said = read_file(out_path), printed = read_file(err_path);
  unlink(err_path);
  unlink(out_path);
  ASSERT_TRUE(WIFEXITED(wstatus)) << "child died: signal " << (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
  if (WEXITSTATUS(wstatus) == 11) GTEST_SKIP() << "seccomp filters are not available here";
  ASSERT_EQ(WEXITSTATUS(wstatus), 0) << "10: load, 12: filter ineffective, 13: parity differs from ISA-L";
  EXPECT_EQ(said.rfind("ok", 0), std::string::npos) << "status claims the JIT works: " << said;
  EXPECT_NE(said.find("executable memory"), std::string::npos) << said;
  EXPECT_EQ(printed, "") << "the drop-in wrote to the host's stderr";
}

}  // namespace
