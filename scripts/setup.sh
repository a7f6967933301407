#!/usr/bin/env bash
# Installs the Debian packages ecjit needs to build, test and benchmark; quiet and a no-op when all are present.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config help2man dpkg-dev
  llvm-19-dev libclang-19-dev clang-19 lld-19 libclang-rt-19-dev
  libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libisal-dev libjerasure-dev libgf-complete-dev liberasurecode-dev
  python3-pyeclib
  # ECCFS: `ecjit eccfs` and its tests (a Redis server of their own on a loopback port)
  redis-server libhiredis-dev
  # python/: the binding and its tests (pybind11 and setuptools from Debian, no network)
  python3-venv python3-dev python3-pybind11 python3-setuptools python3-wheel python3-pytest python3-numpy
  # test/aot: llvm-objdump-19 / llvm-mca-19, cross compilers + C libraries, qemu-user
  llvm-19 qemu-user-static
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
  gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "ecjit setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
