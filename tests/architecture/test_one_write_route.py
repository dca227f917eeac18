"""Every write takes the scheduler's route (issue 31): only the loops the jobs run take the writer.

import-linter sees imports, not calls, so this reads the syntax tree of the app and the benchmark harness: a call
of ``.writing()`` (the service's writer lease) is allowed only in ``library_writes.py`` (the writes the jobs run) and
in ``service.py`` (which hands the lease to them). A new direct write fails here with its place; make it an
operation (jobs/operations.py) instead, or, for a benchmark's synthetic bulk write, ``desktop_memory_bench/bulk.py``.

Nor does the app open a library for writing anywhere but in ``connections.py`` (the service's connections, whose
writer only the jobs lease): ``copy`` writes its target through the target's service (library_copy_job.py) and
opens its source read-only.
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


def _writable_opens(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """Calls of ``open_library``/``open_store`` without ``readonly=True``: a library opened to be written."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        readonly = any(k.arg == "readonly" and isinstance(k.value, ast.Constant) and k.value.value is True
                       for k in node.keywords)
        if name in ("open_library", "open_store") and not readonly:
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_only_the_services_connections_open_a_library_to_write() -> None:
    allowed = {PACKAGE / "connections.py", PACKAGE / "library_open.py"}  # (library_open passes readonly through)
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p not in allowed and PACKAGE / "store" not in p.parents]
    assert [f for p in modules for f in _writable_opens(p)] == []
    module = PACKAGE.parent / "desktop_memory" / "connections.py"
    assert [f.split(":")[0] for f in _writable_opens(module)] == ["desktop_memory/connections.py"]  # it sees one
