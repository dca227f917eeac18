#!/usr/bin/env bash
# Build the standalone one-folder bundle: dist/desktop-memory/ with the `desktop-memory` (CLI) and
# `desktop-memory-gui` executables, everything they need under dist/desktop-memory/_internal/.
#
#   bash packaging/build.sh             # makes its venv if missing, installs the locked dependencies + PyInstaller, builds
#   bash packaging/build.sh --archive   # also packs dist/desktop-memory-<version>-<os>-<arch>.tar.xz
#
# Environment: VENV (default build/bundle-venv) is the build's own virtualenv; PYTHON (default python3) creates it;
# DM_WHEEL_CACHE (default build/wheels) keeps the numpy wheel built without BLAS (packaging/numpy_noblas.sh).
# The bundle is built for the OS/architecture it runs on (PyInstaller does not cross-compile).
set -euo pipefail
cd "$(dirname "$0")/.."

ARCHIVE=0
for arg in "$@"; do
  case "$arg" in
    --archive) ARCHIVE=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# The build has its own virtualenv: its numpy is not PyPI's (below), so it must not be the one tests or benchmarks use.
VENV=${VENV:-build/bundle-venv}
if [ ! -x "$VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$VENV"
fi
PY="$VENV/bin/python"
# Every file installed for the build is pinned by version and sha256 (packaging/requirements-bundle.lock, made by
# packaging/lock.sh): a changed or substituted wheel on the index stops the build instead of entering the bundle.
# The app itself is not installed: the spec imports desktop_memory from this checkout.
"$PY" -m pip install --quiet --require-hashes --no-deps -r packaging/requirements-bundle.lock
# numpy without OpenBLAS (docs/PACKAGING.md): PyPI's numpy wheel carries OpenBLAS and gfortran (27 MB) for matrix
# products the app never computes. packaging/numpy_noblas.sh builds the locked numpy sdist (same version, its sha256
# from the lock) with numpy's own fallback loops, once, into a wheel cache, and installs it over the locked wheel.
# DM_NUMPY_BLAS=1 keeps PyPI's wheel (the bundle is then 27 MB larger and ci_bundle_check.sh's size limit fails).
if [ "${DM_NUMPY_BLAS:-0}" != 1 ]; then
  PY="$PY" bash packaging/numpy_noblas.sh
fi

NAME=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["name"])')
VERSION=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')

start=$(date +%s)
rm -rf "dist/$NAME"
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/desktop-memory.spec
# Strip symbols (checking each file still loads) and trim ICU's data to what Qt reads: packaging/slim.py.
echo "before slimming: $(du -sh "dist/$NAME" | cut -f1)"
"$PY" packaging/slim.py "dist/$NAME"
echo "built dist/$NAME ($NAME $VERSION) in $(( $(date +%s) - start ))s"

# What takes the space (also documented in docs/PACKAGING.md).
echo "bundle size: $(du -sh "dist/$NAME" | cut -f1)"
echo "largest files:"
# awk reads to the end instead of `head` closing the pipe early: under pipefail, sort's SIGPIPE (exit 141) on a
# listing longer than the pipe buffer failed the whole build at random.
find "dist/$NAME" -type f -printf '%s\t%P\n' | sort -rn \
  | awk -F'\t' 'NR <= 15 { printf "  %7.1f MB  %s\n", $1 / 1048576, $2 }'

if [ "$ARCHIVE" = 1 ]; then
  os=$(uname -s | tr '[:upper:]' '[:lower:]'); arch=$(uname -m)
  # xz, not gzip: 106 MB as .tar.gz, well under 100 MB as .tar.xz (docs/PACKAGING.md); `tar -xf` unpacks either
  tarball="dist/$NAME-$VERSION-$os-$arch.tar.xz"
  tar -C dist -cf - "$NAME" | xz -6 -T0 > "$tarball"
  echo "archive: $tarball ($(du -h "$tarball" | cut -f1))"
fi
