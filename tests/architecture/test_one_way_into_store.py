"""One way into the store (issue 31 item 6): outside ``desktop_memory/store/`` a module imports from the store only
its entry points: ``store.open`` (open a library, its errors, its busy waits), ``store.protocol`` (``LibraryStore``
and the types it takes and gives) and ``store.row_types``. A store's parts (writes, vectors, folders, eraser...)
and its module functions stay the store's business; mypy proves the rest, since a caller holds a ``LibraryStore``.

The only other modules named are rules of the stored format the query side applies exactly as the index did, pure
functions with no connection: ``cjk`` (the grams of CJK text), ``vectors`` (a vector's float blob and 2-bit code),
``filters`` (what a filter may say; its ``*_sql`` builders stay inside). import-linter's contracts name forbidden
modules, not allowed ones (a new module inside the store would slip past a list), so this reads every module's
imports instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_memory

PACKAGE = Path(desktop_memory.__file__).parent
STORE = PACKAGE / "store"
ENTRY_POINTS = {"open", "protocol", "row_types"}
FORMAT_RULES = {"cjk", "vectors", "filters"}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``; ``from X import y`` names X.y as well as X, so a
    submodule imported by name is seen."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _findings(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    where = path.relative_to(root)
    out = []
    for line, module in _imported(path, root):
        if module != "desktop_memory.store" and not module.startswith("desktop_memory.store."):
            continue
        first = module.split(".")[2] if module != "desktop_memory.store" else ""  # the package: all of it
        if first not in ENTRY_POINTS | FORMAT_RULES or module.endswith("_sql"):  # SQL text stays in the store
            out.append(f"{where}:{line}: {module}")
    return out


def test_outside_the_store_only_its_entry_points_are_imported() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if STORE not in p.parents]
    assert len(outside) > 50  # the walk really covers the package
    assert [f for p in outside for f in _findings(p)] == []


def test_the_check_sees_a_part_a_module_function_and_the_package(tmp_path: Path) -> None:
    module = tmp_path / "desktop_memory" / "retrieve" / "lane.py"
    module.parent.mkdir(parents=True)
    module.write_text("from ..store.doc_listing import listing\n"  # a module function
                      "from ..store import Store, repository\n"  # the package's re-export, a submodule by name
                      "import desktop_memory.store.erase\nimport desktop_memory.store\n"
                      "from ..store.filters import clean_filters, filter_sql\n"  # a rule: fine; SQL: not
                      "from ..store.protocol import LibraryStore\n"  # the way in: fine
                      "from ..store.open import open_store\n", encoding="utf-8")
    assert [f.split(": ", 1)[1] for f in _findings(module, tmp_path)] == [
        "desktop_memory.store.doc_listing.listing", "desktop_memory.store.Store", "desktop_memory.store.repository",
        "desktop_memory.store.erase", "desktop_memory.store", "desktop_memory.store.filters.filter_sql"]
    assert _findings(module, tmp_path) and not _findings(PACKAGE / "library_open.py")
