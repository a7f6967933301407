// aot_test_util: running `ecjit aot`, compilers and emulators from the AOT tests (paths come from CMake).
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>

namespace ecjit::aot_test {

// Exit status of a shell command (-1 when it did not run or was killed).
inline int run(const std::string &cmd) {
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc)) return -1;
  return WEXITSTATUS(rc);
}

// Single-quoted for /bin/sh.
inline std::string sh(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A fresh directory under the test's binary directory.
inline std::string fresh_dir(const std::string &name) {
  const std::string dir = std::string(ECJIT_AOT_WORK_DIR) + "/" + name;
  run("rm -rf " + sh(dir) + " && mkdir -p " + sh(dir));
  return dir;
}

// Test names: letters, digits and '_' only.
inline std::string ident(std::string s) {
  for (char &c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  return s;
}

// `ecjit aot` with `args`; stderr into dir/aot.err. Returns the exit status.
inline int ecjit_aot(const std::string &args, const std::string &dir) {
  return run(sh(ECJIT_TOOL_PATH) + " aot " + args + " 2>" + sh(dir + "/aot.err"));
}

// Whether a required external tool is missing and missing tools are allowed to skip the
// test (ECJIT_AOT_ALLOW_SKIP=1); otherwise a missing tool fails the test.
inline bool allow_skip() {
  const char *v = std::getenv("ECJIT_AOT_ALLOW_SKIP");
  return v && std::string(v) == "1";
}

}  // namespace ecjit::aot_test
