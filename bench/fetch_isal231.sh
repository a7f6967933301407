#!/usr/bin/env bash
# Fetches ISA-L 2.31 (vendored by the isal-sys 0.5.3 crate on crates.io), checks its sha256 and
# builds it for the benchmarks; prints the path of bin/libisal-bound.so: the shared build's objects
# linked with -Bsymbolic, so that ISA-L's calls into itself (gf_invert_matrix -> gf_mul, gf_inv)
# are direct calls as in a program that links libisal.a, not PLT calls as in Debian's libisal.so
# (43% + 12% of a degraded read's matrix inversion went through the PLT). The benchmarks dlopen it
# beside the other ISA-L builds.
# Benchmark set-up only: the library and its tests never need it. Exit 1 with a message on
# stderr when it cannot be had (no network to crates.io, no nasm).
#   bench/fetch_isal231.sh [DIR]    (default build/isal-2.31)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/build/isal-2.31}
CRATE="isal-sys-0.5.3+496255c.crate"
SHA256="aefc9239959a60eaba201ccdd99897b5270be98d01f561c2166f5e3343e5a29b"
LIB="$DIR/src/isa-l/bin/libisal-bound.so"
if [[ -f "$LIB" ]]; then echo "$LIB"; exit 0; fi
if ! command -v nasm >/dev/null; then
  SUDO=""; [[ "$(id -u)" -ne 0 ]] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nasm >/dev/null 2>&1 ||
    { echo "fetch_isal231: nasm is needed to build ISA-L 2.31 (apt-get install nasm)" >&2; exit 1; }
fi
mkdir -p "$DIR"
if ! curl -fsSL --max-time 60 -o "$DIR/$CRATE" "https://static.crates.io/crates/isal-sys/isal-sys-0.5.3%2B496255c.crate"; then
  echo "fetch_isal231: cannot download $CRATE from crates.io" >&2; exit 1
fi
echo "$SHA256  $DIR/$CRATE" | sha256sum -c --quiet - >&2 ||
  { echo "fetch_isal231: $CRATE does not match its published sha256" >&2; exit 1; }
rm -rf "$DIR/src" && mkdir -p "$DIR/src"
tar xzf "$DIR/$CRATE" -C "$DIR/src" --strip-components=1
grep -q '\[2\.31\.0\]' "$DIR/src/isa-l/configure.ac" ||
  { echo "fetch_isal231: the crate does not vendor ISA-L 2.31.0" >&2; exit 1; }
make -C "$DIR/src/isa-l" -f Makefile.unx -j"${ECJIT_JOBS:-2}" slib >"$DIR/build.log" 2>&1 ||
  { echo "fetch_isal231: build failed, see $DIR/build.log" >&2; exit 1; }
# bin/ holds only the shared build's objects (slib): the same code, its symbols bound inside.
cc -shared -Wl,-Bsymbolic -Wl,-z,noexecstack -Wl,-z,relro -Wl,-z,now -Wl,-soname,libisal.so.2 \
  -o "$LIB" "$DIR"/src/isa-l/bin/*.o >>"$DIR/build.log" 2>&1 ||
  { echo "fetch_isal231: linking $LIB failed, see $DIR/build.log" >&2; exit 1; }
echo "$LIB"
