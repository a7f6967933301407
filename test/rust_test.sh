#!/usr/bin/env bash
# rust_test: the Rust crate (rust/: ecjit over ecjit-sys) against a build tree's libecjit.so -
# unit, doc and differential tests (reed-solomon-erasure 6 from crates.io) with cargo.
#   rust_test.sh <source dir> <build dir>
# Skipped (exit 0, saying why) without cargo, for builds without the package (no lib/libecjit.so)
# and when crates.io cannot be reached for the test's peer; a failing test fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/binding_args.sh"
CARGO=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
[[ -x $CARGO ]] || { echo "rust_test: skipped (no cargo: https://rustup.rs, or Debian's cargo)"; exit 0; }
[[ -f $BUILD/lib/libecjit.so ]] || { echo "rust_test: skipped (no $BUILD/lib/libecjit.so: ECJIT_BUILD_PACKAGE=OFF)"; exit 0; }
export ECJIT_LIB_DIR=$BUILD/lib CARGO_TARGET_DIR=$BUILD/rust-target
cd "$SRC/rust"
if ! "$CARGO" fetch --quiet 2>"$BUILD/rust-fetch.log"; then
  echo "rust_test: skipped (cannot fetch the crates the tests need: $(tail -1 "$BUILD/rust-fetch.log"))"
  exit 0
fi
"$CARGO" test --release --quiet 2>&1
echo "rust_test: ok ($("$CARGO" --version))"
