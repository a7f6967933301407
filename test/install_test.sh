#!/usr/bin/env bash
# install_test: `cmake --install` into a scratch prefix, then programs outside the tree built
# against it - through find_package(ecjit) (shared and static) and through pkg-config - encode,
# reconstruct and protect a file; libecjit.so exports only the public API; the drop-in sits in
# its own directory; the installed ecjit command runs.
#   install_test.sh <build dir> <c++ compiler> <source dir>
set -uo pipefail
BUILD=$1
CXX=$2
SRC=$3
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
export ECJIT_DISK_CACHE=0

cmake --install "$BUILD" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; exit 1; }
lib=$prefix/lib
[[ -d $prefix/lib64 ]] && lib=$prefix/lib64
[[ -d $prefix/lib/x86_64-linux-gnu ]] && lib=$prefix/lib/x86_64-linux-gnu
for f in "$lib/libecjit.so" "$lib/libecjit.a" "$lib/pkgconfig/ecjit.pc" "$lib/cmake/ecjit/ecjitConfig.cmake" \
         "$lib/ecjit/isal-compat/libisal.so.2" "$lib/ecjit/isal-compat/libecjit_isal_jit.so" \
         "$prefix/include/ecjit/ecjit.h" "$prefix/include/ecjit/status.h" \
         "$prefix/include/ecjit/file_protection.h" "$prefix/bin/ecjit"; do
  [[ -e $f ]] || fail "not installed: $f"
done
[[ -e $lib/libisal.so.2 ]] && fail "the drop-in was installed over the system's place for libisal.so.2"
# The installed drop-in finds its JIT plugin beside it and starts it (ctypes: no compiler needed).
# dropin_jit <libisal.so.2>: "ok: target ..." or why not
dropin_jit() {
  /usr/bin/python3 -c 'import ctypes, sys
f = ctypes.CDLL(sys.argv[1]).ecjit_isal_jit_status
f.restype = ctypes.c_char_p
print(f().decode())' "$1" 2>&1
}
if [[ -x /usr/bin/python3 ]]; then
  st=$(dropin_jit "$lib/ecjit/isal-compat/libisal.so.2")
  [[ $st == ok:* ]] || fail "the installed drop-in did not start its JIT: $st"
fi
soname=$(readelf -d "$lib/libecjit.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == libecjit.so.0 ]] || fail "SONAME is '$soname', want libecjit.so.0"
# Only the public API is exported: no LLVM, no internal namespace.
leaks=$(nm -DC --defined-only "$lib/libecjit.so" | grep -E ' (llvm::|ecjit::(codes|ir|jit|runtime|isal)::|ecjit::files::(FileProtector::Impl|RedundancyHeader|StripeWorkers))' | head -5)
[[ -z $leaks ]] || fail "libecjit.so exports internals: $leaks"

head -c 50000 /dev/urandom >"$work/data.bin"
# find_package(ecjit): shared, then static.
for mode in OFF ON; do
  b=$work/consumer-$mode
  if cmake -S "$SRC/test/install" -B "$b" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_PREFIX_PATH="$prefix" \
       -DECJIT_STATIC=$mode >"$b.log" 2>&1 && cmake --build "$b" >>"$b.log" 2>&1; then
    cp "$work/data.bin" "$work/data-$mode.bin"
    LD_LIBRARY_PATH=$lib "$b/consumer" "$work/data-$mode.bin" || fail "find_package consumer (static=$mode) failed"
  else
    cat "$b.log"
    fail "find_package consumer (static=$mode) did not build"
  fi
done
# pkg-config.
export PKG_CONFIG_PATH=$lib/pkgconfig
if "$CXX" -std=c++17 -o "$work/consumer-pc" "$SRC/test/install/consumer.cpp" $(pkg-config --cflags --libs ecjit) \
     2>"$work/pc.log"; then
  cp "$work/data.bin" "$work/data-pc.bin"
  LD_LIBRARY_PATH=$lib "$work/consumer-pc" "$work/data-pc.bin" || fail "pkg-config consumer failed"
else
  cat "$work/pc.log"
  fail "pkg-config consumer did not build"
fi
[[ $("$prefix/bin/ecjit" --version) == "ecjit "* ]] || fail "installed ecjit --version"
"$prefix/bin/ecjit" demo --size 64K >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; fail "installed ecjit demo"; }

# The Debian package: built by CPack, unpacked in a scratch root (dpkg -x), its ecjit run and a
# consumer built against its headers and library; it must depend on LLVM 19's runtime package.
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
  if (cd "$BUILD" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1); then
    deb=$(ls "$work"/deb/ecjit_*.deb | head -1)
    depends=$(dpkg-deb -f "$deb" Depends)
    [[ $depends == *libllvm19* ]] || fail "the .deb does not depend on libllvm19: $depends"
    dpkg-deb -x "$deb" "$work/root"
    for f in usr/bin/ecjit usr/lib/libecjit.so.0 usr/include/ecjit/ecjit.h usr/share/man/man1/ecjit.1 \
             usr/lib/ecjit/isal-compat/libisal.so.2 usr/lib/ecjit/isal-compat/libecjit_isal_jit.so \
             usr/lib/pkgconfig/ecjit.pc; do
      [[ -e $work/root/$f ]] || fail "not in the .deb: /$f"
    done
    if [[ -x /usr/bin/python3 ]]; then
      st=$(dropin_jit "$work/root/usr/lib/ecjit/isal-compat/libisal.so.2")
      [[ $st == ok:* ]] || fail "the .deb's drop-in did not start its JIT: $st"
    fi
    "$work/root/usr/bin/ecjit" demo --size 64K >"$work/deb-demo.log" 2>&1 || { cat "$work/deb-demo.log"; fail "the .deb's ecjit demo"; }
    if "$CXX" -std=c++17 -o "$work/consumer-deb" "$SRC/test/install/consumer.cpp" -I"$work/root/usr/include" \
         -L"$work/root/usr/lib" -lecjit 2>"$work/deb-cc.log"; then
      LD_LIBRARY_PATH=$work/root/usr/lib "$work/consumer-deb" || fail "consumer of the .deb's library failed"
    else
      cat "$work/deb-cc.log"
      fail "consumer of the .deb did not build"
    fi
  else
    cat "$work/cpack.log"
    fail "cpack -G DEB"
  fi
else
  echo "install_test: no cpack / dpkg-deb here, the .deb is not checked"
fi

if [[ $fails -ne 0 ]]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "install_test: all passed"
