#!/usr/bin/env bash
# files_peers.sh: ecjit protect / scrub against SnapRAID (sync / check / scrub / fix) and par2
# on the same data, each data file on a file system of its own (tmpfs mounts: SnapRAID refuses
# data disks, parity and content files that share a device), in the same run.
#   sudo bench/files_peers.sh [path/to/ecjit]     (SIZE=128M per data file, PAR2_SIZE=1G, REPS=3)
# Prints the timings (medians of REPS) and, for each damage row that applies to both tools,
# their verdicts and whether every byte came back, side by side. Needs root (mount), snapraid
# and par2 (Debian packages).
set -euo pipefail
ECJIT=${1:-$(dirname "$0")/../build/tools/ecjit}
ECJIT=$(readlink -f "$ECJIT")
SIZE=${SIZE:-128M}
PAR2_SIZE=${PAR2_SIZE:-1G}
REPS=${REPS:-3}
command -v snapraid >/dev/null || { echo "files_peers: snapraid is not installed (apt-get install snapraid)"; exit 2; }
command -v par2 >/dev/null || { echo "files_peers: par2 is not installed (apt-get install par2)"; exit 2; }
root=$(mktemp -d /tmp/ecjit-files-peers-XXXXXX)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT
mnt() {  # mnt NAME SIZE: a tmpfs of its own
  mkdir -p "$root/$1"
  mount -t tmpfs -o size="$2" tmpfs "$root/$1"
  mounts+=("$root/$1")
}
bytes() { numfmt --from=iec "$1"; }
for i in 1 2 3 4; do mnt "d$i" "$(( $(bytes "$SIZE") * 3 / 2 ))"; mnt "p$i" "$(( $(bytes "$SIZE") * 3 / 2 ))"; done
mnt ecc "$(( $(bytes "$SIZE") * 8 ))"
mnt content 64M  # SnapRAID wants parity levels + 1 content files on distinct disks
for i in 1 2 3 4; do head -c "$SIZE" /dev/urandom >"$root/d$i/file$i.bin"; done
conf=$root/snapraid.conf
{
  echo "parity $root/p1/snapraid.parity"
  echo "content $root/content/snapraid.content"
  for i in 2 3 4; do echo "$i-parity $root/p$i/snapraid.$i-parity"; done
  for i in 1 2 3 4; do echo "content $root/d$i/snapraid.content"; echo "data d$i $root/d$i/"; done
  echo "blocksize 256"
} >"$conf"
snap() { snapraid -c "$conf" "$@" >"$root/snap.log" 2>&1; }
# The first sync must work, or every SnapRAID figure below would time an error.
if ! snap sync; then echo "files_peers: snapraid sync failed:"; tail -n 20 "$root/snap.log"; exit 1; fi
files=("$root"/d1/file1.bin "$root"/d2/file2.bin "$root"/d3/file3.bin "$root"/d4/file4.bin)
ec() { "$ECJIT" "$1" "${files[@]}" --ecc-dir "$root/ecc" "${@:2}" --quiet >"$root/ec.log" 2>&1; }

# median_time CMD...: the median wall time of REPS runs (seconds)
median_time() {
  local ts=()
  for _ in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" || true
    t1=$(date +%s.%N)
    ts+=("$(echo "$t1 - $t0" | bc)")
  done
  printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p"
}
data_mb=$(( $(bytes "$SIZE") * 4 / 1000000 ))
echo "== timings: 4 data files of $SIZE on their own tmpfs, 4 parity levels (medians of $REPS)"
t_sync=$(median_time bash -c "rm -f $root/p*/snapraid.* $root/d*/snapraid.content $root/content/*; snapraid -c $conf sync >/dev/null 2>&1 || echo 'snapraid sync FAILED' >&2")
t_protect=$(median_time bash -c "rm -rf $root/ecc/*; $ECJIT protect ${files[*]} --ecc-dir $root/ecc --spec rs-vand:k=4,m=4 --quiet >/dev/null 2>&1")
t_check=$(median_time bash -c "snapraid -c $conf check >/dev/null 2>&1 || echo 'snapraid check FAILED' >&2")
t_sscrub=$(median_time bash -c "snapraid -c $conf scrub -p 100 -o 0 >/dev/null 2>&1 || echo 'snapraid scrub FAILED' >&2")
t_scrub=$(median_time ec scrub)
printf '%-34s %8s s  %8.0f MB/s\n' "snapraid sync" "$t_sync" "$(echo "$data_mb / $t_sync" | bc -l)"
printf '%-34s %8s s  %8.0f MB/s  (%.1fx snapraid sync)\n' "ecjit protect rs-vand:k=4,m=4" "$t_protect" \
  "$(echo "$data_mb / $t_protect" | bc -l)" "$(echo "$t_sync / $t_protect" | bc -l)"
printf '%-34s %8s s  %8.0f MB/s\n' "snapraid check" "$t_check" "$(echo "$data_mb / $t_check" | bc -l)"
printf '%-34s %8s s  %8.0f MB/s\n' "snapraid scrub -p 100 -o 0" "$t_sscrub" "$(echo "$data_mb / $t_sscrub" | bc -l)"
printf '%-34s %8s s  %8.0f MB/s  (%.1fx snapraid check)\n' "ecjit scrub" "$t_scrub" \
  "$(echo "$data_mb / $t_scrub" | bc -l)" "$(echo "$t_check / $t_scrub" | bc -l)"

echo "== par2 create -r40 against ecjit protect (RS(10,4), 40% redundancy) of one $PAR2_SIZE file on $root/ecc"
rm -rf "$root/ecc"/*
head -c "$PAR2_SIZE" /dev/urandom >"$root/ecc/one.bin"
t_par2=$(median_time bash -c "rm -f $root/ecc/*.par2; par2 create -q -q -r40 $root/ecc/one.bin >/dev/null 2>&1")
t_one=$(median_time bash -c "rm -rf $root/ecc/.ecjit; $ECJIT protect $root/ecc/one.bin --quiet >/dev/null 2>&1")
printf '%-34s %8s s\n%-34s %8s s  (%.1fx par2)\n' "par2 create -r40" "$t_par2" "ecjit protect" "$t_one" \
  "$(echo "$t_par2 / $t_one" | bc -l)"
rm -rf "$root/ecc"/*

# --- damage rows that apply to both --------------------------------------------------------------
snap sync || true
ec protect --spec rs-vand:k=4,m=4
for i in 1 2 3 4; do sha256sum "${files[$((i - 1))]}" >"$root/sum$i"; done
keep_mtime_flip() { python3 -c "
import os, sys
p, off = sys.argv[1], int(sys.argv[2]); st = os.stat(p)
with open(p, 'r+b') as f: f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0x20]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))" "$1" "$2"; }
back() { sha256sum -c --quiet "$root/sum$1" >/dev/null 2>&1 && echo "every byte back" || echo "NOT restored"; }
row() {  # row NAME DAMAGE-COMMAND FILE-INDEX
  local name=$1 damage=$2 i=$3 f=${files[$(( $3 - 1 ))]} sv ev
  cp -p "$f" "$root/ecc/orig.bin"
  eval "$damage"
  snap check -a && sv="check: clean" || sv="check: exit $? ($(grep -cE 'error|missing|Damaged' "$root/snap.log") lines of errors)"
  snap fix -d "d$i" >/dev/null 2>&1 || true
  sv="$sv; fix: $(back "$i")"
  cp -p "$root/ecc/orig.bin" "$f"
  eval "$damage"
  ec scrub && ev="scrub: clean" || ev="scrub: exit $?"
  if [[ -e $f ]]; then ec scrub --repair || true; else "$ECJIT" restore "$f" --ecc-dir "$root/ecc" --quiet >/dev/null 2>&1 || true; fi
  ev="$ev; repair: $(back "$i")"
  cp -p "$root/ecc/orig.bin" "$f"
  ec scrub --repair || true
  snap sync || true
  printf '| %s | %s | %s |\n' "$name" "$sv" "$ev"
}
echo "== damage rows (SnapRAID: check -a, fix -d DISK; ecjit: scrub, scrub --repair or restore)"
echo "| damage | snapraid | ecjit |"
echo "|---|---|---|"
row "a flipped byte, mtime kept" "keep_mtime_flip \$f 1234567" 1
row "two flipped bytes in one file" "keep_mtime_flip \$f 100; keep_mtime_flip \$f \$(( \$(stat -c %s \$f) - 100 ))" 2
row "file truncated to half" "truncate -s \$(( \$(stat -c %s \$f) / 2 )) \$f" 3
row "file deleted" "rm -f \$f" 4
