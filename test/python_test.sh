#!/usr/bin/env bash
# python_test: builds the Python binding (python/) against a build tree's libecjit.a in a scratch
# venv (system site packages: Debian's pybind11, setuptools, pytest, numpy; no network) and runs
# its pytest suite.
#   python_test.sh <source dir> <build dir>
# Needs: python3-venv python3-dev python3-pybind11 python3-setuptools python3-wheel python3-pytest
# (python3-numpy and python3-pyeclib are optional: their tests skip without them).
# Skipped (exit 0) for sanitizer builds, whose objects a plain extension cannot link, and for
# builds without the package (ECJIT_BUILD_PACKAGE=OFF: no lib/libecjit.a).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/binding_args.sh"
PY=${ECJIT_TEST_PYTHON:-/usr/bin/python3}

cache=$BUILD/CMakeCache.txt
if [[ -f $cache ]]; then
  if grep -qE '^ECJIT_SANITIZE(_THREAD)?:BOOL=(ON|TRUE|YES|1)$' "$cache"; then
    echo "python_test: skipped (sanitizer build: the extension cannot link instrumented objects)"
    exit 0
  fi
  if grep -qE '^ECJIT_BUILD_PACKAGE:BOOL=(OFF|FALSE|NO|0)$' "$cache"; then
    echo "python_test: skipped (ECJIT_BUILD_PACKAGE=OFF: no lib/libecjit.a)"
    exit 0
  fi
fi
if [[ ! -f $BUILD/lib/libecjit.a ]]; then
  echo "python_test: FAIL: $BUILD/lib/libecjit.a not found (build the ecjit_static_all target)" >&2
  exit 1
fi
if ! "$PY" -c 'import venv, pybind11, setuptools, wheel, pytest' 2>/dev/null; then
  echo "python_test: FAIL: $PY lacks venv / pybind11 / setuptools / wheel / pytest; install" \
       "python3-venv python3-dev python3-pybind11 python3-setuptools python3-wheel python3-pytest" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PY" -m venv --system-site-packages "$work/venv"
# Build from a copy: an in-tree build would leave python/build behind, and a build directory
# shared by two ecjit build trees (clang and GCC) could hand one the other's extension.
cp -r "$SRC/python" "$work/python"
rm -rf "$work/python/build" "$work/python"/*.egg-info
unset ECJIT_PREFIX
export ECJIT_SOURCE_DIR=$SRC ECJIT_BUILD_DIR=$BUILD
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
if ! "$work/venv/bin/pip" install -q --no-build-isolation --no-deps "$work/python" >"$work/pip.log" 2>&1; then
  cat "$work/pip.log"
  echo "python_test: FAIL: pip install of the binding failed" >&2
  exit 1
fi

# Kernels cached on disk in the scratch directory only; nothing written into the source tree.
export ECJIT_CACHE_DIR=$work/cache PYTHONDONTWRITEBYTECODE=1
cd "$work"
status=0
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$SRC/python/tests" || status=1
# The README's Python tour (its first ```python block) runs as written.
awk '/^```python$/ {on = 1; next} on && /^```$/ {exit} on' "$SRC/README.md" >"$work/readme_tour.py"
if [[ ! -s $work/readme_tour.py ]] || ! "$work/venv/bin/python" "$work/readme_tour.py"; then
  echo "python_test: FAIL: the README's Python tour" >&2
  status=1
fi
exit $status
