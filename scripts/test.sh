#!/usr/bin/env bash
# Run the whole test suite on a fresh machine: makes .venv, installs the package with its test extras, runs the
# static checks (ruff, mypy, import-linter: any finding fails the script), then pytest headless (Qt offscreen).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh tests/unit -x`.
# Environment: VENV (default .venv) is the virtualenv to make or reuse (.ci/run shares the build's); PYTHON (default
# python3) creates it. The tests need nothing outside the repository: their data is in tests/data.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV"/bin/python -m pip install --quiet --upgrade pip
# On the platform the bundle lock is made for (CPython 3.11, Linux x86_64), the lock's versions are constraints:
# the suite tests exactly what the bundle ships, and a release on PyPI after the lock cannot change either.
CONSTRAINTS=()
if "$VENV"/bin/python -c 'import platform, sys; sys.exit(not (sys.version_info[:2] == (3, 11) and
    platform.system() == "Linux" and platform.machine() == "x86_64"))'; then
  mkdir -p "$VENV"/tmp
  sed -n 's/^\([A-Za-z0-9_.-]*==[^ ]*\).*/\1/p' packaging/requirements-bundle.lock > "$VENV"/tmp/bundle-constraints.txt
  CONSTRAINTS=(-c "$VENV"/tmp/bundle-constraints.txt)
fi
"$VENV"/bin/python -m pip install --quiet "${CONSTRAINTS[@]}" -e ".[test]"
"$VENV"/bin/ruff check .
"$VENV"/bin/mypy
"$VENV"/bin/lint-imports
export QT_QPA_PLATFORM=offscreen
exec "$VENV"/bin/python -m pytest "$@"
