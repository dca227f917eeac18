#!/usr/bin/env python
"""Run the robustness suite (tests/robustness) and print what it tried: files, faults, fuzzed queries, data lost.

    python scripts/robustness_report.py            # the whole suite (~3-5 minutes on 2 busy cores)
    python scripts/robustness_report.py -k crash   # extra arguments go to pytest
    python scripts/robustness_report.py --markdown # the table as Markdown (for docs/ROBUSTNESS.md)

Exit status is pytest's: 0 only when every test passed. Each count comes from the tests themselves (see
``tests/robustness/conftest.py``'s ledger): a file counts once per test that fed it to the indexer, a fault once
per injection (each concurrent file mutation is one), a query once per search call on one backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(pytest_args: list[str]) -> tuple[int, dict, float]:
    with tempfile.TemporaryDirectory(prefix="dm-robustness-") as tmp:
        out = Path(tmp) / "counts.json"
        env = dict(os.environ, DM_ROBUSTNESS_COUNTS=str(out))
        cmd = [sys.executable, "-m", "pytest", "tests/robustness", "-q", "-p", "no:randomly", *pytest_args]
        started = time.monotonic()
        rc = subprocess.call(cmd, cwd=REPO, env=env)
        elapsed = time.monotonic() - started
        counts = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return rc, counts, elapsed


def table(counts: dict, elapsed: float, markdown: bool) -> str:
    tests = counts.get("tests", {})
    rows = [
        ("files tried", counts.get("files_tried", 0)),
        ("faults injected", counts.get("faults_injected", 0)),
        ("  distinct fault scenarios", len(counts.get("faults_by_kind", {}))),
        ("queries fuzzed", counts.get("queries_fuzzed", 0)),
        ("databases verified after a fault", counts.get("databases_verified", 0)),
        ("data lost (committed documents or vectors)", counts.get("data_lost", 0)),
        ("tests passed / failed / skipped",
         f"{tests.get('passed', 0)} / {tests.get('failed', 0)} / {tests.get('skipped', 0)}"),
        ("wall time", f"{elapsed:.0f} s"),
    ]
    kinds = sorted(counts.get("faults_by_kind", {}).items())
    if markdown:
        lines = ["| what | count |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in rows]
        lines += ["", "| fault injected | times |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in kinds]
        return "\n".join(lines)
    width = min(72, max(len(k) for k, _ in rows + kinds)) + 2
    lines = ["", "desktop-memory robustness report", "=" * (width + 10)]
    lines += [f"{k:<{width}}{v:>10}" for k, v in rows]
    lines += ["", "faults by kind", "-" * (width + 10)]
    lines += [f"{k[:width - 2]:<{width}}{v:>10}" for k, v in kinds]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    markdown = "--markdown" in argv
    args = [a for a in argv if a != "--markdown"]
    rc, counts, elapsed = run(args)
    if not counts:
        print("no counts were written (did the suite start?)", file=sys.stderr)
        return rc or 1
    print(table(counts, elapsed, markdown))
    if rc != 0:
        print(f"\npytest exited with status {rc}: see the failures above", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
