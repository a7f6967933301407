#!/usr/bin/env bash
# eccfs_test: `ecjit eccfs` end to end against a Redis server of its own (loopback port, scratch
# directory, AOF on) and several worker processes.
#
#   eccfs_test.sh <ecjit binary>
#
# Checks: files noted and protected by two workers (every file scrubs clean, its redundancy in
# the tree's directory); changes merged per file (many notes, one job); append, truncate,
# rewrite, rename, delete; a damaged file restored to its sha256 from the redundancy the
# workers wrote; a worker SIGKILLed mid-job (its lease expires, another worker finishes, nothing
# lost); the inotify monitor (a new file, a new directory's file, a rename, a delete) and a scan
# after downtime (changes nobody saw caught up, unchanged files skipped without re-encoding);
# Redis shut down and restarted mid-run (AOF: nothing lost, the worker waits and resumes);
# failure domains (redundancy file r of every file in domain r; a whole domain deleted, then
# rebuilt by a repair; a file deleted with domain 0's share lost pruned from the others; too few
# domains for the code refused);
# bad URLs, an unreachable server, a file outside the tree, an uninitialised database.
# Exit 0 pass, 1 with FAIL lines, 0 with "SKIP: why" when redis-server is not installed.
set -u -o pipefail

ECJIT=${1:?usage: eccfs_test.sh <ecjit binary>}
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
  { echo "SKIP: redis-server / redis-cli not installed (apt-get install redis-server)"; exit 0; }
"$ECJIT" eccfs --help >/dev/null 2>&1 || { echo "SKIP: this ecjit was built without hiredis (no eccfs command)"; exit 0; }

PASSED=0 FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
S=$(mktemp -d "${TMPDIR:-/tmp}/ecjit-eccfs.XXXXXX")
PORT=
cleanup() {
  [[ -n $PORT ]] && redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
  jobs -p | xargs -r kill -9 2>/dev/null
  rm -rf "$S"
}
trap cleanup EXIT

start_redis() {  # on $PORT, data in $S/redis (AOF)
  mkdir -p "$S/redis"
  redis-server --port "$PORT" --bind 127.0.0.1 --dir "$S/redis" --appendonly yes --appendfsync always --save '' \
    --daemonize yes --logfile "$S/redis/log" >/dev/null || return 1
  for _ in $(seq 50); do redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
  return 1
}
for try in $(seq 10); do
  PORT=$((20000 + RANDOM % 20000))
  start_redis && break
  PORT=
done
[[ -n $PORT ]] || { echo "FAIL could not start redis-server on a loopback port"; exit 1; }
export ECJIT_REDIS=redis://127.0.0.1:$PORT
E() { "$ECJIT" eccfs "$@"; }  # (in the background $! would be a subshell: start workers to kill directly)

T=$S/tree D=$S/ecc
mkdir -p "$T/dir/sub" "$D"
# ---- bad input before init --------------------------------------------------------------------
out=$(E status 2>&1); rc=$?
[[ $rc == 2 && $out == *"no ECCFS tree"* ]] && ok "status before init: exit 2, says there is no tree" ||
  fail "status before init: rc=$rc: $out"
out=$(E status --redis redis://127.0.0.1:1 2>&1); rc=$?
[[ $rc == 1 && $out == *"cannot connect"* ]] && ok "an unreachable Redis: exit 1 naming it ($out)" ||
  fail "unreachable Redis: rc=$rc: $out"
out=$(E status --redis http://x 2>&1); rc=$?
[[ $rc == 2 && $out == *"redis://"* ]] && ok "a URL that is not redis://: exit 2" || fail "bad URL: rc=$rc: $out"
out=$(E init --root "$T" --ecc-dir "$T/dir" 2>&1); rc=$?
[[ $rc == 2 && $out == *"outside --root"* ]] && ok "a redundancy directory inside the tree is refused" ||
  fail "ecc-dir inside root: rc=$rc: $out"

E init --root "$T" --ecc-dir "$D" --spec rs-vand:k=4,m=2 --unit 64K --delay 300ms >/dev/null ||
  { fail "init"; exit 1; }
out=$(E notify /etc/hostname 2>&1); rc=$?
[[ $rc == 2 && $out == *"not inside the tree"* ]] && ok "a file outside the tree is refused" || fail "outside: rc=$rc: $out"

# ---- a tree of files, two workers -------------------------------------------------------------
sizes=(1024 1 65536 65537 300000 1048576 3000001 8388608 123 777777)
n=0
for i in $(seq 0 29); do
  sz=${sizes[$((i % ${#sizes[@]}))]}
  f=$T/dir/f$i
  ((i % 3 == 0)) && f=$T/dir/sub/g$i
  head -c "$sz" /dev/urandom >"$f"
  E notify "$f" || fail "notify $f"
  n=$((n + 1))
done
for _ in 1 2 3; do E notify "$T/dir/f1" 0 10; done  # duplicates merge into one job
pending=$(E status --json | sed 's/.*"pending":\([0-9]*\).*/\1/')
[[ $pending == "$n" ]] && ok "$n files noted (duplicate notes merged): $pending pending" || fail "pending $pending, want $n"
E worker --name w1 --until-idle >"$S/w1.log" 2>&1 &
w1=$!
E worker --name w2 --until-idle >"$S/w2.log" 2>&1 &
w2=$!
wait $w1; r1=$?
wait $w2; r2=$?
j1=$(grep -c '^eccfs worker: done' "$S/w1.log")
j2=$(grep -c '^eccfs worker: done' "$S/w2.log")
if [[ $r1 == 0 && $r2 == 0 && $((j1 + j2)) == "$n" ]]; then
  ok "two workers protected $n files ($j1 + $j2 jobs)"
else
  fail "two workers: exit $r1/$r2, jobs $j1 + $j2 of $n ($(tail -2 "$S/w1.log" "$S/w2.log" | tr '\n' ' '))"
fi
E wait --timeout 5s || fail "wait after the workers"
# scrub: every file of the tree clean ("N files: N clean", N the files there are now).
scrub() {
  local files
  files=$(find "$T" -type f | wc -l)
  "$ECJIT" scrub "$T" --ecc-dir "$D" >"$S/scrub.log" 2>&1 && grep -q "^$files files: $files clean" "$S/scrub.log"
}
if scrub; then
  ok "scrub: every file clean against the workers' redundancy"
else
  fail "scrub after the workers: $(tail -3 "$S/scrub.log" | tr '\n' ' ')"
fi
[[ -f $D$T/dir/f1.ecc0 || -n $(find "$D" -name 'f1.ecc0' -print -quit) ]] && ok "redundancy lives in the tree's directory" ||
  fail "no f1.ecc0 under $D"

# ---- changes: append, truncate, rewrite, rename, delete ------------------------------------------
head -c 5000 /dev/urandom >>"$T/dir/f2"; E notify "$T/dir/f2" 65536 5000
truncate -s 100 "$T/dir/f4"; E notify "$T/dir/f4"
head -c 2000 /dev/urandom | dd of="$T/dir/f5" bs=1 seek=1000 conv=notrunc status=none; E notify "$T/dir/f5" 1000 2000
mv "$T/dir/f7" "$T/dir/f7.moved"; E notify --removed "$T/dir/f7"; E notify "$T/dir/f7.moved"
rm "$T/dir/f8"; E notify --removed "$T/dir/f8"
E worker --until-idle >"$S/w3.log" 2>&1 || fail "worker after changes: $(tail -2 "$S/w3.log")"
if scrub; then ok "append, truncate, rewrite, rename, delete: every file clean"
else fail "scrub after changes: $(grep -v '^clean' "$S/scrub.log" | tail -4 | tr '\n' ' ')"; fi
[[ -z $(find "$D" -name 'f8.ecc*' -print -quit) ]] && ok "a deleted file's redundancy is gone" || fail "f8's redundancy remains"
[[ -n $(find "$D" -name 'f7.moved.ecc0' -print -quit) && -z $(find "$D" -name 'f7.ecc*' -print -quit) ]] &&
  ok "a renamed file's redundancy follows it" || fail "rename: $(find "$D" -name 'f7*' | tr '\n' ' ')"

# ---- restore from the workers' redundancy -----------------------------------------------------
f=$T/dir/f10
sum=$(sha256sum <"$f")
printf '\x01' | dd of="$f" bs=1 seek=500 conv=notrunc status=none
"$ECJIT" restore "$f" --ecc-dir "$D" >"$S/restore.log" 2>&1
rc=$?
if [[ ($rc == 0 || $rc == 3) && $(sha256sum <"$f") == "$sum" ]]; then  # 3: repaired
  ok "a damaged file restored to its sha256 from the workers' redundancy"
else
  fail "restore: $(tail -2 "$S/restore.log" | tr '\n' ' ')"
fi

# ---- a worker killed mid-job -----------------------------------------------------------------
head -c $((48 << 20)) /dev/urandom >"$T/big"
sumbig=$(sha256sum <"$T/big")
E notify "$T/big"
sleep 0.4
"$ECJIT" eccfs worker --name victim --lease 1s --rate 8M >"$S/victim.log" 2>&1 &  # not E: $! is the worker itself
victim=$!
for _ in $(seq 100); do
  [[ $(E status --json | sed 's/.*"leased":\([0-9]*\).*/\1/') == 1 ]] && break
  sleep 0.05
done
sleep 0.5
kill -9 $victim
wait $victim 2>/dev/null
E worker --name rescuer --lease 1s --until-idle >"$S/rescuer.log" 2>&1 || fail "rescuer: $(tail -2 "$S/rescuer.log")"
expired=$(E status --json | sed 's/.*"expired":\([0-9]*\).*/\1/')
if grep -q '^eccfs worker: done big' "$S/rescuer.log" && ((expired >= 1)) && scrub; then
  ok "a worker SIGKILLed mid-job: its lease expired ($expired), another finished, the file scrubs clean"
else
  fail "killed worker: expired=$expired; victim: $(tail -2 "$S/victim.log" | tr '\n' ' '); rescuer: $(tail -2 "$S/rescuer.log" | tr '\n' ' '); $(grep big "$S/scrub.log")"
fi
[[ $(sha256sum <"$T/big") == "$sumbig" ]] || fail "the big file changed"

# ---- the monitor (inotify) and scan ------------------------------------------------------------
"$ECJIT" eccfs monitor >"$S/monitor.log" 2>&1 &
monitor=$!
for _ in $(seq 50); do grep -q '^eccfs monitor: watching' "$S/monitor.log" && break; sleep 0.1; done
head -c 100000 /dev/urandom >"$T/dir/seen1"
mkdir -p "$T/newdir/deeper"
head -c 70000 /dev/urandom >"$T/newdir/deeper/seen2"
mv "$T/dir/f11" "$T/dir/f11.moved"
rm "$T/dir/f13"
sleep 1
kill -TERM $monitor
wait $monitor; rc=$?
notes=$(sed -n 's/^eccfs monitor: \([0-9]*\) changes recorded.*/\1/p' "$S/monitor.log")
E worker --until-idle >"$S/w4.log" 2>&1 || fail "worker after the monitor: $(tail -2 "$S/w4.log")"
if [[ $rc == 0 ]] && ((notes >= 4)) && scrub && [[ -z $(find "$D" -name 'f13.ecc*' -print -quit) ]] &&
  [[ -n $(find "$D" -name 'seen2.ecc0' -print -quit) && -n $(find "$D" -name 'f11.moved.ecc0' -print -quit) ]]; then
  ok "monitor: a new file, a file in a new directory, a rename and a delete recorded ($notes changes), all clean"
else
  fail "monitor: rc=$rc notes=$notes; $(tail -3 "$S/monitor.log" | tr '\n' ' '); $(grep -v '^clean' "$S/scrub.log" | tail -3 | tr '\n' ' ')"
fi
head -c 30000 /dev/urandom >"$T/dir/unseen"        # written with nothing watching
head -c 500 /dev/urandom >>"$T/dir/f14"
rm "$T/dir/f16"
E scan >"$S/scan.log" 2>&1 || fail "scan: $(tail -2 "$S/scan.log")"
E worker --until-idle >"$S/w5.log" 2>&1 || fail "worker after the scan: $(tail -2 "$S/w5.log")"
encoded=$(grep -c 'stripes encoded' "$S/w5.log")
if scrub && [[ -z $(find "$D" -name 'f16.ecc*' -print -quit) ]]; then
  ok "scan after downtime: the unseen file, the append and the delete caught up ($(tail -1 "$S/scan.log" | sed 's/^eccfs scan: //'))"
else
  fail "scan: $(grep -v '^clean' "$S/scrub.log" | tail -3 | tr '\n' ' ')"
fi
unchanged=$(grep -c ': 0 of ' "$S/w5.log")
((unchanged >= 20)) && ok "scan: $unchanged unchanged files skipped by the workers without re-encoding" ||
  fail "scan: only $unchanged of $encoded jobs were unchanged files"

# ---- Redis restarted mid-run -------------------------------------------------------------------
for i in 1 2 3 4 5; do head -c 200000 /dev/urandom >"$T/r$i"; E notify "$T/r$i"; done
redis-cli -p "$PORT" shutdown >/dev/null 2>&1  # AOF: the notes survive
E worker --name patient --until-idle >"$S/patient.log" 2>&1 &
patient=$!
sleep 1.5
start_redis || fail "restart redis"
wait $patient; rc=$?
done_r=$(grep -c '^eccfs worker: done r' "$S/patient.log")
[[ $rc == 0 && $done_r == 5 ]] && ok "Redis down at the start and restarted: the worker waited and protected all 5 noted files" ||
  fail "redis restart: rc=$rc, $done_r of 5 ($(tail -2 "$S/patient.log" | tr '\n' ' '))"
if scrub; then
  ok "after everything: $(tail -1 "$S/scrub.log")"
else
  fail "final scrub: $(grep -v '^clean' "$S/scrub.log" | tail -5 | tr '\n' ' ')"
fi
# ---- failure domains ---------------------------------------------------------------------------
T2=$S/tree2
mkdir -p "$T2/sub" "$S/dom0" "$S/dom1" "$S/dom2"
out=$(E init --root "$T2" --ecc-dir "$S/dom0,$S/dom1" --spec rs-vand:k=4,m=3 2>&1); rc=$?
[[ $rc == 2 && $out == *"2 failure domains cannot hold one to a domain"* ]] &&
  ok "init refuses a code of 3 redundancy files over 2 failure domains" || fail "too few domains: rc=$rc: $out"
E init --root "$T2" --ecc-dir "$S/dom0,$S/dom1,$S/dom2" --spec rs-vand:k=4,m=3 --unit 64K --delay 100ms >/dev/null ||
  fail "init with three failure domains"
for i in 0 1 2 3 4 5; do head -c $((70000 * (i + 1))) /dev/urandom >"$T2/sub/h$i"; E notify "$T2/sub/h$i"; done
E worker --until-idle >"$S/wd.log" 2>&1 || fail "worker over domains: $(tail -2 "$S/wd.log")"
placed=1
for i in 0 1 2 3 4 5; do
  for r in 0 1 2; do
    [[ -f $S/dom$r$T2/sub/h$i.ecc$r ]] || placed=0
    for q in 0 1 2; do [[ $q != "$r" && -e $S/dom$r$T2/sub/h$i.ecc$q ]] && placed=0; done
  done
done
((placed)) && ok "failure domains: redundancy file r of each of 6 files in domain r, none elsewhere" ||
  fail "placement: $(cd "$S" && find dom0 dom1 dom2 -type f | sort | tr '\n' ' ')"
dscrub() { "$ECJIT" scrub "$T2" --ecc-dir "$S/dom0,$S/dom1,$S/dom2" "$@" >"$S/dscrub.log" 2>&1; }
sumh=$(cat "$T2"/sub/h* | sha256sum)
rm -rf "$S/dom1"
dscrub; rc=$?
dscrub --repair; rcr=$?
if [[ $rc == 4 && ($rcr == 3 || $rcr == 0) ]] && dscrub && [[ -f $S/dom1$T2/sub/h3.ecc1 && $(cat "$T2"/sub/h* | sha256sum) == "$sumh" ]]; then
  ok "a whole domain deleted: scrub says damaged (4), a repair rebuilds its files, the tree scrubs clean"
else
  fail "domain lost: scrub $rc, repair $rcr; $(tail -3 "$S/dscrub.log" | tr '\n' ' ')"
fi
# A file deleted while domain 0 holds none of its redundancy (that domain's files of it lost):
# the worker still finds its redundancy in the other domains and removes it there.
rm -f "$S/dom0$T2/sub/h4".*
rm "$T2/sub/h4"
E notify --removed "$T2/sub/h4"
E worker --until-idle >"$S/wd2.log" 2>&1 || fail "worker after a delete: $(tail -2 "$S/wd2.log")"
left=$(cd "$S" && find dom0 dom1 dom2 -name 'h4.*' | sort | tr '\n' ' ')
if grep -q "h4: redundancy removed" "$S/wd2.log" && [[ -z $left && -f $S/dom1$T2/sub/h3.ecc1 && -f $S/dom2$T2/sub/h3.ecc2 ]]; then
  ok "a file deleted with domain 0's redundancy of it lost: the worker removes it from the other domains"
else
  fail "delete without domain 0: left '$left'; $(tail -3 "$S/wd2.log" | tr '\n' ' ')"
fi

echo "eccfs: $PASSED passed, $FAILED failed"
((FAILED == 0))
