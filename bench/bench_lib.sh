# bench/bench_lib.sh: what bench/figures.sh and bench/report.sh share (sourced, not run):
#   write_machine FILE       the machine of a run (CPU, flags, LLVM's CPU name, versions of ecjit and
#                            the peers) as key=value lines; needs ECJIT (path of the ecjit binary)
#   find_isal231             exports ECJIT_ISAL231 when ISA-L 2.31 is already built ($BUILD/isal-2.31...)
#   wait_quiet DIR NAME      waits (polling every 15 s) for a 1-minute load average below LOAD_MAX, at
#                            most LOAD_WAIT s per run and LOAD_WAIT_TOTAL s in all, then starts
#                            DIR/NAME.meta (date, load, seconds waited, under_load=0|1)
#   finish_meta DIR NAME T0 CMD...   appends the load after the run, its seconds and its command
# env: LOAD_MAX (default 1.0), LOAD_WAIT (default 600), LOAD_WAIT_TOTAL (default 600).
LOAD_MAX=${LOAD_MAX:-1.0}
LOAD_WAIT=${LOAD_WAIT:-600}
LOAD_WAIT_TOTAL=${LOAD_WAIT_TOTAL:-600}
WAITED_TOTAL=${WAITED_TOTAL:-0}

load1() { cut -d' ' -f1 /proc/loadavg; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

write_machine() {
  local flags keep="" f
  {
    echo "nproc=$(nproc)"
    echo "cpu_model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "cpu_family=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
    echo "cpu_model_number=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
    flags=$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo | cut -d: -f2)
    for f in avx2 avx512f avx512bw gfni vpclmulqdq asimd sve; do
      [[ " $flags " == *" $f "* ]] && keep+="${keep:+,}$f"
    done
    echo "flags=$keep"
    [[ " $flags " == *" hypervisor "* ]] && echo "virtualized=yes"
    if command -v clang-19 >/dev/null; then
      echo "llvm_cpu=$(clang-19 -march=native -### -x c /dev/null -c 2>&1 |
        sed -n 's/.*"-target-cpu" "\([^"]*\)".*/\1/p' | head -1)"
    fi
    echo "kernel=$(uname -r)"
    echo "ecjit=$("$ECJIT" --version 2>/dev/null | head -1)"
    echo "libisal2=$(dpkg-query -W -f='${Version}' libisal2 2>/dev/null || echo '?')"
    echo "libjerasure2=$(dpkg-query -W -f='${Version}' libjerasure2 2>/dev/null || echo '?')"
    echo "libbenchmark=$(dpkg-query -W -f='${Version}' libbenchmark1debian 2>/dev/null || echo '?')"
    echo "isal231=${ECJIT_ISAL231:-not built}"
    echo "date=$(date -u +%Y-%m-%d)"
  } >"$1"
}

find_isal231() {
  local lib
  if [[ -z "${ECJIT_ISAL231:-}" ]]; then
    for lib in "$BUILD"/isal-2.31/src/isa-l/bin/libisal-bound.so "$BUILD"/isal231*/src/isa-l/bin/libisal-bound.so; do
      if [[ -f "$lib" ]]; then export ECJIT_ISAL231="$lib"; break; fi
    done
  fi
  if [[ -n "${ECJIT_ISAL231:-}" ]]; then echo "ISA-L 2.31: $ECJIT_ISAL231"
  else echo "ISA-L 2.31: not built, left out (bench/fetch_isal231.sh builds it)"; unset ECJIT_ISAL231; fi
}

wait_quiet() {
  local dir=$1 name=$2 waited=0 l under=0
  l=$(load1)
  while ! below "$l" "$LOAD_MAX" && (( waited < LOAD_WAIT && WAITED_TOTAL < LOAD_WAIT_TOTAL )); do
    echo "  load average $l >= $LOAD_MAX: waiting (${waited}s so far)"
    sleep 15
    waited=$((waited + 15)); WAITED_TOTAL=$((WAITED_TOTAL + 15))
    l=$(load1)
  done
  below "$l" "$LOAD_MAX" || { under=1; echo "  still $l after ${waited}s: measuring under load"; }
  # The machine of this run (machine.txt is the last run's; older data keep theirs).
  cp "$dir/machine.txt" "$dir/$name.machine"
  { echo "date=$(date -u +%Y-%m-%d\ %H:%M\ UTC)"
    echo "load_before=$l"
    echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "waited_s=$waited"
    echo "under_load=$under"; } >"$dir/$name.meta"
}

finish_meta() {
  local dir=$1 name=$2 t0=$3; shift 3
  { echo "load_after=$(load1)"
    echo "seconds=$((SECONDS - t0))"
    echo "command=$*"; } >>"$dir/$name.meta"
}

# The --benchmark_min_time spelling of the Google Benchmark in $1 (1.7: "0.1"; 1.8 and later: "0.1s").
min_time_arg() {
  local probe
  probe=$("$1" --benchmark_min_time=1s --benchmark_filter='^$' 2>&1 || true)
  if [[ $probe == *"expected to be a double"* ]]; then
    echo "$2"
  else
    echo "${2}s"
  fi
}
