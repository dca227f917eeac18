"""Benchmark probes that must run in a fresh Python process (their peak RSS or memory arena must not mix with
the benchmark's): JSON files in, one JSON line out. Used by the naive-batching baseline and the scale app probe.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def json_files(**payloads: Any) -> Iterator[dict[str, Path]]:
    """Write each payload to ``<name>.json`` in a temporary folder for the child to read; removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="dm-child-") as tmp:
        paths = {}
        for name, payload in payloads.items():
            paths[name] = Path(tmp) / f"{name}.json"
            paths[name].write_text(json.dumps(payload), encoding="utf-8")
        yield paths


def run_module(module: str, argv: list[str], timeout_s: float) -> tuple[Any | None, str]:
    """Run ``python -m module argv...``; returns (its last stdout line as JSON or None on failure, its stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", module, *argv], capture_output=True, text=True, timeout=timeout_s, check=False
    )
    out = done.stdout.strip()
    if done.returncode != 0 or not out:
        return None, done.stderr
    return json.loads(out.splitlines()[-1]), done.stderr
