#!/usr/bin/env bash
# Run the whole test suite on a fresh machine: makes .venv, installs the package with its test extras, runs the
# static checks (ruff, mypy, import-linter: any finding fails the script), then pytest headless (Qt offscreen).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh tests/unit -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/lint-imports
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest "$@"
