// failpoint: ECJIT_FAILPOINT=name (SIGKILL) or name:stop (SIGSTOP), in test builds only.
#include "files/failpoint.h"

#ifdef ECJIT_FAILPOINTS
#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace ecjit::files {

void failpoint(const char *name) {
  const char *want = std::getenv("ECJIT_FAILPOINT");
  if (!want) return;
  const size_t n = std::strlen(name);
  if (std::strncmp(want, name, n) != 0) return;
  if (want[n] == 0) ::raise(SIGKILL);
  if (std::strcmp(want + n, ":stop") == 0) ::raise(SIGSTOP);
}

}  // namespace ecjit::files
#endif
