#!/usr/bin/env bash
# ceph_lrc_test: Ceph's lrc plugin (libec_lrc.so with its jerasure layers, Debian 12's Ceph
# 16.2.15, run by ceph-erasure-code-tool) against ecjit's ceph-lrc code, chunk for chunk.
#
#   ceph_lrc_test.sh <lrc_chunks binary (test/integrations/lrc_chunks.cpp)>
#
# For each k:m:l of ECJIT_CEPH_LRC_CONFIGS (default 4:2:3 8:4:3 8:4:6):
#   - encode: Ceph encodes an object; ecjit encodes Ceph's data chunks; every chunk is identical;
#   - ecjit decodes Ceph's chunks: every loss of one and of two chunks, from the chunks
#     minimum_to_decode names alone (lrc_chunks rebuild), rebuilt exactly;
#   - Ceph decodes ecjit's chunks after losing any one and any two: the object restored, and
#     Ceph fails exactly where ecjit refused the pattern as undecodable.
# Also: Ceph and ecjit refuse k=8 m=4 l=4 alike ("k must be a multiple of (k + m) / l").
# Exit 0 pass, 1 with FAIL lines, 0 with "SKIP: why" when the packages cannot be had.
set -u -o pipefail

IT_NAME=ceph-lrc
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 <lrc_chunks binary>" >&2
  exit 2
fi
CHUNKS=$1
source "$(dirname "${BASH_SOURCE[0]}")/ceph_env.sh"
[[ -f $ECDIR/libec_lrc.so && -f $ECDIR/libec_jerasure.so ]] || skip "unpacked packages lack libec_lrc.so / libec_jerasure.so"
ceph() { LD_LIBRARY_PATH="$LDP" "$TOOL" "${CEPH_OPTS[@]}" "$@"; }

SU=4096
SIZE=${ECJIT_CEPH_OBJECT_SIZE:-200003}
head -c "$SIZE" /dev/urandom >"$S/object"

# The rule both refuse. (The tool then dies in its usage path, Ceph 16.2.15: its crash report
# goes to a directory of its own, not counted below.)
mkdir -p "$S/refuse-crash"
rule="k must be a multiple of (k + m) / l"
"$CHUNKS" ceph-lrc:k=8,m=4,l=4 "$S" rebuild >"$S/refuse-ecjit.log" 2>&1
if (LD_LIBRARY_PATH="$LDP" "$TOOL" "${CEPH_OPTS[@]}" --crash_dir="$S/refuse-crash" \
  validate-profile plugin=lrc,k=8,m=4,l=4) >"$S/refuse.log" 2>&1; then
  fail "Ceph accepted lrc k=8 m=4 l=4"
elif grep -qF "$rule" "$S/refuse.log" && grep -qF "$rule" "$S/refuse-ecjit.log"; then
  ok "k=8 m=4 l=4: refused by Ceph and by ecjit with the same rule"
else
  fail "k=8 m=4 l=4: the refusals differ (Ceph: $(head -c 200 "$S/refuse.log" | tr '\n' ' '))"
fi

for cfg in ${ECJIT_CEPH_LRC_CONFIGS:-4:2:3 8:4:3 8:4:6}; do
  IFS=: read -r k m l <<<"$cfg"
  prof=plugin=lrc,k=$k,m=$m,l=$l
  spec=ceph-lrc:k=$k,m=$m,l=$l
  n=$(ceph validate-profile "$prof" chunk_count 2>/dev/null | tail -1)
  if ! [[ $n =~ ^[0-9]+$ ]]; then
    fail "$spec: Ceph's validate-profile gave no chunk count"
    continue
  fi
  all=$(seq -s, 0 $((n - 1)))
  W=$S/lrc-$k-$m-$l
  mkdir -p "$W/ceph" "$W/ecjit"
  cp "$S/object" "$W/ceph/obj"
  if ! (cd "$W/ceph" && ceph encode "$prof" "$SU" "$all" obj) >"$W/enc.log" 2>&1; then
    fail "$spec: Ceph's encode failed ($(tail -c 300 "$W/enc.log" | tr '\n' ' '))"
    continue
  fi
  if ! "$CHUNKS" "$spec" "$W/ceph" encode "$W/ecjit" >"$W/ecjit.log" 2>&1; then
    fail "$spec: ecjit's encode failed ($(tail -c 300 "$W/ecjit.log" | tr '\n' ' '))"
    continue
  fi
  errs=
  for i in $(seq 0 $((n - 1))); do
    cmp -s "$W/ceph/obj.$i" "$W/ecjit/obj.$i" || errs="$errs $i"
  done
  if [[ -z $errs ]]; then
    ok "$spec encode: all $n chunks ($(stat -c %s "$W/ceph/obj.0") bytes each) identical to Ceph's"
  else
    fail "$spec encode: chunks$errs differ from Ceph's"
  fi
  if "$CHUNKS" "$spec" "$W/ceph" rebuild >"$W/rebuild.log" 2>&1; then
    ok "$spec ecjit decodes Ceph's chunks: $(grep '^rebuilt' "$W/rebuild.log")"
  else
    fail "$spec ecjit decode of Ceph's chunks: $(grep -v '^refused' "$W/rebuild.log" | tail -3 | tr '\n' ' ')"
  fi
  # Ceph decodes ecjit's chunks: every one and two lost.
  wrong= restored=0 refused_both=0
  for a in $(seq 0 $((n - 1))); do
    for b in $(seq "$a" $((n - 1))); do
      have=$(seq 0 $((n - 1)) | grep -vx -e "$a" -e "$b" | paste -sd, -)
      D=$W/dec
      rm -rf "$D" && mkdir -p "$D"
      for i in ${have//,/ }; do ln -s "$W/ecjit/obj.$i" "$D/obj.$i"; done
      ecjit_refused=0
      grep -qx "refused $a,$b" "$W/rebuild.log" && ecjit_refused=1
      if (cd "$D" && ceph decode "$prof" "$SU" "$have" obj) >"$D.log" 2>&1 && [[ -f $D/obj ]]; then
        truncate -s "$SIZE" "$D/obj"
        if ! cmp -s "$S/object" "$D/obj"; then
          wrong="$wrong {$a,$b}:differs"
        elif ((ecjit_refused)); then
          wrong="$wrong {$a,$b}:ecjit-refused-but-Ceph-decoded"
        else
          restored=$((restored + 1))
        fi
      elif ((ecjit_refused)); then
        refused_both=$((refused_both + 1))
      else
        wrong="$wrong {$a,$b}:Ceph-failed"
      fi
    done
  done
  if [[ -z $wrong ]]; then
    ok "$spec Ceph decodes ecjit's chunks: $restored patterns of one and two lost restored the object; $refused_both undecodable for both"
  else
    fail "$spec Ceph decoding ecjit's chunks:$wrong"
  fi
  rm -rf "$W"
done

crashes=$(find "$S/crash" -mindepth 1 -maxdepth 1 | wc -l)
((crashes == 0)) || fail "ceph-erasure-code-tool wrote $crashes crash report(s)"
say "$PASSED passed, $FAILED failed ($(elapsed) s)"
((FAILED == 0))
