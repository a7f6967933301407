#!/usr/bin/env bash
# eccfs_bench: ECCFS workers against `ecjit protect --threads 1` on one tree, with a Redis of its
# own on a loopback port: one worker, two workers, and protect, each writing a fresh redundancy
# directory from a cold page cache where the machine lets it (drop_caches), else warm.
#
#   bench/eccfs_bench.sh [--files 2000] [--total 2G] [--ecjit build/tools/ecjit] [--dir SCRATCH]
#
# The tree: --files files of 1 KiB to 64 MiB (log-uniform, seeded), --total bytes in all.
# Prints seconds and MB/s (10^6 bytes of data per second) per run and the ratios the ECCFS
# issue's targets name: two workers / one worker, one worker / protect.
set -euo pipefail
FILES=2000 TOTAL=2G ECJIT=build/tools/ecjit DIR=
while (($#)); do
  case $1 in
    --files) FILES=$2; shift 2 ;;
    --total) TOTAL=$2; shift 2 ;;
    --ecjit) ECJIT=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "eccfs_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v redis-server >/dev/null || { echo "eccfs_bench: redis-server is not installed" >&2; exit 1; }
total=$(numfmt --from=iec "$TOTAL")
S=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/eccfs-bench.XXXXXX")}
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$S/redis" "$S/tree"
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$S/redis" --appendonly yes --save '' --daemonize yes \
  --logfile "$S/redis/log" >/dev/null
trap 'redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1; [[ -z $DIR ]] && rm -rf "$S"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
export ECJIT_REDIS=redis://127.0.0.1:$PORT

# Sizes: log-uniform between 1 KiB and 64 MiB, scaled to the total.
python3 - "$FILES" "$total" "$S/tree" <<'EOF'
import math, os, random, sys
n, total, root = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(1)
sizes = [int(math.exp(rng.uniform(math.log(1024), math.log(64 << 20)))) for _ in range(n)]
scale = total / sum(sizes)
block = os.urandom(1 << 20)
for i, s in enumerate(sizes):
    s = max(1024, min(64 << 20, int(s * scale)))
    d = os.path.join(root, "d%02d" % (i % 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        left = s
        while left > 0:
            w = min(left, len(block))
            f.write(block[:w] if i % 2 else os.urandom(w))
            left -= w
EOF
bytes=$(du -sb "$S/tree" | cut -f1)
echo "tree: $FILES files, $bytes bytes ($(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
drop() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
run() {  # run NAME CMD...: prints and returns seconds
  drop
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$S/$NAME.log" 2>&1 || { echo "eccfs_bench: $NAME failed: $(tail -2 "$S/$NAME.log")" >&2; exit 1; }
  t1=$(date +%s.%N)
  secs "$t0" "$t1"
}
NAME=protect
mkdir -p "$S/ecc-protect"
tp=$(run "$ECJIT" protect "$S/tree" --ecc-dir "$S/ecc-protect" --threads 1)
workers() {  # workers N: a fresh redundancy directory, every file noted, N workers until idle
  local n=$1
  rm -rf "$S/ecc-w$n" && mkdir -p "$S/ecc-w$n"
  "$ECJIT" eccfs init --root "$S/tree" --ecc-dir "$S/ecc-w$n" --delay 0ms >/dev/null
  "$ECJIT" eccfs scan >/dev/null
  local pids=() i
  for i in $(seq "$n"); do "$ECJIT" eccfs worker --name "w$i" --until-idle >"$S/w$n-$i.log" 2>&1 & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p"; done
}
NAME=one
t1=$(run workers 1)
NAME=two
t2=$(run workers 2)
mbs() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
echo "ecjit protect --threads 1: $tp s ($(mbs "$tp") MB/s)"
echo "eccfs, one worker:         $t1 s ($(mbs "$t1") MB/s)"
echo "eccfs, two workers:        $t2 s ($(mbs "$t2") MB/s)"
awk -v a="$t1" -v b="$t2" -v p="$tp" 'BEGIN { printf "two workers / one: %.2fx; one worker / protect: %.2fx\n", a / b, p / a }'
