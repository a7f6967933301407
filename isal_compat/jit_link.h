// JitLink: the drop-in's JIT, loaded on first need from libecjit_isal_jit.so beside libisal.so.2 (LLVM stays out of processes that never start it).
#pragma once

#include <string>

#include "isal_compat/jit_plugin_api.h"

namespace ecjit::isal {

struct JitLink {
  const JitPluginApi *api = nullptr;
  void *jit = nullptr;
};

// Loads the plugin (dlopen of libecjit_isal_jit.so from this library's own directory, or
// $ECJIT_ISAL_JIT_PLUGIN) and starts its Jit, once; on the calling thread. Null when the
// plugin cannot be loaded or the Jit cannot start; *status says which (static storage).
const JitLink *load_jit(const char **status);

}  // namespace ecjit::isal
