# common.sh: what ceph_test.sh and swift_test.sh share (sourced, not run): usage, result
# counters, locating ecjit's drop-in, and the stats probe (stats_probe.c) that proves ecjit ran.
#
#   IT_NAME=ceph; source "$SELF_DIR/common.sh"; it_start "$@"; ...; it_build_probe "$S" "$S/probe.log"
#
# it_start checks the one argument (the drop-in directory), sets DROPIN, LIB (its libisal.so.2)
# and LIB_REAL, and exits 1 when it is missing or is not ecjit's. it_build_probe compiles the
# probe into <dir>/probe.so and sets PROBE (empty without a C compiler). A process run with
# LD_PRELOAD=$PROBE and ECJIT_STATS_FILE=<file> writes, at exit, one line to <file>:
#   isal=none|loaded ecjit=absent|present [calls= jit= shape= portable= compiles= (s) failures= status=]

T0=${T0:-$(date +%s.%N)}
IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
PASSED=0 FAILED=0 SKIPPED=0

say() { echo "$IT_NAME: $*"; }
skip() { echo "SKIP: $*"; exit 0; }
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
ok() { PASSED=$((PASSED + 1)); echo "ok   $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
skip_part() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $*"; }

# it_start <args of the script>: the drop-in directory (a concurrent rebuild may remove the
# library for a moment: waits up to 60 s).
it_start() {
  if [[ $# -ne 1 ]]; then
    echo "usage: $0 <drop-in dir containing libisal.so.2>" >&2
    exit 2
  fi
  if [[ ! -d $1 ]]; then
    echo "FAIL drop-in directory $1 does not exist"
    exit 1
  fi
  DROPIN=$(cd "$1" && pwd)
  LIB=$DROPIN/libisal.so.2
  wait_dropin
  LIB_REAL=$(readlink -f "$LIB")
  if ! grep -aq ecjit_isal_compat_version "$LIB_REAL"; then
    echo "FAIL $LIB has no ecjit_isal_compat_version: not ecjit's drop-in"
    exit 1
  fi
}

# wait_dropin: before starting processes that must load the drop-in.
wait_dropin() {
  for _ in $(seq 30); do [[ -f $LIB ]] && return 0; sleep 2; done
  echo "FAIL $LIB not found (build the ecjit_isal_compat target, or a rebuild removed it)"
  exit 1
}

# it_build_probe <dir> <log>: PROBE=<dir>/probe.so, or empty when it cannot be built.
it_build_probe() {
  PROBE=
  local hdr=$REPO/isal_compat/ecjit_isal_compat.h cc
  cc=$(command -v cc || command -v gcc || command -v clang || true)
  [[ -n $cc && -f $hdr ]] || return 0
  if "$cc" -O1 -shared -fPIC -I"$(dirname "$hdr")" -o "$1/probe.so" "$IT_DIR/stats_probe.c" -ldl 2>"$2"; then
    PROBE=$1/probe.so
  fi
}

# stat_field <name> <stats file>: the number after " <name>=" in the probe's line.
stat_field() { sed -n "s/.* $1=\\([0-9]*\\).*/\\1/p" "$2" 2>/dev/null; }
