#!/usr/bin/env bash
# bench/figures.sh: measures, then draws the benchmark figures of docs/figures/ (bench/plots.py).
#   bench/figures.sh            (about 7 minutes of measuring on a quiet 2-core EPYC, plus waits)
# Runs, with the binaries already built in $BUILD (nothing is compiled here):
#   1. ecjit stats --sweep --csv           Nešković 2018, Figure 5-4 counts (deterministic, no timing)
#   2. bench_encode (Google Benchmark)     RS(10,4) at 64 KiB, every backend, 3 repetitions
#   3. plots.py measure-encode-k           RS(k,4) encode at 64 KiB for k = 2..32 (bench_encode has k = 10 only)
#   4. bench_degraded                      degraded reads, ecjit vs ISA-L, per lost count
#   4b. bench_degraded per k (degraded_k)  degraded reads against k = $DEG_KS, 64 KiB, 1 and 1..4 lost
#   5. plots.py measure-fig56              Nešković 2018, Figures 5-5 / 5-6: RS(n, 3n/4) encode, O0 and O3,
#                                          scalar / SSE / AVX2 tiers, clmul-shift (about 2 minutes)
#   6. plots.py measure-fig57              Nešković 2018, Figure 5-7 as llvm-mca-19 estimates (AArch64
#                                          scalar / NEON, Cortex-A72, 2.0 GHz nominal; no timing)
#   7. bench_fft (step rsfft)              rs-fft against reed-solomon-simd: encode, and decode losing
#                                          originals / one recovery shard / half recovery shards / a
#                                          random set
#                                          ($RSFFT_CASES; the crate's binary from bench/rs_simd/build.sh
#                                          or $ECJIT_RS_SIMD_BIN when built, never built here; about 4
#                                          minutes)
# raw output in $DATA (docs/figures/data), then plots.py draws SVG + PNG (+ the plotted values as
# CSV) into $OUT (docs/figures). Before each timing run it waits, polling every 15 s, until the
# 1-minute load average is below 1.0 (at most LOAD_WAIT s per run and LOAD_WAIT_TOTAL s in all,
# so the script stays near 10 minutes); a run that starts above that is labelled "measured under
# load" on its figure.
# env: BUILD (default build), DATA, OUT, PY (default /usr/bin/python3: Debian's matplotlib),
#      MIN_TIME (bench_encode seconds per benchmark, default 0.1), REPS (default 3),
#      LOAD_WAIT (default 600), LOAD_WAIT_TOTAL (default 600), LOAD_MAX (default 1.0),
#      ECJIT_ISAL231 (libisal-bound.so of ISA-L 2.31; used only when already built, never built here),
#      DEG_KS (default 4,6,8,10,12,16,20), RSFFT_CASES (default 32:32, 128:128, 1024:1024 at 4 KiB and
#      64 KiB, 16384:16384 at 4 KiB), STEPS (default
#      sweep,encode,encode_k,degraded,degraded_k,fig56,fig57,rsfft: a subset re-measures only those; the
#      other figures are redrawn from the data already in $DATA)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
DATA=${DATA:-$ROOT/docs/figures/data}
OUT=${OUT:-$ROOT/docs/figures}
PY=${PY:-/usr/bin/python3}
MIN_TIME=${MIN_TIME:-0.1}
REPS=${REPS:-3}
STEPS=${STEPS:-sweep,encode,encode_k,degraded,degraded_k,fig56,fig57,rsfft}
DEG_KS=${DEG_KS:-4,6,8,10,12,16,20}
RSFFT_CASES=${RSFFT_CASES:-32:32:4K,128:128:4K,1024:1024:4K,16384:16384:4K,32:32:64K,128:128:64K,1024:1024:64K}
step() { [[ ",$STEPS," == *",$1,"* ]]; }
ECJIT="$BUILD/tools/ecjit"
START=$SECONDS

for f in "$ECJIT" "$BUILD/bench/bench_encode" "$BUILD/bench/bench_degraded"; do
  [[ -x "$f" ]] || { echo "figures.sh: $f is missing (build ecjit first)" >&2; exit 1; }
done
if ! "$PY" -c 'import matplotlib, numpy' 2>/dev/null; then
  echo "figures.sh: $PY lacks matplotlib: apt-get install -y --no-install-recommends python3-matplotlib" >&2
  exit 1
fi
mkdir -p "$DATA" "$OUT"

# shellcheck source=bench/bench_lib.sh
source "$ROOT/bench/bench_lib.sh"
# ISA-L 2.31 only when it is already built (bench/fetch_isal231.sh builds it; not done here).
find_isal231

# bench_degraded's backends (steps degraded and degraded_k)
BACKENDS=ecjit,dropin,isal-2.30
[[ -n "${ECJIT_ISAL231:-}" ]] && BACKENDS+=,isal-2.31

# The machine, for every figure's label.
write_machine "$DATA/machine.txt"

if step sweep; then
  echo "[1/7] ecjit stats --sweep (Figure 5-4 counts, no timing)"
  t0=$SECONDS
  echo "date=$(date -u +%Y-%m-%d\ %H:%M\ UTC)" >"$DATA/stats_sweep.meta"
  (cd "$DATA" && "$ECJIT" stats --sweep --csv stats_sweep.csv >stats_sweep.txt)
  finish_meta "$DATA" stats_sweep "$t0" ecjit stats --sweep --csv stats_sweep.csv
fi

MT=$(min_time_arg "$BUILD/bench/bench_ops" "$MIN_TIME")
# RS(10,4) at 64 KiB: the baselines, ecjit's tuned codec per field and tier, forced strategies.
FILTER='^BM_(isal|isal231|isal_xor_gen|jerasure|gf_complete|reference)/(.*/)?65536$'
FILTER+='|^BM_ecjit/gf(8|16|32|64)/host/auto/O3/65536$|^BM_ecjit/gf8-isal-cauchy/host/auto/O3/65536$'
FILTER+='|^BM_ecjit/gf8/(host-gfni|host-avx512f,-gfni|host-avx2,-gfni)/auto/O3/65536$'
FILTER+='|^BM_ecjit/gf8/host/(gfni|split-table|clmul-shift)/O3/65536$|^BM_ecjit/gf8/host/clmul-shift/O0/65536$'
if step encode; then
  echo "[2/7] bench_encode RS(10,4), 64 KiB, every backend ($REPS repetitions, min time $MT)"
  wait_quiet "$DATA" bench_encode
  t0=$SECONDS
  "$BUILD/bench/bench_encode" "--benchmark_filter=$FILTER" --benchmark_min_time="$MT" \
    --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
    --benchmark_out="$DATA/bench_encode.json" --benchmark_out_format=json >"$DATA/bench_encode.console.txt" 2>&1
  finish_meta "$DATA" bench_encode "$t0" bench_encode "--benchmark_filter=$FILTER" --benchmark_min_time="$MT" \
    --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true
fi

if step encode_k; then
  echo "[3/7] encode RS(k,4) against k, 64 KiB (ecjit demo; ISA-L, drop-in, Jerasure through ctypes)"
  wait_quiet "$DATA" encode_k
  t0=$SECONDS
  "$PY" "$ROOT/bench/plots.py" measure-encode-k --out "$DATA/encode_k.csv" --build "$BUILD" --reps "$REPS" \
    --seconds 0.3 --size 65536 --m 4
  finish_meta "$DATA" encode_k "$t0" plots.py measure-encode-k --reps "$REPS" --seconds 0.3 --size 65536 --m 4
fi

if step degraded; then
  echo "[4/7] bench_degraded: RS(10,4), random erasure sets, 4K / 64K / 1M shards"
  wait_quiet "$DATA" degraded
  t0=$SECONDS
  "$BUILD/bench/bench_degraded" --sizes 4K,64K,1M --lost 1,2,4 --k 10 --m 4 --backends "$BACKENDS" \
    --reps "$REPS" >"$DATA/degraded.txt"
  finish_meta "$DATA" degraded "$t0" bench_degraded --sizes 4K,64K,1M --lost 1,2,4 --k 10 --m 4 --backends "$BACKENDS" --reps "$REPS"
fi

if step degraded_k; then
  echo "[4b/7] bench_degraded against k: RS(k,4), k = $DEG_KS, 64 KiB shards, 1 and 1..4 lost"
  wait_quiet "$DATA" degraded_k
  t0=$SECONDS
  : >"$DATA/degraded_k.txt"
  for k in ${DEG_KS//,/ }; do
    echo "## k=$k" >>"$DATA/degraded_k.txt"
    "$BUILD/bench/bench_degraded" --sizes 64K --lost 1,4 --k "$k" --m 4 --backends "$BACKENDS" \
      --reps "$REPS" --calls 1000 >>"$DATA/degraded_k.txt"
  done
  finish_meta "$DATA" degraded_k "$t0" bench_degraded --sizes 64K --lost 1,4 --k "$DEG_KS" --m 4 --backends "$BACKENDS" --reps "$REPS" --calls 1000
fi

if step fig56; then
  echo "[5/7] Figures 5-5 / 5-6: RS(n, 3n/4) encode at 64 KiB, GF(2^8) / GF(2^16), O0 / O3, three tiers"
  wait_quiet "$DATA" fig56
  t0=$SECONDS
  "$PY" "$ROOT/bench/plots.py" measure-fig56 --out "$DATA/fig56.csv" --build "$BUILD" --size 65536 \
    --seconds 0.2 --meta "$DATA/fig56.meta"
  finish_meta "$DATA" fig56 "$t0" plots.py measure-fig56 --size 65536 --seconds 0.2
fi

if step fig57; then
  if command -v llvm-mca-19 >/dev/null; then
    echo "[6/7] Figure 5-7: llvm-mca-19 estimates for AArch64 (Cortex-A72, 2.0 GHz nominal; no timing)"
    t0=$SECONDS
    echo "date=$(date -u +%Y-%m-%d\ %H:%M\ UTC)" >"$DATA/fig57.meta"
    "$PY" "$ROOT/bench/plots.py" measure-fig57 --out "$DATA/fig57.csv" --build "$BUILD"
    finish_meta "$DATA" fig57 "$t0" plots.py measure-fig57 "(llvm-mca-19 -mtriple=aarch64 -mcpu=cortex-a72, 2.0 GHz nominal)"
  else
    echo "[6/7] Figure 5-7 skipped: llvm-mca-19 missing (Debian package llvm-19)"
  fi
fi

if step rsfft; then
  crate=${ECJIT_RS_SIMD_BIN:-$ROOT/bench/rs_simd/target/release/rs_simd}
  if [[ ! -x "$BUILD/bench/bench_fft" ]]; then
    echo "[7/7] rs-fft skipped: $BUILD/bench/bench_fft missing"
  else
    echo "[7/7] bench_fft: rs-fft against reed-solomon-simd ($RSFFT_CASES)"
    crate_args=()
    if [[ -x "$crate" ]]; then crate_args=(--crate "$crate")
    else echo "  the crate's binary is not built (bench/rs_simd/build.sh): ecjit alone"; fi
    wait_quiet "$DATA" rs_fft
    echo "reps=$REPS" >>"$DATA/rs_fft.meta"
    t0=$SECONDS
    for run in originals:"" mixed:--mixed half:"--recovery-lost half" random:--random-loss; do
      # shellcheck disable=SC2086  # the flag is one or two words
      "$BUILD/bench/bench_fft" --cases "$RSFFT_CASES" --reps "$REPS" --seconds 0.5 "${crate_args[@]}" \
        ${run#*:} >"$DATA/rs_fft_${run%%:*}.txt"
    done
    finish_meta "$DATA" rs_fft "$t0" bench_fft --cases "$RSFFT_CASES" --reps "$REPS" --seconds 0.5 "${crate_args[@]}" \
      "[ | --mixed | --recovery-lost half | --random-loss]"
  fi
fi

echo "plotting"
"$PY" "$ROOT/bench/plots.py" --data "$DATA" --out "$OUT"
echo
echo "figures (SVG + PNG, each with the CSV of its plotted values) in $OUT:"
ls -1 "$OUT"/*.svg "$OUT"/*.png | sed 's/^/  /'
echo "raw data and run metadata (date, load average) in $DATA"
echo "figures.sh: $((SECONDS - START)) s, of which ${WAITED_TOTAL} s waiting for a quiet machine"
