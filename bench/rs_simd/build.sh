#!/usr/bin/env bash
# Builds bench/rs_simd (reed-solomon-simd 3.x oracle) into bench/rs_simd/target/release/rs_simd.
# Needs cargo and, the first time, the Rust package registry; fails with a message when either is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cargo="${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}"
if [[ ! -x "$cargo" ]]; then
  echo "rs_simd/build.sh: cargo not found (set CARGO=/path/to/cargo)" >&2
  exit 1
fi
# Cargo.lock pins the crate versions the golden vectors were made with.
lock=()
[[ -f "$here/Cargo.lock" ]] && lock=(--locked)
# Offline first: works once the registry cache holds the locked crates.
if "$cargo" build --release -j "${CARGO_BUILD_JOBS:-2}" "${lock[@]}" --offline --manifest-path "$here/Cargo.toml" 2>/dev/null; then
  :
elif ! "$cargo" build --release -j "${CARGO_BUILD_JOBS:-2}" "${lock[@]}" --manifest-path "$here/Cargo.toml"; then
  echo "rs_simd/build.sh: cargo build failed; the Rust package registry must be reachable the first time" \
       "(reed-solomon-simd and its dependencies are fetched from the registry)" >&2
  exit 1
fi
echo "$here/target/release/rs_simd"
