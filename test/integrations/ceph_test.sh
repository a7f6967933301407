#!/usr/bin/env bash
# ceph_test: Ceph's own ISA-L erasure-code plugin (libec_isa.so, Debian 12's Ceph 16.2.15) run by
# Ceph's ceph-erasure-code-tool with ecjit's libisal.so.2 preloaded. No cluster, nothing installed:
# the .debs are fetched with `apt-get download` and unpacked with `dpkg -x` into a cache.
#
#   ceph_test.sh <drop-in dir, e.g. build/isal-compat>
#
# Why LD_PRELOAD: libec_isa.so does not link libisal.so.2; it carries its own copy of ISA-L's
# erasure-code functions and exports them, and its calls to them go through PLT/GOT relocations
# (ELF interposition), so a libisal.so.2 preloaded ahead of it takes those calls. LD_LIBRARY_PATH
# alone changes nothing (checked below).
#
# What it proves, for plugin=isa technique=reed_sol_van and cauchy at 2+1, 4+2, 6+3, 8+3, 10+4:
#   - binding: LD_DEBUG=bindings shows libec_isa.so's ec_/gf_ symbols bound to the drop-in (and,
#     without the preload, to libec_isa.so itself);
#   - encode: every shard equals the plain run's (Ceph's embedded ISA-L) and, when installed, the
#     run with Debian's libisal.so.2 preloaded; the ecjit runs use the default policy, every matrix
#     compiled (ECJIT_ISAL_COMPILE=eager) and shape kernels only (ECJIT_ISAL_COMPILE=shape);
#   - decode after losing m shards (three erasure sets) restores the object byte for byte, on
#     every variant;
#   - ecjit really ran: a tiny preloaded probe prints ecjit_isal_get_stats() at process exit;
#     the ecjit runs must count one call per stripe (0 for m=1: Ceph XORs single parity itself),
#     on the kernel kind the mode asks for; the baselines must not have ecjit at all.
#
# Cache: ${ECJIT_CEPH_CACHE:-/var/tmp/ecjit-ceph} (debs + unpacked root, reused). Scratch: mktemp,
# removed on exit (ECJIT_CEPH_KEEP=1 keeps it). Exit 0 pass, 1 with FAIL lines, 0 with "SKIP: why"
# when the packages cannot be had. Needs apt-get + dpkg-deb (first run), ldd; readelf, nm and a C
# compiler are used when present (evidence and the stats probe; without a compiler the per-run
# stats checks are skipped with a NOTE).
set -u -o pipefail

IT_NAME=ceph
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
it_start "$@"
source "$(dirname "${BASH_SOURCE[0]}")/ceph_env.sh"
PLUGIN=$ECDIR/libec_isa.so
[[ -f $PLUGIN ]] || skip "unpacked packages lack libec_isa.so (delete $CACHE and retry)"

# The stats probe (common.sh): what ecjit_isal_get_stats() says at process exit.
it_build_probe "$S" "$S/probe.log"
[[ -n $PROBE ]] || say "NOTE: no C compiler or header: per-run ecjit_isal_get_stats checks skipped"

SYS_ISAL=
for d in /usr/lib/$ARCH_TRIPLET /lib/$ARCH_TRIPLET /usr/lib /usr/local/lib; do
  if [[ -f $d/libisal.so.2 && $(readlink -f "$d/libisal.so.2") != $(readlink -f "$LIB") ]]; then
    SYS_ISAL=$d/libisal.so.2
    break
  fi
done

# run <variant> <stats file> <tool args...>
#   plain: Ceph's embedded ISA-L; isal: Debian's libisal.so.2 preloaded; ecjit-default|eager|shape.
run() {
  local v=$1 st=$2
  shift 2
  local pre=
  case $v in
    plain) pre= ;;
    isal) pre=$SYS_ISAL ;;
    ecjit-*) pre=$LIB ;;
  esac
  [[ -n $PROBE ]] && pre="${pre:+$pre }$PROBE"
  local mode=
  case $v in ecjit-eager) mode=eager ;; ecjit-shape) mode=shape ;; esac
  rm -f "$st"
  env ${mode:+ECJIT_ISAL_COMPILE=$mode} ECJIT_STATS_FILE="$st" LD_LIBRARY_PATH="$LDP" \
    ${pre:+LD_PRELOAD="$pre"} "$TOOL" "${CEPH_OPTS[@]}" "$@"
}

# ---- evidence: libec_isa.so embeds ISA-L, and calls it through interposable relocations ------
if command -v readelf >/dev/null && command -v nm >/dev/null; then
  needed=$(readelf -d "$PLUGIN" | awk '/NEEDED/ { gsub(/[\[\]]/, "", $5); print $5 }' | paste -sd' ' -)
  ndef=$(nm -D --defined-only "$PLUGIN" | awk '$2 == "T" && $3 ~ /^(ec_|gf_)/ && $3 !~ /slver/' | wc -l)
  nslot=$(readelf -rW "$PLUGIN" | awk '/JUMP_SLOT/ && $5 ~ /^(ec_|gf_)/' | wc -l)
  bindnow=$(readelf -d "$PLUGIN" | grep -qE 'BIND_NOW|Flags:.*NOW' && echo ", BIND_NOW" || true)
  say "libec_isa.so: NEEDED [$needed] (no libisal.so.2); defines $ndef ec_/gf_ functions itself" \
      "(Ceph's embedded ISA-L) and calls $nslot of them through JUMP_SLOT relocations$bindnow"
  if [[ $needed == *libisal* ]]; then
    fail "libec_isa.so links libisal.so.2: this test's premise (embedded ISA-L) no longer holds"
  elif [[ $ndef -gt 0 && $nslot -gt 0 ]]; then
    ok "libec_isa.so embeds ISA-L's erasure code and calls it through the PLT (interposable)"
  else
    fail "libec_isa.so: expected embedded, PLT-called ec_/gf_ functions (defined $ndef, slots $nslot)"
  fi
else
  say "NOTE: readelf/nm not installed: symbol-table evidence skipped"
fi

# bindings <ld-debug prefix> <library>: "<to-library> <to-itself> <other>" counts of libec_isa.so's
# ec_/gf_ symbol bindings, and writes its ec_encode_data line to <prefix>.ec
bindings() {
  cat "$1".* 2>/dev/null | grep -F "binding file $PLUGIN " | grep -E "symbol \`(ec_|gf_)" >"$1.all"
  grep -E "symbol \`ec_encode_data'" "$1.all" | head -1 | sed 's/^ *[0-9]*: *//' >"$1.ec"
  local tol toi tot
  tol=$(grep -cF " to $2 [" "$1.all")
  toi=$(grep -cF " to $PLUGIN [" "$1.all")
  tot=$(wc -l <"$1.all")
  echo "$tol $toi $((tot - tol - toi))"
}
B=$S/bind
mkdir -p "$B"
head -c 100000 /dev/urandom >"$B/obj"
PROF=plugin=isa,technique=reed_sol_van,k=4,m=2
# plain
(cd "$B" && LD_DEBUG=bindings LD_DEBUG_OUTPUT="$B/plain" run plain "$B/st" encode $PROF 4096 0,1,2,3,4,5 obj) >"$B/log" 2>&1
read -r toe toi tor <<<"$(bindings "$B/plain" "$LIB")"
if [[ $toe == 0 && $toi -gt 0 && $(cat "$B/plain.ec") == *"to $PLUGIN ["* ]]; then
  ok "no preload: libec_isa.so's $toi ec_/gf_ bindings resolve to libec_isa.so itself (embedded ISA-L)"
else
  fail "no preload: libec_isa.so's ec_/gf_ bindings: $toe to ecjit, $toi to itself, $tor elsewhere (rerun with ECJIT_CEPH_KEEP=1 to keep the LD_DEBUG logs in $B)"
fi
# LD_LIBRARY_PATH alone: no effect (libec_isa.so has no NEEDED libisal.so.2)
(cd "$B" && LD_DEBUG=bindings LD_DEBUG_OUTPUT="$B/ldpath" LDP="$DROPIN:$LDP" run plain "$B/st" encode $PROF 4096 0,1,2,3,4,5 obj) >"$B/log" 2>&1
read -r toe toi tor <<<"$(bindings "$B/ldpath" "$LIB")"
if [[ $toe == 0 && $toi -gt 0 ]]; then
  ok "LD_LIBRARY_PATH=$DROPIN alone: still bound to libec_isa.so itself ($toi bindings): LD_PRELOAD is needed"
else
  fail "LD_LIBRARY_PATH=$DROPIN alone: $toe bindings to ecjit, $toi to libec_isa.so (expected 0 / >0)"
fi
# LD_PRELOAD
(cd "$B" && LD_DEBUG=bindings LD_DEBUG_OUTPUT="$B/pre" run ecjit-default "$B/st" encode $PROF 4096 0,1,2,3,4,5 obj) >"$B/log" 2>&1
read -r toe toi tor <<<"$(bindings "$B/pre" "$LIB")"
if [[ $toe -gt 0 && $toi == 0 && $tor == 0 && $(cat "$B/pre.ec") == *"to $LIB ["* ]]; then
  ok "LD_PRELOAD=$LIB: all $toe ec_/gf_ bindings of libec_isa.so resolve to the drop-in"
  echo "     $(cat "$B/pre.ec")"
else
  fail "LD_PRELOAD: libec_isa.so's ec_/gf_ bindings: $toe to ecjit, $toi to itself, $tor elsewhere (rerun with ECJIT_CEPH_KEEP=1 to keep the LD_DEBUG logs in $B)"
fi
# the baseline "isal" really is Debian's ISA-L
if [[ -n $SYS_ISAL ]]; then
  (cd "$B" && LD_DEBUG=bindings LD_DEBUG_OUTPUT="$B/sys" run isal "$B/st.sys" encode $PROF 4096 0,1,2,3,4,5 obj) >"$B/log" 2>&1
  read -r toe toi tor <<<"$(bindings "$B/sys" "$SYS_ISAL")"
  if [[ $toe -gt 0 && $toi == 0 && $tor == 0 ]]; then
    ok "LD_PRELOAD=$SYS_ISAL (baseline \"isal\"): all $toe bindings resolve to it"
  else
    fail "LD_PRELOAD=$SYS_ISAL: $toe bindings to it, $toi to libec_isa.so, $tor elsewhere"
  fi
fi
rm -f "$B"/plain.[0-9]* "$B"/ldpath.[0-9]* "$B"/pre.[0-9]* "$B"/sys.[0-9]*
if [[ -n $PROBE ]]; then
  sed -n 's/.*status=/ecjit JIT status: /p' "$B/st" | sed 's/^/ceph: /'
fi

# ---- encode / decode matrix -----------------------------------------------------------------
SIZE=${ECJIT_CEPH_OBJECT_SIZE:-3000017}
head -c "$SIZE" /dev/urandom >"$S/object"
VARIANTS="plain"
[[ -n $SYS_ISAL ]] && VARIANTS="$VARIANTS isal" || say "NOTE: no system libisal.so.2: baseline is Ceph's embedded ISA-L only"
VARIANTS="$VARIANTS ecjit-default ecjit-eager ecjit-shape"
JIT_OK=1
# (a short run on the ahead-of-time kernels never starts the JIT: "not-started" is fine)
[[ -n $PROBE ]] && ! grep -q "status=ok\|status=not-started" "$B/st" && JIT_OK=0 &&
  say "NOTE: JIT not running ($(sed -n 's/.*status=//p' "$B/st")): eager/shape kernel-kind checks skipped"

# check_stats <variant> <stats file> <expected calls>: "" when fine, else why not
check_stats() {
  local v=$1 f=$2 want=$3
  [[ -n $PROBE ]] || return 0
  [[ -f $f ]] || { echo "no stats written (process died?)"; return; }
  local line
  line=$(cat "$f")
  if [[ $v != ecjit-* ]]; then
    [[ $line == *ecjit=absent* ]] || echo "baseline run has ecjit in it: $line"
    return
  fi
  [[ $line == *ecjit=present* ]] || { echo "ecjit not in the process: $line"; return; }
  local calls jit shape failures
  calls=$(stat_field calls "$f")
  jit=$(stat_field jit "$f")
  shape=$(stat_field shape "$f")
  failures=$(stat_field failures "$f")
  [[ $calls == "$want" ]] || { echo "ecjit calls $calls, expected $want: $line"; return; }
  [[ $failures == 0 ]] || { echo "JIT failures: $line"; return; }
  if [[ $JIT_OK == 1 && $want -gt 0 ]]; then
    [[ $v != ecjit-eager || $jit == "$calls" ]] || { echo "eager: not all calls on own JIT kernels: $line"; return; }
    [[ $v != ecjit-shape || $shape == "$calls" ]] || { echo "shape: not all calls on shape kernels: $line"; return; }
  fi
}
kinds() { sed -n 's/.* jit=\([0-9]*\) shape=\([0-9]*\) portable=\([0-9]*\).*/jit=\1 shape=\2 portable=\3/p' "$1" 2>/dev/null; }

# k m stripe_unit (a multiple of 32: libec_isa's alignment; 4128 is not a power of two)
# (ECJIT_CEPH_CONFIGS / ECJIT_CEPH_TECHNIQUES override them; Ceph's reed_sol_van takes m <= 4 and,
# at m = 4, k <= 21)
CONFIGS=${ECJIT_CEPH_CONFIGS:-"2:1:4096 4:2:4096 6:3:65536 8:3:4128 10:4:65536"}
for tech in ${ECJIT_CEPH_TECHNIQUES:-reed_sol_van cauchy}; do
  for cfg in $CONFIGS; do
    IFS=: read -r k m su <<<"$cfg"
    n=$((k + m))
    prof=plugin=isa,technique=$tech,k=$k,m=$m
    name="$tech $k+$m su=$su"
    stripes=$(( (SIZE + k * su - 1) / (k * su) ))
    want=$stripes
    ((m == 1)) && want=0 # Ceph's isa plugin XORs (region_xor) when m = 1: no ISA-L call
    all=$(seq -s, 0 $((n - 1)))
    W=$S/$tech-$k-$m
    # encode with every variant
    errs=
    info=
    for v in $VARIANTS; do
      mkdir -p "$W/enc-$v"
      cp "$S/object" "$W/enc-$v/obj"
      if ! (cd "$W/enc-$v" && run "$v" "$W/enc-$v.st" encode "$prof" "$su" "$all" obj) >"$W/enc-$v.log" 2>&1; then
        errs="$errs; $v: encode exited nonzero (log: $(tail -c 300 "$W/enc-$v.log" | tr '\n' ' '))"
        continue
      fi
      for i in $(seq 0 $((n - 1))); do
        if [[ ! -f $W/enc-$v/obj.$i ]]; then
          errs="$errs; $v: shard $i missing"
        elif [[ $v != plain ]] && ! cmp -s "$W/enc-plain/obj.$i" "$W/enc-$v/obj.$i"; then
          errs="$errs; $v: shard $i differs from plain ($(cmp "$W/enc-plain/obj.$i" "$W/enc-$v/obj.$i" 2>&1 | head -1))"
        fi
      done
      why=$(check_stats "$v" "$W/enc-$v.st" "$want")
      [[ -z $why ]] || errs="$errs; $v: $why"
      [[ $v == ecjit-* && -n $PROBE ]] && info="$info ${v#ecjit-}:[$(kinds "$W/enc-$v.st")]"
    done
    if ((m == 1)); then
      info=" (m=1: Ceph's plugin XORs parity itself, no ISA-L call)"
    elif [[ -n $info ]]; then
      info="; kernels:$info"
    fi
    if [[ -z $errs ]]; then
      ok "$name encode: $n shards of $stripes stripes identical on ${VARIANTS// /, }; ecjit calls/process: $want${info}"
    else
      fail "$name encode:${errs#;}"
    fi
    # decode after losing m shards: first m; the last data shard + parities 2..m; spread
    lost1=$(seq -s, 0 $((m - 1)))
    lost2=$(( k - 1 ))
    ((m > 1)) && lost2="$lost2,$(seq -s, $((k + 1)) $((k + m - 1)))"
    lost3=$(for i in $(seq 0 $((m - 1))); do echo $((i * n / m)); done | paste -sd, -)
    for lost in $(printf '%s\n' "$lost1" "$lost2" "$lost3" | awk '!seen[$0]++'); do
      have=$(seq 0 $((n - 1)) | grep -vxF -f <(tr , '\n' <<<"$lost") | paste -sd, -)
      errs=
      for v in $VARIANTS; do
        D=$W/dec-$v-${lost//,/_}
        mkdir -p "$D"
        for i in ${have//,/ }; do ln -s "$W/enc-plain/obj.$i" "$D/obj.$i"; done
        if ! (cd "$D" && run "$v" "$D.st" decode "$prof" "$su" "$have" obj) >"$D.log" 2>&1; then
          errs="$errs; $v: decode exited nonzero (log: $(tail -c 300 "$D.log" | tr '\n' ' '))"
          continue
        fi
        if [[ ! -f $D/obj ]] || (($(stat -c %s "$D/obj") < SIZE)); then
          errs="$errs; $v: decoded object missing or short"
          continue
        fi
        truncate -s "$SIZE" "$D/obj"
        cmp -s "$S/object" "$D/obj" || errs="$errs; $v: decoded object differs ($(cmp "$S/object" "$D/obj" 2>&1 | head -1))"
        why=$(check_stats "$v" "$D.st" "$want")
        [[ -z $why ]] || errs="$errs; $v: $why"
        rm -rf "$D"
      done
      if [[ -z $errs ]]; then
        ok "$name decode, shards {$lost} lost: object restored on every variant; ecjit calls/process: $want"
      else
        fail "$name decode, shards {$lost} lost:${errs#;}"
      fi
    done
    rm -rf "$W"
  done
done

crashes=$(find "$S/crash" -mindepth 1 -maxdepth 1 | wc -l)
((crashes == 0)) || fail "ceph-erasure-code-tool wrote $crashes crash report(s)"
say "$PASSED passed, $FAILED failed ($(elapsed) s)"
((FAILED == 0))
