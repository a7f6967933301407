#!/usr/bin/env bash
# Sets up, builds the ecjit command and runs the main job: JIT-compile a codec for this CPU,
# encode, lose shards, reconstruct, print throughput and the kernel chosen.
# Arguments are passed to `ecjit demo` (see `ecjit demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "${ECJIT_JOBS:-2}" --target ecjit_tool
exec build/tools/ecjit demo "$@"
