// JitLink: dladdr finds this library's directory; dlopen loads the plugin beside it, RTLD_LOCAL.
#include "isal_compat/jit_link.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "jit/exec_memory.h"

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

}  // namespace

const JitLink *load_jit(const char **status) {
  LinkState &s = link_state();
  std::call_once(s.once, [&s] {
    // The plugin cannot even be mapped where executable memory is refused: say so.
    if (std::string why = jit::executable_memory_refused(); !why.empty()) {
      s.status = "JIT not started: this process may not map executable memory (" + why +
                 "): no JIT here; the kernels built into the library serve";
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
