"""A shared library seen from one machine: which library folders are its own, and whose each result is.

The store records each library folder's machine (``Store.root_machines``: path, id, name); everything else follows
from it here, in memory, over the few folders a library has: a document's machine is that of the library folder
holding it, a machine reads and watches only its own folders (and those recorded before machines were: id ''),
and a result from another machine is named by it and cannot be opened here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .models import SearchResult
from .paths import is_inside

__all__ = ["RootMachine", "holder", "is_inside", "name_results", "other_machines", "own_roots", "refuse_others"]
RootMachine = tuple[str, str, str]  # (library folder, machine id, machine name)


def own_roots(rows: Iterable[RootMachine], machine_id: str) -> list[str]:
    """The library folders this machine reads, catches up and watches."""
    return [path for path, mid, _ in rows if mid in ("", machine_id)]


def other_machines(rows: Iterable[RootMachine], machine_id: str) -> dict[str, str]:
    """{library folder: machine name} of the folders that belong to other machines."""
    return {path: name or "another machine" for path, mid, name in rows if mid not in ("", machine_id)}


def holder(path: str, rows: Sequence[RootMachine]) -> RootMachine | None:
    """The library folder holding ``path`` (the deepest, should folders nest), or None."""
    found = [r for r in rows if is_inside(path, r[0])]
    return max(found, key=lambda r: len(r[0])) if found else None


def name_results(results: Iterable[SearchResult], rows: Sequence[RootMachine], machine: tuple[str, str]) -> None:
    """Set each result's ``machine`` (readable name) and ``remote`` (another machine's file) in place."""
    my_id, my_name = machine
    for result in results:
        found = holder(result.source, rows)
        if found is None or found[1] in ("", my_id):
            result.machine, result.remote = my_name, False
        else:
            result.machine, result.remote = found[2] or "another machine", True


def refuse_others(paths: Iterable[str], rows: Sequence[RootMachine], machine_id: str) -> str | None:
    """Why this machine may not index one of ``paths`` (it is, holds, or lies in another machine's library folder:
    that machine reads it; removing it from here is allowed), in one sentence; None when all are fine."""
    for path in paths:
        for root, mid, name in rows:
            if mid not in ("", machine_id) and (is_inside(path, root) or is_inside(root, path)):
                return (f"{path} is in {root}, a library folder of {name or 'another machine'}: only that machine "
                        "reads it, and this machine searches what it found (docs/SHARED.md).")
    return None
