#!/usr/bin/env bash
# bench/report.sh: builds ecjit's benchmarks and its peers, runs them side by side on this machine,
# and rewrites this machine class's tables in docs/performance.md and its summary in README.md
# (bench/report.py), keeping every other class's sections as they are.
#   bench/report.sh [--steps S,...] [--reps N] [--seconds S] [--no-write] [--help]
# Steps (default all; about 10 minutes on a quiet 2-core EPYC, plus the first build):
#   encode    RS(10,4) encode at 64 KiB, GF(2^8..64), the tuner's choice, against ISA-L 2.30 / 2.31,
#             Jerasure and GF-Complete (bench_encode, Google Benchmark)
#   matrix    rs-vand encode and reconstruct of m lost shards against klauspost/reedsolomon's New(k, m)
#             on one goroutine: (6,3), (10,4), (12,4), (20,4) at 4 KiB, 64 KiB and 1 MiB
#   degraded  RS(10,4) degraded reads, a random erasure set per call, 1 and 1..4 lost, against
#             ISA-L 2.30 / 2.31 (bench_degraded)
#   wide16    rs-fft GF(2^16) against reed-solomon-simd 3.1: encode, decode of m random losses,
#             first call of a new erasure set (bench_fft)
#   wide8     rs-fft GF(2^8) against klauspost's leopard8 (bench_fft --gf 8)
#   xor       XOR bit-matrix and array codes against libJerasure at 64 KiB (bench_encode)
#   first     the first codec of a process: built-in kernels against the codec's own (bench_first_codec)
# Raw outputs and each run's metadata (command, date, load) go to docs/figures/data/report-CLASS/,
# CLASS being this machine's class (x86-avx512-gfni, x86-avx512, x86-avx2-gfni, x86-avx2,
# aarch64-neon). --no-write measures and prints the tables without touching the docs.
# A peer that cannot be built (no Go, no cargo, no crates.io) is left out and its table says so.
# env: BUILD (default build; configured Release without tests when it has no build.ninja),
#      PY (default python3), LOAD_MAX / LOAD_WAIT / LOAD_WAIT_TOTAL (bench/bench_lib.sh),
#      ECJIT_ISAL231 (libisal-bound.so of ISA-L 2.31; else bench/fetch_isal231.sh builds it).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PY=${PY:-python3}
STEPS=encode,matrix,degraded,wide16,wide8,xor,first
REPS=3
SECS=0.5
WRITE=1
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --steps) STEPS=${2:?--steps needs a list}; shift 2 ;;
    --reps) REPS=${2:?--reps needs a number}; shift 2 ;;
    --seconds) SECS=${2:?--seconds needs a number}; shift 2 ;;
    --no-write) WRITE=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "report.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
for s in ${STEPS//,/ }; do
  case $s in encode|matrix|degraded|wide16|wide8|xor|first) ;;
    *) echo "report.sh: unknown step '$s' (encode,matrix,degraded,wide16,wide8,xor,first)" >&2; exit 2 ;;
  esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "report.sh: --reps must be a positive integer" >&2; exit 2; }
[[ $SECS =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "report.sh: --seconds must be a positive number" >&2; exit 2; }
step() { [[ ",$STEPS," == *",$1,"* ]]; }
# shellcheck source=bench/bench_lib.sh
source "$ROOT/bench/bench_lib.sh"
START=$SECONDS

flags=$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo | cut -d: -f2)
has() { [[ " $flags " == *" $1 "* ]]; }
case $(uname -m) in
  x86_64)
    CLASS=x86-avx2
    has avx512bw && CLASS=x86-avx512
    has gfni && CLASS+=-gfni
    has avx2 || { echo "report.sh: an x86-64 CPU without AVX2 has no section of its own" >&2; exit 1; } ;;
  aarch64) CLASS=aarch64-neon ;;
  *) echo "report.sh: no machine class for $(uname -m)" >&2; exit 1 ;;
esac
DATA=$ROOT/docs/figures/data/report-$CLASS
mkdir -p "$DATA"
echo "machine class $CLASS; raw data in $DATA"

# Build what the steps run (Release, no tests, when BUILD is not configured yet).
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-19 \
    -DCMAKE_CXX_COMPILER=clang++-19 -DECJIT_BUILD_TESTS=OFF
fi
cmake --build "$BUILD" -j2 --target ecjit bench_encode bench_degraded bench_fft bench_first_codec
ECJIT=$BUILD/tools/ecjit

# The peers; each one optional.
LEOPARD=""; RSSIMD=""
if step matrix || step wide8; then
  LEOPARD=$("$ROOT/bench/leopard8/build.sh") || { echo "  klauspost/reedsolomon: not built"; LEOPARD=""; }
fi
if step wide16; then
  if "$ROOT/bench/rs_simd/build.sh" >&2; then RSSIMD=$ROOT/bench/rs_simd/target/release/rs_simd
  else echo "  reed-solomon-simd: not built"; fi
fi
if step encode || step degraded; then
  if [[ -z "${ECJIT_ISAL231:-}" ]]; then
    lib=$("$ROOT/bench/fetch_isal231.sh" "$BUILD/isal-2.31") && export ECJIT_ISAL231="$lib" ||
      echo "  ISA-L 2.31: not built"
  fi
  find_isal231
fi
write_machine "$DATA/machine.txt"
{ echo "leopard8=${LEOPARD:-not built}"; echo "rs_simd=${RSSIMD:-not built}"; } >>"$DATA/machine.txt"

MT=$(min_time_arg "$BUILD/bench/bench_encode" "$SECS")
# finish NAME T0 CMD...: NAME.meta's command, duration and the repetitions report.py quotes.
finish() {
  finish_meta "$DATA" "$@"
  echo "reps=$REPS" >>"$DATA/$1.meta"
}
# run NAME OUTPUT CMD...: waits for a quiet machine, runs CMD into OUTPUT, records it in NAME.meta.
run() {
  local name=$1 out=$2 t0; shift 2
  wait_quiet "$DATA" "$name"
  t0=$SECONDS
  "$@" >"$out"
  finish "$name" "$t0" "${@#"$BUILD"/}"
}
# gbench NAME FILTER: bench_encode's benchmarks matching FILTER, medians of REPS in random order,
# JSON into NAME.json.
gbench() {
  run "$1" "$DATA/$1.console.txt" "$BUILD/bench/bench_encode" "--benchmark_filter=$2" \
    --benchmark_min_time="$MT" --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
    --benchmark_out="$DATA/$1.json" --benchmark_out_format=json
}

if step encode; then
  echo "[encode] bench_encode RS(10,4), 64 KiB, $REPS repetitions"
  gbench encode '^BM_(isal|isal231|jerasure|gf_complete)/(.*/)?65536$|^BM_ecjit/gf(8|16|32|64)/host/auto/O3/65536$'
fi

if step matrix; then
  echo "[matrix] rs-vand encode / reconstruct against klauspost New(k, m)"
  wait_quiet "$DATA" matrix
  t0=$SECONDS
  : >"$DATA/matrix.txt"
  for km in 6:3 10:4 12:4 20:4; do
    k=${km%:*} m=${km#*:}
    for size in 4096 65536 1048576; do
      for ((r = 0; r < REPS; r++)); do
        out=$("$ECJIT" demo --spec "rs-vand:k=$k,m=$m" --size "$size" --lose "0-$((m - 1))" --seconds "$SECS")
        enc=$(sed -n 's/^encode: *\([0-9.]*\) GB\/s.*/\1/p' <<<"$out")
        dec=$(sed -n 's/^reconstruct: *\([0-9.]*\) GB\/s.*/\1/p' <<<"$out")
        echo "ecjit $k $m $size $enc $dec" >>"$DATA/matrix.txt"
        if [[ -n $LEOPARD ]]; then
          peer=$("$LEOPARD" bench-matrix "$k" "$m" "$size" "$SECS" "$m")
          echo "klauspost $k $m $size $(sed 's/encode_gbps=\([0-9.]*\) decode_gbps=\([0-9.]*\)/\1 \2/' <<<"$peer")" \
            >>"$DATA/matrix.txt"
        fi
      done
    done
  done
  finish matrix "$t0" "ecjit demo --spec rs-vand:k=K,m=M --size SIZE --lose 0-(M-1) --seconds $SECS" \
    "; leopard8 bench-matrix K M SIZE $SECS M"
fi

if step degraded; then
  echo "[degraded] bench_degraded RS(10,4), 4K / 64K / 1M, 1 and 1..4 lost"
  backends=ecjit,dropin,isal-2.30 isal=()
  [[ -n "${ECJIT_ISAL231:-}" ]] && { backends+=,isal-2.31; isal=(--isal231 "$ECJIT_ISAL231"); }
  run degraded "$DATA/degraded.txt" "$BUILD/bench/bench_degraded" --sizes 4K,64K,1M --lost 1,4 --k 10 --m 4 \
    --backends "$backends" "${isal[@]}" --reps "$REPS"
fi

if step wide16; then
  echo "[wide16] bench_fft rs-fft GF(2^16) against reed-solomon-simd"
  crate=(); [[ -n $RSSIMD ]] && crate=(--crate "$RSSIMD")
  run wide16 "$DATA/wide16.txt" "$BUILD/bench/bench_fft" \
    --cases 32:32:4K,128:128:4K,1024:1024:4K,32:32:64K,128:128:64K,1024:1024:64K "${crate[@]}" \
    --reps "$REPS" --seconds "$SECS" --random-loss --random-sets 20
fi

if step wide8; then
  echo "[wide8] bench_fft rs-fft GF(2^8) against klauspost's leopard8"
  crate=(); [[ -n $LEOPARD ]] && crate=(--crate "$LEOPARD")
  run wide8 "$DATA/wide8.txt" "$BUILD/bench/bench_fft" --gf 8 \
    --cases 32:32:4K,128:128:4K,32:32:64K,64:64:64K,128:128:64K "${crate[@]}" \
    --reps "$REPS" --seconds "$SECS" --random-loss
fi

if step xor; then
  echo "[xor] bench_encode XOR codes against libJerasure, 64 KiB"
  gbench xor '^BM_xor_encode/(ecjit|jerasure)/.*/65536$'
fi

if step first; then
  echo "[first] bench_first_codec"
  wait_quiet "$DATA" first
  t0=$SECONDS
  : >"$DATA/first.txt"
  for spec in rs-vand:k=10,m=4 rs-fft:k=32,m=32; do
    "$BUILD/bench/bench_first_codec" --spec "$spec" --sizes 4K,64K >>"$DATA/first.txt"
    echo >>"$DATA/first.txt"
  done
  finish first "$t0" "bench_first_codec --spec S --sizes 4K,64K for S = rs-vand:k=10,m=4, rs-fft:k=32,m=32"
fi

write=(--no-write); ((WRITE)) && write=()
"$PY" "$ROOT/bench/report.py" --class "$CLASS" --data "$DATA" --root "$ROOT" "${write[@]}"
echo "report.sh: $((SECONDS - START)) s, of which ${WAITED_TOTAL} s waiting for a quiet machine"
