"""Every write takes the scheduler's route (issue 31): only the loops the jobs run take the writer.

import-linter sees imports, not calls, so this reads the syntax tree of the app and the benchmark harness: a call
of ``.writing()`` (the service's writer lease) is allowed only in ``library_writes.py`` (the writes the jobs run) and
in ``service.py`` (which hands the lease to them). A new direct write fails here with its place; make it an
operation (jobs/operations.py) instead, or, for a benchmark's synthetic bulk write, ``desktop_memory_bench/bulk.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_memory
import desktop_memory_bench

PACKAGE = Path(desktop_memory.__file__).parent
BENCH = Path(desktop_memory_bench.__file__).parent
ALLOWED = {PACKAGE / "library_writes.py", PACKAGE / "service.py"}


def _writer_leases(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "writing"
            and not node.args]


def test_only_the_jobs_writes_take_the_writer() -> None:
    modules = [p for root in (PACKAGE, BENCH) for p in sorted(root.rglob("*.py"))
               if p not in ALLOWED and PACKAGE / "store" not in p.parents]
    assert len(modules) > 100  # the walk really covers the app and the harness
    assert [f for p in modules for f in _writer_leases(p)] == []


def test_the_check_sees_a_direct_write(tmp_path: Path) -> None:
    module = tmp_path / "bulk.py"
    module.write_text("def grow(svc):\n    with svc.writing() as store:\n        store.reset_vectors()\n",
                      encoding="utf-8")
    assert _writer_leases(module, tmp_path) == ["bulk.py:2"]
