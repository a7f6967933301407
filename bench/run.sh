#!/usr/bin/env bash
# bench/run.sh: builds bench_encode, runs it with short min times, prints ecjit / ISA-L ratio tables from its JSON.
#   bench/run.sh [extra bench_encode flags, e.g. --ecjit_large or --benchmark_filter=gf8]
#   env: BUILD (build dir, default build-tools), MIN_TIME (seconds per benchmark, default 0.2),
#        REPS (repetitions, default 3: the tables show medians; the repetitions run in random
#        order so that a burst of load on a shared VM spreads over every benchmark instead of
#        singling one out), OUT (JSON file, default $BUILD/bench_encode.json),
#        ECJIT_ISAL231 (libisal-bound.so of ISA-L 2.31; default: bench/fetch_isal231.sh builds it)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-tools}
MIN_TIME=${MIN_TIME:-0.2}
REPS=${REPS:-3}
OUT=${OUT:-$BUILD/bench_encode.json}

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_COMPILER=clang-19 -DECJIT_BUILD_TESTS=OFF
fi
ninja -C "$BUILD" -j2 bench_encode
# ISA-L 2.31 (GFNI kernels) as the strongest GF(2^8) baseline, built from the isal-sys crate;
# the benchmarks run without it when it cannot be had (no network, no nasm).
if [[ -z "${ECJIT_ISAL231:-}" ]]; then
  if lib=$("$ROOT/bench/fetch_isal231.sh" "$BUILD/isal-2.31"); then export ECJIT_ISAL231="$lib"
  else echo "bench/run.sh: ISA-L 2.31 baseline unavailable (see above); continuing without it" >&2; fi
fi
"$BUILD/bench/bench_encode" --benchmark_min_time="$MIN_TIME" \
  --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
  --benchmark_out="$OUT" --benchmark_out_format=json "$@"
echo
python3 "$ROOT/bench/ratio_table.py" "$OUT"
