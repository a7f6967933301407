#!/usr/bin/env bash
# report_test: bench/report.py turns raw benchmark outputs into the tables of its machine class
# and splices them between their markers, keeping every other class's blocks; a second run over
# the same data changes nothing; unbalanced markers are refused. Input: the raw outputs stored in
# docs/figures/data/report-x86-avx512-gfni (no benchmark runs here).
# Usage: report_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: report_test.sh SOURCE_DIR}
data=$src/docs/figures/data/report-x86-avx512-gfni
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mkdir -p "$tmp/docs"
cat >"$tmp/docs/performance.md" <<'MD'
# Performance

## x86-64 with AVX-512 and GFNI (Zen 4/5)

### Encode

<!-- report:x86-avx512-gfni:encode begin -->
stale table
<!-- report:x86-avx512-gfni:encode end -->

prose kept

## x86-64 AVX2 without GFNI (Zen 3)

<!-- report:x86-avx2:encode begin -->
the other class's table
<!-- report:x86-avx2:encode end -->

## Nešković 2018, Figures 5-4 to 5-7
MD
cat >"$tmp/README.md" <<'MD'
# ecjit

## How fast

intro

## Reference
MD
py=${PY:-python3}
"$py" "$src/bench/report.py" --class x86-avx512-gfni --data "$data" --root "$tmp" >/dev/null ||
  fail "report.py exited $?"
perf=$tmp/docs/performance.md
grep -q 'stale table' "$perf" && fail "the stale block was not replaced"
grep -q 'the other class.s table' "$perf" || fail "another class's block was lost"
grep -q 'prose kept' "$perf" || fail "prose outside the markers was lost"
for step in encode matrix degraded wide16 wide8 xor first; do
  n=$(grep -c "<!-- report:x86-avx512-gfni:$step begin -->" "$perf")
  [[ $n == 1 ]] || fail "$step: $n blocks, expected 1"
done
# Each table's figures come from the raw data: the encode median of ISA-L 2.31 and ecjit's GF(2^8).
want=$("$py" - "$data/encode.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
med = {b["run_name"]: b["bytes_per_second"] for b in d["benchmarks"] if b.get("aggregate_name") == "median"}
e, i = med["BM_ecjit/gf8/host/auto/O3/65536"], med["BM_isal231/gf8/ec_encode_data/65536"]
print("%.2fx" % (e / i))
PY
)
grep -q "GF(2^8) .*\*\*$want\*\*" "$perf" || fail "the GF(2^8) encode ratio $want is not in the table"
awk '/report:x86-avx512-gfni:encode end/ { e = NR } /^## x86-64 AVX2/ { a = NR } END { exit !(e && a && e < a) }' "$perf" ||
  fail "the encode block moved out of its class's section"
awk '/report:x86-avx512-gfni:matrix begin/ { m = NR } /^## x86-64 AVX2/ { a = NR } END { exit !(m && a && m < a) }' "$perf" ||
  fail "a new block was not put in its class's section"
grep -q '<!-- report-summary:x86-avx512-gfni begin -->' "$tmp/README.md" || fail "no README summary"
awk '/report-summary:x86-avx512-gfni end/ { s = NR } /^## Reference/ { r = NR } END { exit !(s && r && s < r) }' \
  "$tmp/README.md" || fail "the README summary is not in its How fast section"
cp "$perf" "$tmp/first.md"
"$py" "$src/bench/report.py" --class x86-avx512-gfni --data "$data" --root "$tmp" >/dev/null
cmp -s "$perf" "$tmp/first.md" || fail "a second run over the same data changed docs/performance.md"
# An end marker lost: refused, the file left as it was.
sed -i '/report:x86-avx512-gfni:xor end/d' "$perf"
cp "$perf" "$tmp/broken.md"
if "$py" "$src/bench/report.py" --class x86-avx512-gfni --data "$data" --root "$tmp" >/dev/null 2>&1; then
  fail "unbalanced markers were accepted"
fi
cmp -s "$perf" "$tmp/broken.md" || fail "a refused run still rewrote docs/performance.md"
if ((fails)); then
  echo "$fails report check(s) failed"
  exit 1
fi
echo "report: tables from the raw data, spliced between their markers, other classes kept"
