#!/usr/bin/env bash
# Install numpy built without BLAS/LAPACK into the bundle's build venv (docs/PACKAGING.md, "numpy without OpenBLAS").
#
#   PY=build/bundle-venv/bin/python bash packaging/numpy_noblas.sh     (build.sh runs it)
#
# PyPI's numpy wheels link scipy-openblas (24 MB, every CPU's kernels) and gfortran/quadmath (3 MB). The app never
# calls BLAS: its numpy work is element-wise maths, reductions, bit counts, sorts and searches (the embedders' mean
# pooling and norms, the dense lane's Hamming scan); the matrix products are onnxruntime's and sqlite-vec's own.
# numpy builds without BLAS when asked (meson options below) and then uses its own C loops for dot/matmul/linalg.
#
# The sdist is the lock's (same version; pip checks its sha256 against packaging/requirements-bundle.lock), the build
# tools are pinned in packaging/numpy-build-constraints.txt. The wheel is built once (5.5 min of CPU; 13 min wall on a
# loaded 2-core machine) into DM_WHEEL_CACHE (default build/wheels) and reused while the lock's numpy version stays;
# pip's own wheel cache is bypassed (--no-cache-dir), so a wheel built with other options is never picked up.
# Without a C/C++ compiler the locked wheel stays and this says so (the bundle is then 27 MB larger).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:?set PY to the build venv python}
LOCK=packaging/requirements-bundle.lock
VERSION=$(sed -n 's/^numpy==\([^ ]*\).*/\1/p' "$LOCK")
[ -n "$VERSION" ] || { echo "numpy_noblas: numpy is not in $LOCK" >&2; exit 1; }
CACHE="${DM_WHEEL_CACHE:-build/wheels}/numpy-noblas"
# No BLAS/LAPACK; no runtime CPU dispatch: every loop is compiled once, for numpy's x86-64 baseline (SSE4.2 and
# POPCNT, which the dense lane's bit counts use), instead of again for AVX2, AVX-512 and its variants. That is what
# makes the build take minutes, not an hour, on 2 cores, and the extension ~5 MB smaller; the app's numpy work is
# memory-bound or tiny next to onnxruntime's (packaging/numpy_check.py measures both). No SVML (AVX-512 exp/log/sin).
MESON_OPTIONS=(-Dallow-noblas=true -Dblas=none -Dlapack=none -Dcpu-dispatch=none -Ddisable-svml=true
               -Ddisable-intel-sort=true)

wheel=$(ls "$CACHE"/numpy-"$VERSION"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
    echo "numpy_noblas: no C/C++ compiler: the bundle keeps PyPI's numpy with OpenBLAS (27 MB more)" >&2
    exit 0
  fi
  # per-requirement --config-settings in a requirements file: pip 23.2.1 is the version this was proven with
  if ! "$PY" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (23, 2))'; then
    "$PY" -m pip install --quiet "pip==23.2.1"
  fi
  mkdir -p "$CACHE"
  req=$(mktemp)
  trap 'rm -f "$req"' EXIT
  # the numpy entry of the lock with every sha256 it lists (the sdist's among them), and the meson options on the
  # requirement's own line (pip applies a command line's --config-settings only to requirements named there)
  { printf 'numpy==%s' "$VERSION"; printf ' --config-settings=setup-args=%s' "${MESON_OPTIONS[@]}"; echo ' \'
    awk '/^numpy==/ { on = 1; next } on { print } on && !/\\$/ { exit }' "$LOCK"; } > "$req"
  echo "numpy_noblas: building numpy $VERSION without BLAS from the locked sdist (once; cached in $CACHE)"
  start=$(date +%s)
  PIP_CONSTRAINT="$(pwd)/packaging/numpy-build-constraints.txt" "$PY" -m pip wheel --verbose --no-deps --no-cache-dir \
    --require-hashes --no-binary numpy -r "$req" -w "$CACHE" > "$CACHE/build.log" 2>&1 \
    || { tail -n 40 "$CACHE/build.log" >&2; echo "numpy_noblas: the build failed (log: $CACHE/build.log)" >&2; exit 1; }
  # the meson options must have reached numpy's build (a pip that ignored them would build with every default)
  grep -m 1 "meson.py setup" "$CACHE/build.log" | grep -q -- "-Dblas=none .*-Dcpu-dispatch=none" \
    || { rm -f "$CACHE"/numpy-*.whl; echo "numpy_noblas: pip did not pass the meson options (log: $CACHE/build.log)" >&2
         exit 1; }
  echo "numpy_noblas: built in $(( $(date +%s) - start ))s"
  wheel=$(ls "$CACHE"/numpy-"$VERSION"-*.whl | head -n 1)
fi
"$PY" -m pip install --quiet --no-deps --force-reinstall "$wheel"
# the installed numpy must be the one without BLAS: no OpenBLAS next to it, and its build configuration says so
"$PY" - <<'PY'
import pathlib, sys
import numpy
site = pathlib.Path(numpy.__file__).parent.parent
libs = sorted(p.name for p in site.glob("numpy.libs/*"))
blas = numpy.show_config(mode="dicts")["Build Dependencies"].get("blas", {})
if libs or blas.get("found"):
    sys.exit(f"numpy_noblas: the installed numpy still has BLAS: {libs or blas}")
print(f"numpy_noblas: numpy {numpy.__version__} without BLAS installed (blas: {blas.get('name', 'none')})")
PY
