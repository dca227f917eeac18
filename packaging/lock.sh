#!/usr/bin/env bash
# Regenerate packaging/requirements-bundle.lock: every dependency of the bundle build (the app's runtime
# dependencies and the `build` extra, PyInstaller) pinned by version, with the sha256 of every file PyPI has for it.
#
#   bash packaging/lock.sh
#
# pip-tools runs in a throw-away virtualenv (never the project's). The resolution is for the Python and platform this
# runs on (the committed lock: CPython 3.11 on Linux x86_64); for another OS, run it there (markers such as
# click's colorama on Windows differ). Only PyPI is consulted (no local wheel folders or extra indexes).
set -euo pipefail
cd "$(dirname "$0")/.."
HEADER=$(cat <<'END'
# The bundle build's dependencies (the app's runtime dependencies + the `build` extra), each pinned by version with
# the sha256 of every file PyPI has for it; packaging/build.sh installs them with `pip install --require-hashes`.
# Made by `bash packaging/lock.sh` (pip-compile from pip-tools in a throw-away virtualenv) for CPython 3.11 on
# Linux x86_64; on another OS, run lock.sh there. Do not edit by hand.
#
END
)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dm-lock.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"${PYTHON:-python3}" -m venv "$TMP/venv"
unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL
export PIP_CONFIG_FILE=/dev/null
"$TMP/venv/bin/pip" install --quiet pip-tools
cp pyproject.toml "$TMP/"
(cd "$TMP" && venv/bin/pip-compile --quiet --generate-hashes --allow-unsafe --extra build --strip-extras \
   --no-emit-index-url --no-emit-find-links -o requirements-bundle.lock pyproject.toml)
{ printf '%s\n' "${HEADER}"; cat "$TMP/requirements-bundle.lock"; } > packaging/requirements-bundle.lock
echo "wrote packaging/requirements-bundle.lock ($(grep -c '==' packaging/requirements-bundle.lock) pinned distributions)"
