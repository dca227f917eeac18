"""SQL lives in store/: no module outside it reaches a Store's connection or runs a statement.

import-linter cannot see attribute access, so this reads every module's syntax tree instead: a ``.conn`` attribute
or an ``.execute(...)`` / ``.executemany(...)`` call outside ``desktop_memory/store/`` fails with its place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_memory

PACKAGE = Path(desktop_memory.__file__).parent
STORE = PACKAGE / "store"


def _findings(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    where = path.relative_to(root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "conn":
            found.append(f"{where}:{node.lineno}: .conn")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany")):
            found.append(f"{where}:{node.lineno}: .{node.func.attr}(...)")
    return found


def test_no_connection_or_statement_outside_the_store() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if STORE not in p.parents]
    assert len(outside) > 50  # the walk really covers the package
    findings = [f for p in outside for f in _findings(p)]
    assert findings == []


def test_the_check_sees_a_connection(tmp_path: Path) -> None:
    module = tmp_path / "lane.py"
    module.write_text("def lane(store):\n    return store.conn.execute('select 1')\n", encoding="utf-8")
    assert [f.split(": ", 1)[1] for f in _findings(module, tmp_path)] == [".execute(...)", ".conn"]
