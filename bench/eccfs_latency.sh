#!/usr/bin/env bash
# eccfs_latency: from a file's close to its redundancy on disk, under a steady load - a Redis of its
# own, `ecjit eccfs monitor` and WORKERS workers on one tree, RATE files written per second for
# SECONDS seconds (each FILE_SIZE bytes), a tree delay of DELAY. Prints p50 / p99 / max of the
# workers' "ms after its change" (noted at close, done once the redundancy is durable) and the
# same minus the delay.
#
#   bench/eccfs_latency.sh [--rate 50] [--seconds 20] [--delay 1s] [--workers 2] [--size 256K]
#                          [--ecjit build/tools/ecjit]
set -euo pipefail
RATE=50 SECONDS_=20 DELAY=1s WORKERS=2 SIZE=256K ECJIT=build/tools/ecjit
while (($#)); do
  case $1 in
    --rate) RATE=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --delay) DELAY=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --ecjit) ECJIT=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "eccfs_latency: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v redis-server >/dev/null || { echo "eccfs_latency: redis-server is not installed" >&2; exit 1; }
S=$(mktemp -d "${TMPDIR:-/tmp}/eccfs-latency.XXXXXX")
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$S/redis" "$S/tree" "$S/ecc"
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$S/redis" --appendonly yes --save '' --daemonize yes \
  --logfile "$S/redis/log" >/dev/null
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1; rm -rf "$S"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
export ECJIT_REDIS=redis://127.0.0.1:$PORT
"$ECJIT" eccfs init --root "$S/tree" --ecc-dir "$S/ecc" --delay "$DELAY" --spec rs-vand:k=10,m=4 --unit 64K >/dev/null
"$ECJIT" eccfs monitor >"$S/monitor.log" 2>&1 & pids+=($!)
for _ in $(seq 50); do grep -q 'watching' "$S/monitor.log" && break; sleep 0.1; done
for i in $(seq "$WORKERS"); do "$ECJIT" eccfs worker --name "w$i" >"$S/w$i.log" 2>&1 & pids+=($!); done
bytes=$(numfmt --from=iec "$SIZE")
head -c $((bytes * 4)) /dev/urandom >"$S/pool"
n=$((RATE * SECONDS_))
t0=$(date +%s.%N)
for i in $(seq 0 $((n - 1))); do
  # write file i at t0 + i / RATE (closing it is the change the monitor sees)
  due=$(awk -v t="$t0" -v i="$i" -v r="$RATE" 'BEGIN { printf "%.3f", t + i / r }')
  now=$(date +%s.%N)
  wait_s=$(awk -v a="$due" -v b="$now" 'BEGIN { d = a - b; printf "%.3f", (d > 0 ? d : 0) }')
  sleep "$wait_s"
  dd if="$S/pool" of="$S/tree/f$i" bs="$bytes" count=1 skip=$((i % 4)) status=none
done
"$ECJIT" eccfs wait --timeout 120s || echo "eccfs_latency: not drained after 120 s" >&2
delay_ms=$(awk -v d="$DELAY" 'BEGIN { if (d ~ /ms$/) print d + 0; else if (d ~ /m$/) print d * 60000; else print d * 1000 }')
cat "$S"/w*.log | sed -n 's/^eccfs worker: done f[0-9]*: .* (\([0-9]*\) ms after its change)$/\1/p' | sort -n >"$S/ms"
count=$(wc -l <"$S/ms")
((count > 0)) || { echo "eccfs_latency: no job finished" >&2; exit 1; }
pick() { sed -n "$(awk -v n="$count" -v q="$1" 'BEGIN { i = int(n * q + 0.999999); if (i < 1) i = 1; print i }')p" "$S/ms"; }
p50=$(pick 0.5) p99=$(pick 0.99) max=$(tail -1 "$S/ms")
echo "eccfs latency: $count of $n files ($SIZE each) at $RATE/s for ${SECONDS_} s, $WORKERS workers, delay $DELAY ($(nproc) cores)"
echo "close to redundancy on disk: p50 $p50 ms, p99 $p99 ms, max $max ms (minus the delay: p50 $((p50 - delay_ms)), p99 $((p99 - delay_ms)), max $((max - delay_ms)) ms)"
