#!/usr/bin/env bash
# go_test: the Go module (go/: package ecjit over the C API with cgo) against a build tree's
# libecjit.so - its tests, differential against klauspost/reedsolomon v1.14.2 (the Go module
# proxy), with go test.
#   go_test.sh <source dir> <build dir>
# Skipped (exit 0, saying why) without go, for builds without the package (no lib/libecjit.so)
# and when the module proxy cannot be reached for the test's peer; a failing test fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/binding_args.sh"
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[[ -x $GO ]] || { echo "go_test: skipped (no go toolchain: Debian's golang, or go.dev/dl)"; exit 0; }
[[ -f $BUILD/lib/libecjit.so ]] || { echo "go_test: skipped (no $BUILD/lib/libecjit.so: ECJIT_BUILD_PACKAGE=OFF)"; exit 0; }
export CGO_ENABLED=1 CGO_CFLAGS="-I$SRC/runtime/include" CGO_LDFLAGS="-L$BUILD/lib -Wl,-rpath,$BUILD/lib"
export GOFLAGS=-mod=mod GOCACHE=${GOCACHE:-$BUILD/go-cache}
cd "$SRC/go"
if ! "$GO" mod download 2>"$BUILD/go-fetch.log"; then
  echo "go_test: skipped (cannot fetch the modules the tests need: $(tail -1 "$BUILD/go-fetch.log"))"
  exit 0
fi
"$GO" vet ./...
"$GO" test -count=1 ./...
echo "go_test: ok ($("$GO" version))"
