// JitLink: dladdr finds this library's directory; dlopen loads the plugin beside it, RTLD_LOCAL.
#include "runtime/isal_compat/jit_link.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ecjit::isal {
namespace {

struct LinkState {
  std::once_flag once;
  JitLink link;
  bool ok = false;
  std::string status = "not started";
};

LinkState &link_state() {
  static LinkState *s = new LinkState();  // leaked on purpose: used from exit handlers
  return *s;
}

std::string plugin_path() {
  if (const char *p = std::getenv("ECJIT_ISAL_JIT_PLUGIN"); p && *p) return p;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&load_jit), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + "libecjit_isal_jit.so";
  }
  return "libecjit_isal_jit.so";
}

// Empty when this process may make memory executable (as loading the plugin and the JIT's
// linker both need), else why not: SELinux's deny_execmem, PaX MPROTECT or a seccomp filter.
std::string executable_memory_refused() {
  const long page = sysconf(_SC_PAGESIZE);
  void *p = mmap(nullptr, size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return std::string("cannot map memory: ") + std::strerror(errno);
  const bool ok = mprotect(p, size_t(page), PROT_READ | PROT_EXEC) == 0;
  const int err = errno;
  munmap(p, size_t(page));
  if (ok) return "";
  return std::string("this process may not map executable memory (mprotect PROT_EXEC: ") +
         std::strerror(err) + "): no JIT here; the kernels built into the library serve";
}

}  // namespace

const JitLink *load_jit(const char **status) {
  LinkState &s = link_state();
  std::call_once(s.once, [&s] {
    if (std::string why = executable_memory_refused(); !why.empty()) {
      s.status = "JIT not started: " + why;
      return;
    }
    const std::string path = plugin_path();
    // RTLD_LOCAL: LLVM's symbols stay out of the host program's namespace; never unloaded.
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
      const char *e = dlerror();
      s.status = "JIT plugin not loaded: " + std::string(e ? e : path);
      return;
    }
    using Entry = const JitPluginApi *(*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, "ecjit_isal_jit_plugin_v1"));
    const JitPluginApi *api = entry ? entry() : nullptr;
    if (!api || api->version != kJitPluginVersion) {
      s.status = "JIT plugin " + path + " does not match this libisal.so.2";
      return;
    }
    const char *why = "";
    void *jit = api->open(&why);
    s.status = why ? why : "";
    if (!jit) return;
    s.link = JitLink{api, jit};
    s.ok = true;
  });
  *status = s.status.c_str();
  return s.ok ? &s.link : nullptr;
}

}  // namespace ecjit::isal
