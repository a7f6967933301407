#!/usr/bin/env bash
# bench/files_bench.sh: file-protection benchmark, ecjit vs par2cmdline vs zfec, at the same
# redundancy (40%: ecjit's default RS(10,4), par2 -r40, zfec -k 10 -m 14) on the same files.
#
# Measures, per tool, the wall-clock time and throughput (MB/s = 10^6 bytes of data files per
# second) of
#   create  ecjit protect DIR           | par2 create -r40 -s1MiB per file | zfec -k10 -m14 per file
#   verify  ecjit scrub DIR (clean set) | par2 verify per file             | n/a (zfec has none)
#   repair  ecjit scrub --repair DIR    | par2 repair per file             | zunfec from 10 of 14
# and prints a markdown table on stdout (progress goes to stderr), with the speed ratios
# ecjit vs par2 and ecjit vs zfec (time of the other tool / time of ecjit: > 1 = ecjit faster),
# the machine (nproc, CPU model, load) and the tool versions.
#
# Run:   bench/files_bench.sh [--size 1G] [--files 16] [--runs 2] [--keep] [--no-sync]
#                             [--tools "ecjit par2 zfec"] [--threads N] [--zfec-jobs N]
#        bench/files_bench.sh --size 64M --files 4          # quick check, ~1 minute
#   env: ECJIT_BENCH_DIR (scratch + venv, default /tmp/ecjit-files-bench),
#        ECJIT (the CLI, default build/tools/ecjit beside this script)
#
# Method (read before quoting numbers):
# - Data: --size bytes in --files equal files of random bytes (AES-CTR keystream from openssl,
#   else /dev/urandom), in $ECJIT_BENCH_DIR/work/orig. Each tool works on its own copy, made
#   before its runs and deleted after them, so at most ~3.5x --size of disk is in use.
# - Page cache: nothing is dropped (root-only and unreliable on a shared VM). Every operation is
#   run --runs times (default 2) and the table reports the LAST run (the first one warms the
#   cache and the JIT / venv); every run's time is listed too. The data set should fit in RAM.
# - Durability: ecjit fsyncs what it writes, par2 and zfec do not. So that all three are timed
#   to the same point, each timed step ends with `sync FILES` (fsync of exactly the files that
#   step wrote: redundancy, shares, repaired data files), and a global `sync` runs untimed before
#   each step. --no-sync leaves the fsync out of the timing (ecjit still fsyncs internally).
# - Threads: ecjit --threads N (default nproc) workers per file, files one after another;
#   par2 -tN per file, files one after another (one par2 set per file, like ecjit's per-file
#   redundancy); zfec is single-threaded, so its per-file commands run N at a time
#   (--zfec-jobs, default nproc) through xargs -P.
# - par2 block size: -s 1048576 (1 MiB, equal to ecjit's default unit), so a 64 MiB file has
#   64 source blocks and -r40 gives 26 recovery blocks (40.7% written). ecjit writes whole
#   1 MiB ECC units for a file's last, partial stripe, so a 64 MiB file (6.4 stripes of 10 MiB)
#   gets 7 x 4 MiB = 43.8% of redundancy; zfec writes all 14 shares (140%: a copy of the data).
# - Damage (repair): in every data file, 1 MiB in the middle (at size/2 - 512 KiB, not unit
#   aligned, so it hits 2 units / par2 blocks) is overwritten with random bytes, with the file's
#   mtime kept (silent corruption: ecjit reports a file whose mtime moved as "modified", i.e.
#   rewritten by a user, and does not roll it back). Fresh damage before every repair run.
#   ecjit: before the first repair run, an untimed `ecjit scrub` must report every file damaged
#   (exit 4); after the last one, an untimed `ecjit scrub` must report the set clean (exit 0).
#   par2 repair rewrites each damaged file whole (its only mode); the .1 backups it leaves are
#   deleted untimed. zfec has no per-block repair: the data file is damaged as well, shares
#   00, 03, 06 and 09 (4 of the 10 systematic ones, so a real decode is needed) are moved away
#   (the "delete"), and zunfec rebuilds the whole file from the other 10; the 4 are put back
#   untimed afterwards. So ecjit rewrites 2 MiB per file, par2 and zfec the whole file.
# - Every repair is checked with cmp against the originals: PASS / FAIL in the table.
# - Set-up: par2 from Debian (apt-get install -y par2 when missing and root, else skipped);
#   zfec from PyPI into $ECJIT_BENCH_DIR/venv (kept for later runs; skipped if pip fails).
#   The scratch data ($ECJIT_BENCH_DIR/work) is deleted at the end unless --keep.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ECJIT=${ECJIT:-$ROOT/build/tools/ecjit}
BENCH_DIR=${ECJIT_BENCH_DIR:-/tmp/ecjit-files-bench}
WORK=$BENCH_DIR/work
VENV=$BENCH_DIR/venv

SIZE_ARG=1G
NFILES=16
RUNS=2
KEEP=0
DO_SYNC=1
TOOLS="ecjit par2 zfec"
NCPU=$(nproc)
THREADS=$NCPU
ZFEC_JOBS=$NCPU
PAR2_BLOCK=1048576
K=10
M=4
DAMAGE_MAX=1048576

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --size) SIZE_ARG=$2; shift 2 ;;
    --files) NFILES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-sync) DO_SYNC=0; shift ;;
    --tools) TOOLS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --zfec-jobs) ZFEC_JOBS=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "files_bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "[files_bench] $*" >&2; }
die() { echo "files_bench.sh: $*" >&2; exit 1; }

TOTAL=$(numfmt --from=iec "$SIZE_ARG" 2>/dev/null) || die "bad --size '$SIZE_ARG' (e.g. 64M, 1G)"
[[ $NFILES =~ ^[1-9][0-9]*$ ]] || die "bad --files '$NFILES'"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "bad --runs '$RUNS'"
FSIZE=$(( TOTAL / NFILES ))
(( FSIZE >= 4096 )) || die "files of $FSIZE bytes are too small"
TOTAL=$(( FSIZE * NFILES ))
[[ -x $ECJIT ]] || die "no ecjit CLI at $ECJIT (build it, or set ECJIT)"

# ---------------------------------------------------------------- set-up -------------------
mkdir -p "$BENCH_DIR"
AVAIL=$(( $(df -Pk "$BENCH_DIR" | awk 'NR==2 {print $4}') * 1024 ))
NEED=$(( TOTAL * 7 / 2 + 256 * 1024 * 1024 ))
(( AVAIL >= NEED )) || die "$(numfmt --to=iec $AVAIL) free under $BENCH_DIR, need ~$(numfmt --to=iec $NEED) for --size $SIZE_ARG: use a smaller --size or another ECJIT_BENCH_DIR"

declare -A SKIP=()
has_tool() { [[ " $TOOLS " == *" $1 "* && -z ${SKIP[$1]:-} ]]; }

if has_tool par2 && ! command -v par2 >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing par2 (apt-get)"
    { apt-get install -y par2 || { apt-get update && apt-get install -y par2; }; } >&2 \
      || SKIP[par2]="apt-get install par2 failed"
  else
    SKIP[par2]="par2 not installed and not root (apt-get install par2)"
  fi
  command -v par2 >/dev/null || SKIP[par2]=${SKIP[par2]:-"par2 not found after install"}
fi
if has_tool zfec && [[ ! -x $VENV/bin/zfec ]]; then
  log "installing zfec into $VENV (pip)"
  { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q zfec; } >&2 \
    || SKIP[zfec]="python3 -m venv / pip install zfec failed"
  [[ -x $VENV/bin/zfec ]] || SKIP[zfec]=${SKIP[zfec]:-"zfec not found after pip install"}
fi
for t in "${!SKIP[@]}"; do log "skipping $t: ${SKIP[$t]}"; done

cleanup() { if [[ $KEEP == 0 ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi; }
trap cleanup EXIT

rm -rf "$WORK"
mkdir -p "$WORK/orig"
NAMES=()
for (( i = 0; i < NFILES; i++ )); do NAMES+=("$(printf 'file%02d.bin' "$i")"); done

log "generating $NFILES files of $FSIZE bytes ($(numfmt --to=iec $TOTAL)) in $WORK/orig"
gen() {  # gen FILE INDEX: FSIZE random bytes
  if command -v openssl >/dev/null; then
    local key iv
    key=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
    iv=$(printf '%032x' "$2")
    openssl enc -aes-128-ctr -K "$key" -iv "$iv" -nosalt </dev/zero 2>/dev/null | head -c "$FSIZE" >"$1" || true
  fi
  [[ $(stat -c %s "$1" 2>/dev/null || echo 0) == "$FSIZE" ]] || head -c "$FSIZE" /dev/urandom >"$1"
}
for i in "${!NAMES[@]}"; do gen "$WORK/orig/${NAMES[$i]}" "$i"; done

# ---------------------------------------------------------------- helpers ------------------
declare -A TIME=() ALLRUNS=() STATUS=() CHECK=() REDUND=()
LAST_T=0 LAST_RC=0

now() { echo "$EPOCHREALTIME"; }
# timed STEP_DESC SYNC_GLOB_FN CMD...: runs CMD (then fsyncs the files the function named in
# $SYNCFN prints, when --no-sync is not given); sets LAST_T (seconds) and LAST_RC.
timed() {
  local t0 t1
  sync
  t0=$(now)
  set +e
  "$@"
  LAST_RC=$?
  if [[ $DO_SYNC == 1 && -n ${SYNCFN:-} ]]; then
    local files=()
    mapfile -t files < <($SYNCFN)
    (( ${#files[@]} )) && sync -- "${files[@]}"
  fi
  set -e
  t1=$(now)
  LAST_T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}
record() {  # record TOOL OP: append LAST_T to the runs, keep the last
  local k="$1.$2"
  TIME[$k]=$LAST_T
  ALLRUNS[$k]="${ALLRUNS[$k]:+${ALLRUNS[$k]}, }$LAST_T"
  log "$1 $2: ${LAST_T}s (exit $LAST_RC)"
}
expect_rc() {  # expect_rc TOOL OP WANT
  local k="$1.$2"
  if [[ $LAST_RC == "$3" ]]; then STATUS[$k]=${STATUS[$k]:-"exit $3"}
  else STATUS[$k]="exit $LAST_RC (want $3)"; log "$1 $2: exit $LAST_RC, expected $3"; fi
}
copy_data() {  # copy_data DIR
  rm -rf "$1"; mkdir -p "$1"
  cp "$WORK/orig/"* "$1/"
}
damage() {  # damage DIR: random bytes in the middle of every file (1 MiB, at most a 20th of it: within what every tool can repair), mtime kept
  local f n len off mt
  for n in "${NAMES[@]}"; do
    f=$1/$n
    len=$(( FSIZE / 20 < DAMAGE_MAX ? FSIZE / 20 : DAMAGE_MAX ))
    off=$(( FSIZE / 2 - len / 2 ))
    mt=$(stat -c %y "$f")
    head -c "$len" /dev/urandom | dd of="$f" bs="$len" seek="$off" oflag=seek_bytes \
      conv=notrunc iflag=fullblock status=none
    touch -d "$mt" "$f"
  done
}
compare() {  # compare DIR: PASS when every file equals its original
  local n bad=0
  for n in "${NAMES[@]}"; do
    cmp -s "$WORK/orig/$n" "$1/$n" || { bad=$((bad + 1)); log "cmp: $1/$n differs from the original"; }
  done
  if (( bad == 0 )); then echo PASS; else echo "FAIL ($bad of $NFILES files differ)"; fi
}
set_check() {  # set_check TOOL OP RESULT: a FAIL in any run sticks
  local k="$1.$2"
  [[ ${CHECK[$k]:-} == FAIL* ]] || CHECK[$k]=$3
}
redundancy_bytes() { du -cb "$@" 2>/dev/null | tail -1 | cut -f1; }

# ---------------------------------------------------------------- ecjit --------------------
bench_ecjit() {
  local D=$WORK/ecjit
  copy_data "$D"
  ecjit_files() { printf '%s\n' "$D"/.ecjit/* 2>/dev/null || true; }
  data_files() { printf "$D/%s\n" "${NAMES[@]}"; ecjit_files; }
  local r
  for (( r = 1; r <= RUNS; r++ )); do
    rm -rf "$D/.ecjit"
    SYNCFN=ecjit_files timed "$ECJIT" protect "$D" --threads "$THREADS" --quiet >/dev/null
    record ecjit create; expect_rc ecjit create 0
  done
  REDUND[ecjit]=$(redundancy_bytes "$D/.ecjit")
  for (( r = 1; r <= RUNS; r++ )); do
    SYNCFN= timed "$ECJIT" scrub "$D" --threads "$THREADS" --quiet >/dev/null
    record ecjit verify; expect_rc ecjit verify 0
  done
  CHECK[ecjit.verify]="clean set reported clean"
  [[ ${STATUS[ecjit.verify]} == "exit 0" ]] || CHECK[ecjit.verify]="FAIL: clean set not reported clean"

  damage "$D"
  local out rc=0 ndam
  out=$("$ECJIT" scrub "$D" --json --quiet) || rc=$?
  ndam=$(grep -o '"verdict": "damaged"' <<<"$out" | wc -l)
  if [[ $rc == 4 && $ndam == "$NFILES" ]]; then DETECT="ecjit scrub of the damaged set: exit 4, $ndam of $NFILES files damaged (expected)"
  else DETECT="UNEXPECTED: ecjit scrub of the damaged set: exit $rc, $ndam of $NFILES files reported damaged (want exit 4, all)"; log "$DETECT"; fi
  for (( r = 1; r <= RUNS; r++ )); do
    (( r == 1 )) || damage "$D"
    SYNCFN=data_files timed "$ECJIT" scrub "$D" --repair --threads "$THREADS" --quiet >/dev/null
    record ecjit repair; expect_rc ecjit repair 3
    set_check ecjit repair "$(compare "$D")"
  done
  rc=0; "$ECJIT" scrub "$D" --quiet >/dev/null || rc=$?
  if [[ $rc == 0 ]]; then AFTER="ecjit scrub after the repairs: exit 0 (clean)"
  else AFTER="UNEXPECTED: ecjit scrub after the repairs: exit $rc (want 0)"; log "$AFTER"; fi
  rm -rf "$D"
}

# ---------------------------------------------------------------- par2 ---------------------
par2_each() {  # par2_each DIR VERB [options]: par2 VERB per file, first failure's exit status
  local D=$1 verb=$2 n rc=0 r; shift 2
  for n in "${NAMES[@]}"; do
    r=0
    if [[ $verb == create ]]; then par2 create -q -q "$@" "$D/$n.par2" "$D/$n" >/dev/null || r=$?
    else par2 "$verb" -q -q "$@" "$D/$n.par2" >/dev/null || r=$?; fi
    (( rc != 0 || r == 0 )) || rc=$r
  done
  return "$rc"
}
bench_par2() {
  local D=$WORK/par2
  copy_data "$D"
  par2_files() { printf '%s\n' "$D"/*.par2; }
  data_files() { printf "$D/%s\n" "${NAMES[@]}"; }
  local r
  for (( r = 1; r <= RUNS; r++ )); do
    rm -f "$D"/*.par2
    SYNCFN=par2_files timed par2_each "$D" create -r40 -s$PAR2_BLOCK -t"$THREADS"
    record par2 create; expect_rc par2 create 0
  done
  REDUND[par2]=$(redundancy_bytes "$D"/*.par2)
  for (( r = 1; r <= RUNS; r++ )); do
    SYNCFN= timed par2_each "$D" verify -t"$THREADS"
    record par2 verify; expect_rc par2 verify 0
  done
  CHECK[par2.verify]="clean set reported clean"
  [[ ${STATUS[par2.verify]} == "exit 0" ]] || CHECK[par2.verify]="FAIL: clean set not reported clean"
  for (( r = 1; r <= RUNS; r++ )); do
    damage "$D"
    SYNCFN=data_files timed par2_each "$D" repair -t"$THREADS"
    record par2 repair; expect_rc par2 repair 0
    set_check par2 repair "$(compare "$D")"
    rm -f "$D"/*.bin.[0-9]*
  done
  rm -rf "$D"
}

# ---------------------------------------------------------------- zfec ---------------------
ZFEC_DROP=(00 03 06 09)
bench_zfec() {
  local D=$WORK/zfec S=$WORK/zfec/shares X=$WORK/zfec/dropped
  copy_data "$D"
  share_files() { printf '%s\n' "$S"/*.fec; }
  data_files() { printf "$D/%s\n" "${NAMES[@]}"; }
  zfec_create() {
    # -p: zfec's default share prefix is the input path as given, which -d does not re-root
    # shellcheck disable=SC2016
    printf '%s\0' "${NAMES[@]}" | xargs -0 -n1 -P "$ZFEC_JOBS" bash -c \
      'exec "$1/bin/zfec" -q -f -k "$4" -m "$5" -d "$3" -p "$6" "$2/$6"' _ "$VENV" "$D" "$S" "$K" $((K + M))
  }
  zfec_repair() {
    # shellcheck disable=SC2016
    printf '%s\0' "${NAMES[@]}" | xargs -0 -n1 -P "$ZFEC_JOBS" bash -c \
      'exec "$1/bin/zunfec" -f -o "$2/$4" "$3/$4".*.fec >/dev/null' _ "$VENV" "$D" "$S"
  }
  local r n s
  for (( r = 1; r <= RUNS; r++ )); do
    rm -rf "$S"; mkdir -p "$S"
    SYNCFN=share_files timed zfec_create
    record zfec create; expect_rc zfec create 0
  done
  REDUND[zfec]=$(redundancy_bytes "$S")
  TIME[zfec.verify]=n/a
  for (( r = 1; r <= RUNS; r++ )); do
    damage "$D"
    rm -rf "$X"; mkdir -p "$X"
    for n in "${NAMES[@]}"; do for s in "${ZFEC_DROP[@]}"; do
      mv "$S/$n.${s}_$((K + M)).fec" "$X/"; done; done
    SYNCFN=data_files timed zfec_repair
    record zfec repair; expect_rc zfec repair 0
    set_check zfec repair "$(compare "$D")"
    mv "$X"/*.fec "$S/"
  done
  rm -rf "$D"
}

# ---------------------------------------------------------------- run ----------------------
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
DETECT="" AFTER=""
for t in $TOOLS; do
  case $t in
    ecjit|par2|zfec) ;;
    *) die "unknown tool '$t' in --tools" ;;
  esac
  has_tool "$t" || continue
  log "== $t"
  "bench_$t"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report -------------------
mbps() { awk -v b="$TOTAL" -v t="$1" 'BEGIN { if (t > 0) printf "%.1f", b / t / 1e6; else print "-" }'; }
ratio() {  # ratio OTHER_TIME ECJIT_TIME
  if [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]]; then
    awk -v o="$1" -v e="$2" 'BEGIN { if (e > 0) printf "%.2fx", o / e; else print "-" }'
  else echo "n/a"; fi
}
version_of() {
  case $1 in
    ecjit) "$ECJIT" --version 2>&1 | head -1 ;;
    par2) par2 -V 2>&1 | head -1 ;;
    zfec) echo "zfec $("$VENV/bin/pip" show zfec 2>/dev/null | awk '/^Version:/ {print $2}') (PyPI, $("$VENV/bin/python" --version 2>&1))" ;;
  esac
}

CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
echo "# ecjit file protection vs par2cmdline vs zfec"
echo
echo "- data: $NFILES files x $(numfmt --to=iec $FSIZE) = $(numfmt --to=iec $TOTAL) ($TOTAL bytes) of random bytes, in $BENCH_DIR"
echo "- redundancy: 40% (ecjit rs-vand:k=10,m=4 unit 1 MiB; par2 -r40 -s$PAR2_BLOCK, one set per file; zfec -k 10 -m 14 per file)"
echo "- machine: nproc $NCPU, CPU \"$CPU\", $(awk '/^MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo); load average $LOAD_START at start, $LOAD_END at end (a shared VM: other work may run at the same time)"
echo "- threads: ecjit --threads $THREADS, par2 -t$THREADS (files one after another), zfec single-threaded with $ZFEC_JOBS files at a time (xargs -P)"
echo "- timing: wall clock of the last of $RUNS runs (the first warms the page cache; nothing is dropped from it)$([[ $DO_SYNC == 1 ]] && echo ", each run including an fsync of the files it wrote (ecjit fsyncs by itself, par2 and zfec do not)" || echo ", without fsync of the files written (--no-sync; ecjit still fsyncs by itself)")"
echo "- create's check column: bytes the tool wrote besides the data files (ecjit: 4 redundancy files with signature tables; par2: index + recovery files; zfec: all 14 shares, i.e. a copy of the data plus 4 parity shares)"
echo "- MB/s = 10^6 bytes of data files (not counting redundancy) per second; repair: 1 MiB damaged in the middle of every file (mtime kept); ecjit rewrites the 2 units hit, par2 rewrites each file whole, zfec rebuilds each file whole from 10 of its 14 shares (00, 03, 06, 09 deleted)"
echo "- versions:"
for t in $TOOLS; do
  if has_tool "$t"; then echo "  - $(version_of "$t")"; else echo "  - $t: skipped (${SKIP[$t]})"; fi
done
echo
echo "| tool | operation | time (s) | MB/s | all runs (s) | exit | check |"
echo "| --- | --- | ---: | ---: | --- | --- | --- |"
for t in $TOOLS; do
  has_tool "$t" || continue
  for op in create verify repair; do
    k=$t.$op
    if [[ ${TIME[$k]:-} == n/a ]]; then
      echo "| $t | $op | n/a | n/a | | | zfec has no verify |"; continue
    fi
    [[ -n ${TIME[$k]:-} ]] || continue
    chk=${CHECK[$k]:-}
    [[ $op == create ]] && chk="wrote $(numfmt --to=iec "${REDUND[$t]}") ($(awk -v r="${REDUND[$t]}" -v d="$TOTAL" 'BEGIN { printf "%.1f%%", 100 * r / d }') of data)"
    echo "| $t | $op | ${TIME[$k]} | $(mbps "${TIME[$k]}") | ${ALLRUNS[$k]} | ${STATUS[$k]} | $chk |"
  done
done
echo
echo "Speed of ecjit relative to the others (time of the other tool / time of ecjit; > 1 means ecjit is faster):"
echo
echo "| operation | ecjit (s) | par2 (s) | zfec (s) | ecjit vs par2 | ecjit vs zfec |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for op in create verify repair; do
  e=${TIME[ecjit.$op]:-n/a} p=${TIME[par2.$op]:-n/a} z=${TIME[zfec.$op]:-n/a}
  echo "| $op | $e | $p | $z | $(ratio "$p" "$e") | $(ratio "$z" "$e") |"
done
if [[ -n $DETECT || -n $AFTER ]]; then
  echo
  [[ -z $DETECT ]] || echo "- $DETECT"
  [[ -z $AFTER ]] || echo "- $AFTER"
fi
FAILED=0
for k in "${!CHECK[@]}"; do [[ ${CHECK[$k]} != FAIL* ]] || FAILED=1; done
for k in "${!STATUS[@]}"; do [[ ${STATUS[$k]} != *want* ]] || FAILED=1; done
[[ $DETECT != UNEXPECTED* && $AFTER != UNEXPECTED* ]] || FAILED=1
exit "$FAILED"
