// exec_memory: whether this process may make memory executable (header-only, no LLVM: the drop-in asks before loading its JIT plugin).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace ecjit::jit {

// Empty when a page mapped writable can be mprotect'ed to read + execute, the way the JIT's
// linker (and the loader, for a plugin) makes code; else why not, e.g. "mprotect PROT_EXEC:
// Operation not permitted" under SELinux's deny_execmem, PaX MPROTECT or a seccomp filter.
inline std::string executable_memory_refused() {
  const long page = sysconf(_SC_PAGESIZE);
  void *p = mmap(nullptr, size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return std::string("cannot map memory: ") + std::strerror(errno);
  const bool ok = mprotect(p, size_t(page), PROT_READ | PROT_EXEC) == 0;
  const int err = errno;
  munmap(p, size_t(page));
  return ok ? std::string() : std::string("mprotect PROT_EXEC: ") + std::strerror(err);
}

}  // namespace ecjit::jit
