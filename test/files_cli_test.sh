#!/usr/bin/env bash
# files_cli_test: `ecjit protect / scrub / restore` as a user runs them - exit statuses, --json,
# a run killed mid-way (the old redundancy stays valid), two runs on one file (one refused).
#   files_cli_test.sh path/to/ecjit
set -uo pipefail
ECJIT=$1
fails=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export ECJIT_DISK_CACHE=0

fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
# expect_status <status> <ecjit args...>
expect_status() {
  local want=$1
  shift
  "$ECJIT" "$@" >"$dir/out" 2>"$dir/err"
  local got=$?
  [[ $got -eq $want ]] || fail "ecjit $* -> exit $got, want $want; stdout: $(head -c 600 "$dir/out"); stderr: $(cat "$dir/err")"
}
# flip_byte <file> <offset>: silent corruption (the mtime is kept).
flip_byte() {
  python3 - "$1" "$2" <<'EOF'
import os, sys
path, off = sys.argv[1], int(sys.argv[2])
st = os.stat(path)
with open(path, "r+b") as f:
    f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0x20]))
os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
EOF
}

# --- bad arguments: exit 2, nothing written ---
mkdir -p "$dir/t"
head -c 300000 /dev/urandom >"$dir/t/a.bin"
expect_status 2 protect
expect_status 2 protect "$dir/t" --unit 100
expect_status 2 protect "$dir/t" --spec cauchy-good:k=4,m=2,w=8
expect_status 2 protect "$dir/t" --spec rs-vand:k=0,m=1
expect_status 2 protect "$dir/t" --threads 257
expect_status 2 protect "$dir/t/.ecjit"
expect_status 2 restore "$dir/t/a.bin" --overwrite
expect_status 2 restore "$dir/t/a.bin" "$dir/t/b.bin"
expect_status 2 scrub "$dir/t" --bogus
[[ -e $dir/t/.ecjit ]] && fail "a refused command wrote redundancy"
expect_status 1 protect "$dir/nonexistent"

# --- protect, scrub, damage, repair ---
head -c 123457 /dev/urandom >"$dir/t/b.bin"
mkdir -p "$dir/t/sub" && head -c 5000 /dev/urandom >"$dir/t/sub/c.bin"
cp -r "$dir/t" "$dir/orig"
expect_status 0 protect "$dir/t" --spec rs-vand:k=4,m=2 --unit 16K
grep -q "3 files: 3 protected" "$dir/out" || fail "protect summary: $(cat "$dir/out")"
grep -q $'\r' "$dir/err" && fail "a progress line was drawn on a non-terminal"
expect_status 0 scrub "$dir/t"
expect_status 0 protect "$dir/t"
grep -q "3 unchanged" "$dir/out" || fail "second protect re-encoded: $(cat "$dir/out")"
flip_byte "$dir/t/a.bin" 70000
flip_byte "$dir/t/sub/c.bin" 10
expect_status 4 scrub "$dir/t"
grep -q "damaged.*a.bin" "$dir/out" || fail "scrub did not name a.bin: $(cat "$dir/out")"
expect_status 3 scrub "$dir/t" --repair --json
python3 - "$dir/out" <<'EOF' || fail "scrub --json: $(cat "$dir/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
verdicts = sorted(f["verdict"] for f in doc["files"])
assert verdicts == ["clean", "repaired", "repaired"], verdicts
assert doc["exit"] == 3 and doc["summary"] == {"clean": 1, "repaired": 2}, doc["summary"]
assert all(d["repaired"] for f in doc["files"] for d in f["damage"])
EOF
cmp -s "$dir/t/a.bin" "$dir/orig/a.bin" && cmp -s "$dir/t/sub/c.bin" "$dir/orig/sub/c.bin" || fail "repair is not byte-identical"
expect_status 0 scrub "$dir/t"

# --- more damage than the code reaches: exit 5, and restore --to writes nothing ---
for off in 1 16385 32769; do flip_byte "$dir/t/a.bin" $off; done  # three units of stripe 0, m = 2
expect_status 5 scrub "$dir/t/a.bin" --repair
expect_status 5 restore "$dir/t/a.bin" --to "$dir/restored"
[[ -e $dir/restored ]] && fail "restore --to wrote a file with holes"
cp "$dir/orig/a.bin" "$dir/t/a.bin" && touch -r "$dir/orig/a.bin" "$dir/t/a.bin"

# --- a modified file: reported (4), never rolled back by scrub; restore --to gives the old one ---
printf 'edited' | dd of="$dir/t/b.bin" bs=1 seek=50 conv=notrunc 2>/dev/null
touch -d '+1 minute' "$dir/t/b.bin"
cp "$dir/t/b.bin" "$dir/b.edited"
expect_status 4 scrub "$dir/t/b.bin" --repair
grep -q "modified" "$dir/out" || fail "modified file not reported: $(cat "$dir/out")"
cmp -s "$dir/t/b.bin" "$dir/b.edited" || fail "scrub --repair rolled back a modification"
expect_status 3 restore "$dir/t/b.bin" --to "$dir/b.old"
cmp -s "$dir/b.old" "$dir/orig/b.bin" || fail "restore --to did not give the protected contents"
expect_status 0 protect "$dir/t/b.bin"
grep -q "updated.*1 of 2 stripes" "$dir/out" || fail "update re-encoded more than the changed stripe: $(cat "$dir/out")"

# --- killed mid-run: the old redundancy stays valid, a rerun finishes, no temporaries left ---
mkdir -p "$dir/k"
head -c $((48 << 20)) /dev/urandom >"$dir/k/big"
cp "$dir/k/big" "$dir/big.v1"
expect_status 0 protect "$dir/k/big" --spec rs-vand:k=4,m=2 --unit 1M
printf 'version 2' | dd of="$dir/k/big" bs=1 seek=1000 conv=notrunc 2>/dev/null
touch -d '+1 minute' "$dir/k/big"
"$ECJIT" protect "$dir/k/big" --max-rate 8M --force >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[[ $(ls "$dir/k/.ecjit") == *tmp-* ]] || echo "note: the run finished before it was killed (slow machine?)"
expect_status 3 restore "$dir/k/big" --to "$dir/big.restored"
cmp -s "$dir/big.restored" "$dir/big.v1" || fail "after a killed run the old redundancy no longer restores version 1"
expect_status 0 protect "$dir/k/big"
[[ $(ls "$dir/k/.ecjit") == *tmp-* ]] && fail "temporaries left after the rerun: $(ls "$dir/k/.ecjit")"
expect_status 0 scrub "$dir/k/big"

# --- two runs on one file: one is refused with a clear message, the redundancy stays valid ---
"$ECJIT" protect "$dir/k/big" --force --max-rate 16M >"$dir/first.out" 2>&1 &
pid=$!
sleep 0.7
expect_status 1 protect "$dir/k/big" --force
grep -q "busy" "$dir/err" || fail "second run not refused as busy: $(cat "$dir/err")"
wait $pid || fail "the first run failed: $(cat "$dir/first.out")"
expect_status 0 scrub "$dir/k/big"

# --- --max-rate caps the bytes moved per second (a lower bound on the time, never an upper) ---
mkdir -p "$dir/r" && head -c $((3 << 20)) /dev/urandom >"$dir/r/f"
start=$(date +%s%N)
expect_status 0 protect "$dir/r/f" --spec rs-vand:k=4,m=2 --unit 256K --max-rate 2M
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
# 3 MiB read + 1.5 MiB written at 2 MiB/s: at least ~2.2 s.
[[ $elapsed_ms -ge 1800 ]] || fail "--max-rate 2M moved 4.5 MiB in $elapsed_ms ms"

# --- help ---
[[ $("$ECJIT" scrub --help) == *"exit status: 0 clean"* ]] || fail "scrub --help lacks the exit statuses"

if [[ $fails -ne 0 ]]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "files_cli_test: all passed"
