#!/usr/bin/env bash
# cli_test: the ecjit command's kernel options - bad values exit 2 with a message naming the
# option, and --unroll N really unrolls the main loop (N times the affine products per step).
#   cli_test.sh path/to/ecjit
set -uo pipefail
ECJIT=$1
fails=0

# expect_error <message fragment> <ecjit args...>: exit status 2, fragment on stderr, no stdout.
expect_error() {
  local want=$1
  shift
  local out err status
  err=$(mktemp)
  out=$("$ECJIT" "$@" 2>"$err")
  status=$?
  if [[ $status -ne 2 || -n $out ]] || ! grep -qF -- "$want" "$err"; then
    echo "FAIL: ecjit $* -> exit $status, stderr: $(cat "$err"), want exit 2 and '$want'"
    fails=$((fails + 1))
  fi
  rm -f "$err"
}

# Affine instructions in the %vloop block of `ecjit asm` for RS(4,2) on a fixed GFNI target.
affine_in_loop() {
  "$ECJIT" asm --spec rs-vand:k=4,m=2,gf=8 --target x86_64-v4+gfni --strategy gfni "$@" |
    awk '/^[.$A-Za-z_0-9]+:/ { inside = ($0 ~ /%vloop *$/); next }
         inside && /vgf2p8affineqb/ { n++ } END { print n + 0 }'
}

for bad in 0 9 x 12; do
  expect_error "--unroll '$bad' is not a number of vectors 1..8" ir --spec rs-vand:k=4,m=2,gf=8 --unroll "$bad"
done
expect_error "option '--unroll' has an empty value" ir --spec rs-vand:k=4,m=2,gf=8 --unroll ""
expect_error "--opt 'O7' is not one of O0, O1, O2, O3" asm --spec rs-vand:k=4,m=2,gf=8 --opt O7
expect_error "unknown strategy 'bogus'" stats --spec rs-vand:k=4,m=2,gf=8 --strategy bogus
# Bad demo arguments exit 2 like every command's; numbers are decimal.
expect_error "unknown strategy 'foo'" demo --strategy foo --size 4K
# Every command's --help ends with its exit statuses.
for cmd in $("$ECJIT" --help | awk '/^  [a-z]/ {print $1}'); do
  if ! "$ECJIT" "$cmd" --help | grep -q '^exit status: 0 '; then
    echo "FAIL: ecjit $cmd --help does not list its exit statuses"
    fails=$((fails + 1))
  fi
done
# A forced strategy the target cannot run is refused (exit 2), never replaced by another.
expect_error "strategy 'gfni' cannot run GF(2^8) on target 'host-gfni'" demo --strategy gfni --target host-gfni --size 4K
expect_error "strategy 'clmul-insn' cannot run GF(2^8)" demo --strategy clmul-insn --size 4K
# ECJIT_HOST_MASK hides host features (a test run standing in for an older machine class):
# only "-name" items, and a hidden feature cannot be asked for again.
ECJIT_HOST_MASK=-gfni,+avx2 expect_error "'+avx2' adds a feature; the mask only hides features" demo --size 4K
ECJIT_HOST_MASK=-nosuchfeature expect_error "ECJIT_HOST_MASK '-nosuchfeature'" demo --size 4K
ECJIT_HOST_MASK=-gfni expect_error "strategy 'gfni' cannot run GF(2^8) on target 'host'" demo --strategy gfni --size 4K
if ! ECJIT_HOST_MASK=-gfni,-avx512f "$ECJIT" demo --spec rs-vand:k=10,m=4,gf=8 --size 64K | grep -qE "^encoder: .*\(strategy split-table[,)]"; then
  echo "FAIL: ECJIT_HOST_MASK=-gfni,-avx512f: the encoder is not split-table"
  fails=$((fails + 1))
fi
# Index lists take ranges; bad ranges and repeats are named.
expect_error "'5-2' in '0,5-2' is not a shard index or a range a-b (a <= b)" demo --lose 0,5-2 --size 4K
expect_error "shard 3 listed twice in '0-3,3'" demo --lose 0-3,3 --size 4K
if ! "$ECJIT" demo --spec rs-vand:k=6,m=3 --lose 1-3 --size 4K --seconds 0.01 | grep -q "lost shards 1,2,3"; then
  echo "FAIL: ecjit demo --lose 1-3 did not lose shards 1,2,3"
  fails=$((fails + 1))
fi
expect_error "--unroll '0x2' is not a number of vectors 1..8" ir --spec rs-vand:k=4,m=2,gf=8 --unroll 0x2
if ! "$ECJIT" demo --size 0100 --seconds 0.01 | grep -q "100 B per shard"; then
  echo "FAIL: demo --size 0100 is not 100 bytes"
  fails=$((fails + 1))
fi
# A size the machine cannot hold is refused up front (no crash halfway).
expect_error "of memory (the demo uses at most half)" demo --size 4G
# aot: one path for two outputs is refused; a failed header write leaves no object behind.
tmpd=$(mktemp -d)
expect_error "is given for two outputs (-o and --header)" aot --spec rs-vand:k=4,m=2 --target aarch64 -o "$tmpd/x.o" --header "$tmpd/x.o"
"$ECJIT" aot --spec rs-vand:k=4,m=2 --target aarch64 -o "$tmpd/y.o" --header "$tmpd/missing/y.h" 2>/dev/null
if [[ -e "$tmpd/y.o" || -n "$(ls "$tmpd")" ]]; then
  echo "FAIL: aot left files behind after its header could not be written: $(ls "$tmpd")"
  fails=$((fails + 1))
fi
rm -rf "$tmpd"
# --op shape: the kernel that serves first calls of any erasure set (coefficients as data).
expect_error "--outputs '9' is not a number of outputs 1..8" asm --spec rs-vand:k=4,m=2 --op shape --outputs 9
expect_error "--outputs applies to --op shape only" asm --spec rs-vand:k=4,m=2 --outputs 1
expect_error "no shape kernel for GF(2^8) with strategy clmul-shift" asm --spec rs-vand:k=4,m=2 --op shape --strategy clmul-shift --target x86_64-v3
expect_error "no shape kernel for GF(2^8)" asm --spec rs-vand:k=4,m=2 --op shape --target x86_64
# 4 inputs x 2 outputs: 8 products per vector; on AVX-512 (32 registers) the runtime's shape
# kernels take four vectors per input in a step (ir::shape_unroll), --unroll 1 one.
for case in "32|" "8|--unroll 1"; do
  want=${case%%|*} extra=${case#*|}
  # shellcheck disable=SC2086
  shape_affine=$("$ECJIT" asm --spec rs-vand:k=4,m=2,gf=8 --target x86_64-v4+gfni --op shape --outputs 2 $extra |
    awk '/^[.$A-Za-z_0-9]+:/ { inside = ($0 ~ /%vloop *$/); next } inside && /vgf2p8affineqb/ { n++ } END { print n + 0 }')
  if [[ $shape_affine -ne $want ]]; then
    echo "FAIL: a 4-input 2-output gfni shape kernel (${extra:-default unroll}) has $shape_affine affine products in its loop, want $want"
    fails=$((fails + 1))
  fi
done

one=$(affine_in_loop)
for u in 2 4; do
  got=$(affine_in_loop --unroll $u)
  if [[ $one -eq 0 || $got -ne $((u * one)) ]]; then
    echo "FAIL: --unroll $u: $got affine instructions in the main loop, want $u x $one"
    fails=$((fails + 1))
  fi
done
header=$("$ECJIT" ir --spec rs-vand:k=4,m=2,gf=8 --unroll 2 | head -1)
if [[ $header != *", unroll 2"* ]]; then
  echo "FAIL: ir header does not name the depth: $header"
  fails=$((fails + 1))
fi

# Bit-matrix (XOR) codes: spec rules, their kernels in ir/asm/stats, check-mds, the demo.
tmpd=$(mktemp -d)
expect_error "liberation needs w prime" demo --spec liberation:k=4,w=8
expect_error "packet=12 must be a multiple of 8 bytes" ir --spec cauchy-good:k=4,m=2,w=8,packet=12
expect_error "unknown key 'gf'" ir --spec cauchy-good:k=4,m=2,gf=8
expect_error "bit-matrix codes have one lowering, xor" asm --spec liber8tion:k=8 --strategy gfni
expect_error "bit-matrix codes have no shape kernels" asm --spec liber8tion:k=8 --op shape
# aot --op shape: a table of every (inputs, outputs, mode); its options only with it.
expect_error "--decoders does not apply to --op shape" aot --op shape --spec rs-vand:k=4,m=2 --target x86_64-v3 --decoders 0 -o "$tmpd/s.o"
expect_error "--inputs applies to --op shape only" aot --spec rs-vand:k=4,m=2 --target x86_64-v3 --inputs 2 -o "$tmpd/s.o"
expect_error "--outputs: 9 is not in 1..8" aot --op shape --spec rs-vand:k=4,m=2 --target x86_64-v3 --outputs 1,9 -o "$tmpd/s.o"
expect_error "--accumulate 'maybe' is not no, yes or both" aot --op shape --spec rs-vand:k=4,m=2 --target aarch64 --accumulate maybe -o "$tmpd/s.o"
if ! "$ECJIT" aot --op shape --spec rs-vand:k=4,m=3,gf=8 --target aarch64 --inputs 2,5 --accumulate yes \
     --prefix sh -o "$tmpd/sh.o" --header "$tmpd/sh.h" ||
   ! grep -q '#define SH_SHAPE_COUNT 6' "$tmpd/sh.h" || ! grep -q '{5, 3, 1, sh_k5_r3_acc},' "$tmpd/sh.h" ||
   ! grep -q '#define SH_COEFF_BYTES 32' "$tmpd/sh.h"; then
  echo "FAIL: ecjit aot --op shape did not write the 6 accumulate kernels' object and table"
  fails=$((fails + 1))
fi
# aot --op steps: an rs-fft field's two step kernels and what they read, rs-fft specs only.
expect_error "--op steps is for rs-fft specs" aot --op steps --spec rs-vand:k=4,m=2 --target x86_64-v3 -o "$tmpd/st.o"
expect_error "--decoders does not apply to --op steps" aot --op steps --spec rs-fft:k=8,m=4 --target x86_64-v3 --decoders 0 -o "$tmpd/st.o"
if ! "$ECJIT" aot --op steps --spec rs-fft:k=8,m=4,gf=8 --target aarch64 --prefix st -o "$tmpd/st.o" --header "$tmpd/st.h" ||
   ! grep -q '#define ST_MULTIPLIES "split-table"' "$tmpd/st.h" || ! grep -q '#define ST_WHOLE_COLUMNS 0' "$tmpd/st.h" ||
   ! grep -q 'void st_transform_steps(' "$tmpd/st.h" || ! grep -q 'void st_steps(' "$tmpd/st.h" ||
   ! "$ECJIT" aot --op steps --spec rs-fft:k=8,m=4 --target x86_64-v4+gfni --prefix st5 -o "$tmpd/st5.o" --header "$tmpd/st5.h" ||
   ! grep -q '#define ST5_MULTIPLIES "gfni"' "$tmpd/st5.h" || ! grep -q '#define ST5_WHOLE_COLUMNS 1' "$tmpd/st5.h"; then
  echo "FAIL: ecjit aot --op steps did not write the step kernels' object and header"
  fails=$((fails + 1))
fi
expect_error "--generic is for codes over GF(2^l)" aot --spec liber8tion:k=8 --target aarch64 --generic -o "$tmpd/l8.o"
if ! "$ECJIT" aot --spec liber8tion:k=8 --target hexagon --decoders "0,9" -o "$tmpd/l8.o" --header "$tmpd/l8.h" ||
   ! grep -q "#define ECJIT_LIBER8TION_K_8_M_2_W_8_PACKET_64_BLOCK_BYTES 512" "$tmpd/l8.h"; then
  echo "FAIL: ecjit aot of liber8tion for hexagon did not write its object and header"
  fails=$((fails + 1))
fi
# aot of an array code: encoder, failed-disk rebuilds and reads; bad parameters and sets named.
expect_error "xcode needs p prime" aot --spec xcode:p=6 --target aarch64 -o "$tmpd/x6.o"
expect_error "cannot rebuild disks 0,1,2" aot --spec xcode:p=7 --target aarch64 --decoders "0,1,2" -o "$tmpd/x7.o"
expect_error "disk 7 does not exist" aot --spec bpcode:p=7 --target aarch64 --decoders "7" -o "$tmpd/b7.o"
expect_error "--op shape is for codes over GF(2^l)" aot --op shape --spec xcode:p=7 --target aarch64 -o "$tmpd/x7.o"
if ! "$ECJIT" aot --spec bpcode:p=7 --target armv7 --decoders "0;2,3" -o "$tmpd/b7.o" --header "$tmpd/b7.h" ||
   ! grep -q "#define ECJIT_BPCODE_P_7_ELEMENT_64_DECODER_COUNT 2" "$tmpd/b7.h" ||
   ! grep -q "#define ECJIT_BPCODE_P_7_ELEMENT_64_READ_COUNT 3" "$tmpd/b7.h" ||
   ! grep -q "static inline int ecjit_bpcode_p_7_element_64_read_range(" "$tmpd/b7.h"; then
  echo "FAIL: ecjit aot of bpcode for armv7 did not write its object and header (with 3 reads)"
  fails=$((fails + 1))
fi
# ir / asm / stats of an array code: its encoder and the rebuild of failed disks.
rebuild_asm=$("$ECJIT" asm --spec xcode:p=7 --target aarch64 --op decode --erased 2,5)
if ! grep -q "ecjit_rebuild_d2_5__xcode_p_7" <<<"$rebuild_asm"; then
  echo "FAIL: ecjit asm of an X-Code rebuild"
  fails=$((fails + 1))
fi
expect_error "cannot rebuild disks 0,1,2" ir --spec xcode:p=7 --op decode --erased 0,1,2
# A decoder is shown as a default Jit builds it: promoted behind shape kernels (no path for
# shards shorter than a vector: it traps there) where they serve the code, else per set.
short_traps() { "$ECJIT" ir --op decode --erased 0,3 "$@" | grep -c "short.trap"; }
if [[ $(short_traps --spec rs-vand:k=10,m=4 --target x86_64-v4+gfni) -eq 0 ||
      $(short_traps --spec rs-vand:k=10,m=4 --target x86_64) -ne 0 ||
      $(short_traps --spec rs-vand:k=70,m=4 --target x86_64-v4+gfni) -ne 0 ]]; then
  echo "FAIL: ecjit ir --op decode does not build decoders as the runtime does (promoted: whole vectors)"
  fails=$((fails + 1))
fi
expect_error "array codes have one lowering, xor" asm --spec bpcode:p=7 --strategy gfni
# A size that is not a whole number of the code's blocks is rounded up, with a note.
expect_rounded() {
  local want=$1
  shift
  local err
  err=$("$ECJIT" "$@" 2>&1 >/dev/null)
  if [[ $? -ne 0 ]] || ! grep -qF -- "$want" <<<"$err"; then
    echo "FAIL: ecjit $* -> stderr: $err, want exit 0 and '$want'"
    fails=$((fails + 1))
  fi
}
expect_rounded "--size 1000 rounded up to 1152, a multiple of 384 bytes" demo --spec blaum-roth:k=6,w=6,packet=64 --size 1000
expect_rounded "--size 65536 rounded up to 65664, a multiple of 384 bytes" demo --spec rdp:p=7 --size 64K
# Array codes with parity on the data disks run through their ArrayCodec, checked against the
# element-level reference encoder.
for spec in xcode:p=7 bpcode:p=11,element=128; do
  if ! "$ECJIT" demo --spec "$spec" --size 64K --seconds 0.05 --lose 1,3 2>/dev/null | grep -q '^OK$'; then
    echo "FAIL: ecjit demo --spec $spec does not run"
    fails=$((fails + 1))
  fi
done
expect_error "xcode rebuilds at most 2 failed disks" demo --spec xcode:p=7 --lose 0,1,2 --size 4K
expect_error "xcode needs p prime" demo --spec xcode:p=4
expect_error "--lose: disk 9 does not exist (7 disks" demo --spec xcode:p=7 --lose 9
xor_in_loop=$("$ECJIT" asm --spec liber8tion:k=8,packet=64 --target x86_64-v3 |
  awk '/^[.$A-Za-z_0-9]+:/ { inside = ($0 ~ /%vloop *$/); next } inside && /vxorps|vpxor/ { n++ } END { print n + 0 }')
xor_header=$("$ECJIT" ir --spec liber8tion:k=8,packet=64 | head -1)
want_xors=$(echo "$xor_header" | sed -n 's/.*schedule [a-z]*, \([0-9]*\) XORs.*/\1/p')
if [[ -z $want_xors || $xor_in_loop -ne $want_xors ]]; then
  echo "FAIL: liber8tion encoder loop has $xor_in_loop vector XORs, its schedule says '$want_xors' ($xor_header)"
  fails=$((fails + 1))
fi
# (output captured first: grep -q closing the pipe early would kill ecjit before its CSV is flushed)
xor_table=$("$ECJIT" stats --xor-table --csv "$tmpd/xor.csv")
if ! grep -q "17.88" <<<"$xor_table" || ! grep -q "zhou_tian_2019_table3" "$tmpd/xor.csv"; then
  echo "FAIL: stats --xor-table does not reproduce Jerasure's 17.88 XORs per coding word or wrote no CSV"
  fails=$((fails + 1))
fi
if ! "$ECJIT" check-mds --spec liberation:k=7,w=7 | grep -q "MDS (exhaustive, 36 of 36"; then
  echo "FAIL: check-mds of liberation k=7 w=7 is not an exhaustive MDS over 36 erasure sets"
  fails=$((fails + 1))
fi
"$ECJIT" check-mds --spec "bitmatrix-of:of=matrix,k=2,m=2,w=8,a=1.1/1.1" >/dev/null
if [[ $? -ne 1 ]]; then
  echo "FAIL: check-mds of a singular bit-matrix code does not exit 1"
  fails=$((fails + 1))
fi
# rs:k=,m=: the construction chosen by the cost model, named as resolved; bad keys named.
rs_out=$("$ECJIT" demo --spec rs:k=32,m=32 --size 4K --seconds 0.01)
if ! grep -q "^resolved: *rs-fft:k=32,m=32,gf=8 (rs:k=32,m=32 chose rs-fft" <<<"$rs_out" || ! grep -q "^OK" <<<"$rs_out"; then
  echo "FAIL: ecjit demo --spec rs:k=32,m=32 does not resolve to rs-fft and check OK"
  fails=$((fails + 1))
fi
expect_error "rs takes k and m only" demo --spec rs:k=10,m=4,gf=8
if ! "$ECJIT" demo --spec liber8tion:k=8,packet=64 --size 64K --seconds 0.05 | grep -q "^OK"; then
  echo "FAIL: ecjit demo --spec liber8tion:k=8 does not end with OK"
  fails=$((fails + 1))
fi
# rs-fft (reed-solomon-simd's code): the demo through FftCodec; ir / asm / stats of its
# kernels (GFNI affine blocks where the target has GFNI, nibble lookups otherwise); no
# matrix-kernel commands.
if ! "$ECJIT" demo --spec rs-fft:k=8,m=4 --size 4K --seconds 0.05 | grep -q "^OK"; then
  echo "FAIL: ecjit demo --spec rs-fft:k=8,m=4 does not end with OK"
  fails=$((fails + 1))
fi
expect_error "past Leopard-RS's GF(2^8) limit" demo --spec rs-fft:k=200,m=57,gf=8
# rs-fft over GF(2^8) (Leopard-RS / klauspost's leopard8): the demo, any shard length, and its
# kernels' assembly (one affine transform per multiply with GFNI, two lookups without).
if ! "$ECJIT" demo --spec rs-fft:k=32,m=32,gf=8 --size 4097 --seconds 0.05 | grep -q "^OK"; then
  echo "FAIL: ecjit demo --spec rs-fft:k=32,m=32,gf=8 does not end with OK"
  fails=$((fails + 1))
fi
fft8_asm=$("$ECJIT" asm --spec rs-fft:k=8,m=4,gf=8 --target x86_64-v3+gfni --op steps)
if ! grep -q "ecjit_fft8_steps" <<<"$fft8_asm" || ! grep -q "vgf2p8affineqb" <<<"$fft8_asm"; then
  echo "FAIL: ecjit asm --spec rs-fft:k=8,m=4,gf=8 --op steps is not the GF(2^8) step kernel"
  fails=$((fails + 1))
fi
expect_rounded "--size 1001 rounded up to 1002, a multiple of 2 bytes" demo --spec rs-fft:k=8,m=4 --size 1001
fft_gfni_asm=$("$ECJIT" asm --spec rs-fft:k=8,m=4 --target x86_64-v3+gfni --op steps)
fft_avx2_asm=$("$ECJIT" asm --spec rs-fft:k=8,m=4 --target x86_64-v3)
if ! grep -q "vgf2p8affineqb" <<<"$fft_gfni_asm" || grep -q "vpshufb" <<<"$fft_gfni_asm" ||
   ! grep -q "multiplies by gfni" <<<"$fft_gfni_asm" || ! grep -q "vpshufb" <<<"$fft_avx2_asm"; then
  echo "FAIL: ecjit asm of rs-fft kernels: GFNI affine blocks with GFNI, nibble lookups without"
  fails=$((fails + 1))
fi
expect_error "work slots, more than the 64" ir --spec rs-fft:k=100,m=100
expect_error "is not encode, decode, steps or transform-steps" asm --spec rs-fft:k=8,m=4 --op shape
# The transforms' step kernel (what a codec compiles first): the step kernel without the decode
# core's derivative-fused kinds.
fft_tsteps_ir=$("$ECJIT" ir --spec rs-fft:k=8,m=4 --op transform-steps --no-opt)
fft_steps_ir=$("$ECJIT" ir --spec rs-fft:k=8,m=4 --op steps --no-opt)
if ! grep -q "define void @ecjit_fft_transform_steps" <<<"$fft_tsteps_ir" || grep -q "top8d" <<<"$fft_tsteps_ir" ||
   ! grep -q "define internal void @ecjit_fft_steps.top8d" <<<"$fft_steps_ir"; then
  echo "FAIL: ecjit ir --op transform-steps is not the step kernel without the decode core's kinds"
  fails=$((fails + 1))
fi
expect_error "--erased does not apply to rs-fft" asm --spec rs-fft:k=8,m=4 --op decode --erased 0
expect_error "erasure set {0,4}: an rs-fft decoder ahead of time inverts the encoder" aot --spec rs-fft:k=10,m=4 \
  --target aarch64 --decoders "0-3;0,4" -o "$tmpd/fft.o"
expect_error "no rs-fft kernels there" asm --spec rs-fft:k=8,m=4 --target riscv64
expect_error "is not a matrix code over a polynomial basis" check-mds --spec rs-fft:k=8,m=4
expect_error "--generic does not apply to rs-fft" aot --spec rs-fft:k=8,m=4 --target aarch64 -o "$tmpd/fft.o" --generic
if ! "$ECJIT" aot --spec rs-fft:k=8,m=4 --target aarch64 --decoders "0;4-7" -o "$tmpd/fft.o" --header "$tmpd/fft.h" ||
   ! grep -q "#define ECJIT_RS_FFT_K_8_M_4_GF_16_COLUMN_BYTES 64" "$tmpd/fft.h" ||
   ! grep -q "#define ECJIT_RS_FFT_K_8_M_4_GF_16_DECODER_COUNT 2" "$tmpd/fft.h"; then
  echo "FAIL: ecjit aot of an rs-fft encoder for aarch64 did not write its object and header"
  fails=$((fails + 1))
fi
# Array codes: the spec rules, a demo, and `ecjit edp` (the degraded-read replay of Shen et al. 2016).
if ! grep -Eq "^xcode p=7 +7 +5 +4\.00 +4\.00 +2\.00 +2$" <<<"$xor_table"; then
  echo "FAIL: stats --xor-table does not show X-Code p=7 at the optimum (4 XORs per parity, update 2)"
  fails=$((fails + 1))
fi
expect_error "rdp needs k <= p - 1" check-mds --spec rdp:k=5,p=5
expect_error "unknown key 'w'" check-mds --spec star:k=4,w=4
if ! "$ECJIT" demo --spec star:k=5,p=7 --size 96K --seconds 0.05 | grep -q "^OK"; then
  echo "FAIL: ecjit demo --spec star:k=5,p=7 does not end with OK"
  fails=$((fails + 1))
fi
expect_error "xcode needs p prime" edp --codes xcode --p 9
expect_error "unknown array code 'raid5'" edp --codes raid5
expect_error "unknown workload 'web_9'" edp --workloads web_9
expect_error "--element" edp --element 5000
if ! "$ECJIT" edp --codes xcode --p 5 --workloads web_1 --reads 300 --csv "$tmpd/edp.csv" | grep -q "^xcode *web_1 *edp" ||
   [[ $(wc -l <"$tmpd/edp.csv") -ne 4 ]]; then
  echo "FAIL: ecjit edp does not print X-Code's EDP row or its CSV has not 3 rows"
  fails=$((fails + 1))
fi
# The placement-aware store: every code and placement laid over disk files, each disk failed
# in turn, every byte of every read checked by ecjit itself (it exits 1 on a mismatch).
store_out=$("$ECJIT" edp --store "$tmpd/store" --size 1M --p 5 --workloads web_3 --reads 60)
if [[ $? -ne 0 ]] || [[ $(grep -c "every byte checked" <<<"$store_out") -ne 9 ]] || [[ ! -f "$tmpd/store/xcode_edp/disk4/data" ]]; then
  echo "FAIL: ecjit edp --store did not check 9 code x placement replays on disk files"
  fails=$((fails + 1))
fi
# A user's first two runs with the disk cache on (the default): the second loads every kernel,
# the streaming-store encoder of 4 MiB shards included, and must run as the first did.
cache_dir=$(mktemp -d)
for run in first second; do
  if ! ECJIT_CACHE_DIR="$cache_dir" "$ECJIT" demo --spec rs-vand:k=10,m=4,gf=8 --size 4M --seconds 0.05 >"$tmpd/demo.out" 2>&1 ||
     ! grep -q "^OK" "$tmpd/demo.out"; then
    echo "FAIL: the $run ecjit demo --size 4M over one disk cache did not end with OK: $(tail -n 3 "$tmpd/demo.out")"
    fails=$((fails + 1))
  fi
done
rm -rf "$cache_dir" "$tmpd"

if [[ $fails -ne 0 ]]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "cli_test: all checks passed ($one affine products per step at depth 1)"
