#!/usr/bin/env bash
# Sets up, builds and runs every ecjit test: the normal build (clang 19), a GCC build (non-slow
# tests), then the ASan+UBSan build and the fuzzers. ECJIT_SKIP_GCC=1 / ECJIT_SKIP_SANITIZE=1
# skip those passes; ECJIT_JOBS sets build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

JOBS="${ECJIT_JOBS:-2}"
# The file commands' failpoints (ECJIT_FAILPOINT) are compiled into the test builds only.
CONFIG=(-G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DECJIT_FAILPOINTS=ON)

# stage <title>: prints the title and how long the previous stage took, so CI's budget
# (40 minutes on a 2-core machine) stays visible in its log.
STAGE_START=$SECONDS
stage() {
  echo "== $1   (previous stage $((SECONDS - STAGE_START)) s, total ${SECONDS} s)"
  STAGE_START=$SECONDS
}

# Volume, not new paths: these repeat, at 8 MiB, over every erasure set or over every shape,
# paths that smaller tests take too. They run in the first (clang) stage; the GCC and the
# sanitizer stages skip them, as they skip the integration and packaging tests (Swift, Ceph,
# install, Python), which check the drop-in and the package rather than the compiler, and
# the tests labelled slow (not even built there: ECJIT_BUILD_SLOW_TESTS=OFF).
VOLUME='StreamingStores\.AlignedLargeShards|SplitCodec\..*len(838860[89]|3145731)$|ExhaustiveWideFields$'
VOLUME+='|DecodePlan\.WideCodeRebuildsFromItsSources$|RsFftRoundTrip\.EveryErasureSetOfSmallCodes$'
VOLUME+='|XorFamilies\.CauchyOptIsReproducibleMdsAndNoWorse$|EncodeGrid\.|KernelLru\.ManyErasureSetsStayBounded$'
VOLUME+='|ReferenceReconstruct\.ExhaustiveSmallCodesGf8$|O3AllLengths/gf16_64x16_'
VOLUME+='|isal_diff_test\.(eager|shape)\.IsalDiff\.EncodeDataAllEntryPoints$'
# The O0-and-unrolled and scalar-tail variants compile every strategy's kernels again at other
# unroll depths and opt levels: LLVM's work (not instrumented), not ecjit's.
VOLUME+='|O0AndUnrolled|IrBuildersVariants\.ScalarTailFallback$'

stage "build (RelWithDebInfo)"
cmake -S . -B build "${CONFIG[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
stage "tests"
ctest --test-dir build --output-on-failure -j "$JOBS"
# The decision and kernel tests again with the host masked to an AVX2 CPU without GFNI or
# AVX-512 (a Zen 3): the JIT, the built-in kernels' choice and the tuner see that machine
# class, so a newer machine catches what a Zen 3 would. A host without GFNI and AVX-512 skips it:
# the run above already was that class.
MASKED='^(codec_test|split_table_test|strategy_test|shape_kernel_test|gfni_test|clmul_insn_test|fft_|rs_fft_test|'
MASKED+='ir_builders_test|target_spec_test|tuner_test|tiered_tuning_test|two_stage_decode_test|degraded_read_test|aot_kernels_test|'
MASKED+='disk_cache_test|isal_diff_test\.default|cli_test)'
if grep -q -w -E 'gfni|avx512f' /proc/cpuinfo 2>/dev/null; then
  stage "decision and kernel tests, host masked to x86-64-v3 without GFNI (ECJIT_HOST_MASK)"
  ECJIT_HOST_MASK=-gfni,-avx512f ctest --test-dir build --output-on-failure -j "$JOBS" -R "$MASKED" \
    -LE 'slow|integration|package' -E "$VOLUME"
else
  stage "decision and kernel tests masked to x86-64-v3 without GFNI: skipped, the run above was on that class"
fi

# Debian's default compiler is supported too: a Release build with GCC at -O2, the level
# Debian builds its packages at (-O3 compiled about 20% slower), and the non-slow tests
# (ECJIT_SKIP_GCC=1 skips it).
if [ "${ECJIT_SKIP_GCC:-0}" != "1" ]; then
  stage "build (GCC $(gcc -dumpversion), Release -O2)"
  cmake -S . -B build-gcc -G Ninja -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DECJIT_FAILPOINTS=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DECJIT_BUILD_BENCH=OFF -DECJIT_BUILD_PACKAGE=OFF \
    -DECJIT_BUILD_SLOW_TESTS=OFF >/dev/null
  cmake --build build-gcc -j "$JOBS"
  stage "tests (GCC)"
  ctest --test-dir build-gcc --output-on-failure -j "$JOBS" -LE 'slow|integration|package' -E "$VOLUME"
fi

if [ "${ECJIT_SKIP_SANITIZE:-0}" != "1" ]; then
  stage "build (ASan + UBSan, -O1)"
  # -O1, the sanitizers' recommended level: at -O0 this stage's tests were CI's longest part.
  # Line tables are all a sanitizer report needs (file:line per frame); full debug info made
  # every compile of this stage about 40% slower.
  cmake -S . -B build-asan "${CONFIG[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
    -DCMAKE_C_FLAGS_DEBUG="-gline-tables-only -O1" -DECJIT_SANITIZE=ON \
    -DECJIT_BUILD_BENCH=OFF -DECJIT_BUILD_PACKAGE=OFF -DECJIT_BUILD_SLOW_TESTS=OFF -DECJIT_BUILD_FUZZ=ON >/dev/null
  cmake --build build-asan -j "$JOBS"
  stage "tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE 'slow|integration|package' -E "$VOLUME"
  # fuzz <target> <seconds> <what>: the whole log is kept (build-asan/<target>.log); on a
  # failure its sanitizer report is printed.
  fuzz() {
    stage "fuzz: $3 for $2 s"
    mkdir -p "build-asan/$1-corpus"
    if ! ASAN_OPTIONS=detect_leaks=0 "build-asan/test/fuzz/$1" "build-asan/$1-corpus" \
        -max_total_time="$2" -rss_limit_mb=8192 -print_final_stats=1 > "build-asan/$1.log" 2>&1; then
      grep -n -A60 "ERROR: AddressSanitizer\|runtime error\|ERROR: libFuzzer\|MISMATCH\|failed on" "build-asan/$1.log" | head -n 120
      tail -n 12 "build-asan/$1.log"
      exit 1
    fi
    tail -n 12 "build-asan/$1.log"
  }
  fuzz codec_fuzz "${ECJIT_FUZZ_SECONDS:-45}" "JIT kernels against the reference codec"
  fuzz disk_cache_fuzz "${ECJIT_CACHE_FUZZ_SECONDS:-20}" "damaged disk-cache entries never crash, hang or serve"
fi
stage "done"
