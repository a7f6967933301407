#!/usr/bin/env bash
# tsan.sh: the concurrent suites under ThreadSanitizer (runtime/ and jit/ instrumented; the
# LLVM dylib is not). Not part of scripts/test.sh (a third full build: ~15 min on 2 cores):
# run it after changing threads, caches, promotion or the background compiler.
#   scripts/tsan.sh            build build-tsan and run the suites
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build-tsan -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DECJIT_SANITIZE_THREAD=ON -DECJIT_BUILD_BENCH=OFF >/dev/null
cmake --build build-tsan -j "$JOBS"
# The suites with threads: concurrent first calls, promotion and demotion under callers,
# split calls on the pool, the background tuner, the kernel caches, the drop-in's callers.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --test-dir build-tsan --output-on-failure -j "$JOBS" \
  -R "degraded_read|parallel|tiered_tuning|kernel_cache|xor_codes_test.XorCodec.Concurrent|operations_test.UpdateAndPartial|array_codec|codec_test.KernelCache|tuner"
