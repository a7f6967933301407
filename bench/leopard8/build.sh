#!/bin/sh
# Builds bench/leopard8 (klauspost/reedsolomon's Leopard GF(2^8) codec as an oracle and a
# baseline) with the Go toolchain, fetching the module through the Go module proxy. Prints the
# binary's path; exits 1 with a message where Go or the module cannot be had.
set -e
cd "$(dirname "$0")"
if ! command -v go >/dev/null 2>&1; then
  echo "leopard8: no Go toolchain (go) on PATH; the rs-fft:gf=8 differential test and baseline are skipped" >&2
  exit 1
fi
if ! go mod tidy >/dev/null 2>&1 || ! go build -o leopard8 . >&2; then
  echo "leopard8: could not fetch or build github.com/klauspost/reedsolomon (no module proxy?)" >&2
  exit 1
fi
echo "$(pwd)/leopard8"
