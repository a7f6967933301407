// failpoint: named steps of the file commands at which a test build stops the process, so
// tests can check what a crash (or a change made at that moment) leaves behind.
#pragma once

namespace ecjit::files {

// With ECJIT_FAILPOINTS defined (CMake ECJIT_FAILPOINTS=ON: test builds), when the
// environment variable ECJIT_FAILPOINT is `name`, the process kills itself (SIGKILL) here;
// when it is `name:stop`, it stops (SIGSTOP) until continued. Elsewhere: nothing, and no cost.
#ifdef ECJIT_FAILPOINTS
void failpoint(const char *name);
#else
inline void failpoint(const char *) {}
#endif

}  // namespace ecjit::files
