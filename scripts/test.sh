#!/usr/bin/env bash
# Sets up, builds and runs every ecjit test: the normal build, then the ASan+UBSan build.
# ECJIT_SKIP_SANITIZE=1 skips the sanitizer pass; ECJIT_JOBS sets build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

JOBS="${ECJIT_JOBS:-2}"
CONFIG=(-G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19)

echo "== build (RelWithDebInfo)"
cmake -S . -B build "${CONFIG[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
echo "== tests"
ctest --test-dir build --output-on-failure -j "$JOBS"

if [ "${ECJIT_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== build (ASan + UBSan)"
  cmake -S . -B build-asan "${CONFIG[@]}" -DCMAKE_BUILD_TYPE=Debug -DECJIT_SANITIZE=ON \
    -DECJIT_BUILD_BENCH=OFF -DECJIT_BUILD_FUZZ=ON >/dev/null
  cmake --build build-asan -j "$JOBS"
  echo "== tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE slow
  echo "== fuzz: JIT kernels against the reference codec for ${ECJIT_FUZZ_SECONDS:-60} s"
  mkdir -p build-asan/fuzz-corpus
  # The whole log is kept (build-asan/fuzz.log); on a failure its sanitizer report is printed.
  if ! ASAN_OPTIONS=detect_leaks=0 build-asan/test/fuzz/codec_fuzz build-asan/fuzz-corpus \
      -max_total_time="${ECJIT_FUZZ_SECONDS:-60}" -rss_limit_mb=8192 -print_final_stats=1 \
      > build-asan/fuzz.log 2>&1; then
    grep -n -A60 "ERROR: AddressSanitizer\|runtime error\|ERROR: libFuzzer" build-asan/fuzz.log | head -n 120
    tail -n 12 build-asan/fuzz.log
    exit 1
  fi
  tail -n 12 build-asan/fuzz.log
fi
