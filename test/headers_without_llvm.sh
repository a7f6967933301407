#!/usr/bin/env bash
# Layering check: fft/ and runtime/ headers (and the jit/ headers they use) compile without LLVM's
# include path, so code that includes them never pulls LLVM in: the kernel service
# (jit/kernel_service.h) is the runtime's only door to the JIT; and jit/ includes no header of
# runtime's public API (runtime/include), the layer above it.
# Usage: headers_without_llvm.sh <c++ compiler> <source dir>
set -euo pipefail
cxx="$1"
src="$2"
cd "$src"
failed=0
headers=(fft/*.h runtime/*.h isal_compat/*.h files/*.h jit/kernel_service.h jit/kernel_slot.h jit/once_cache.h)
# One translation unit including them all (a header that pulls LLVM in fails it), then, only
# when it fails, each header alone to name the culprit.
tu=""
for h in "${headers[@]}"; do tu+="#include \"$h\""$'\n'; done
if ! echo "$tu" | "$cxx" -std=c++17 -fsyntax-only -x c++ -I. -Iruntime/include -Ifiles/include -Icodes/include - 2> /dev/null; then
  for h in "${headers[@]}"; do
    if ! echo "#include \"$h\"" | "$cxx" -std=c++17 -fsyntax-only -x c++ -I. -Iruntime/include -Ifiles/include \
        -Icodes/include - 2> /tmp/headers_without_llvm.$$; then
      echo "FAIL: $h does not compile without LLVM's headers:"
      head -n 5 /tmp/headers_without_llvm.$$
      failed=1
    fi
  done
  rm -f /tmp/headers_without_llvm.$$
  [ "$failed" = 1 ] || { echo "FAIL: the headers together do not compile"; failed=1; }
fi
# And the check itself can fail: a jit/ header that does include LLVM is refused.
if echo '#include "jit/jit_session.h"' | "$cxx" -std=c++17 -fsyntax-only -x c++ -I. -Iruntime/include -Ifiles/include \
    -Icodes/include - 2> /dev/null; then
  echo "FAIL: jit/jit_session.h compiled without LLVM's headers; this check proves nothing"
  failed=1
fi
# The layers' direction: jit/ sits below runtime/, so it never includes the public API of
# runtime/include (its value types are its own, or the LLVM-free ones of codes/include).
for h in runtime/include/ecjit/*.h; do
  if hits=$(grep -n -E "#include \"ecjit/$(basename "$h")\"" jit/*.h jit/*.cpp); then
    echo "FAIL: jit/ includes runtime's public header $(basename "$h"):"
    echo "$hits"
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "ok: runtime headers need no LLVM; jit/ includes nothing of runtime/include"
exit "$failed"
