"""Library folders, exclusions and the removal intent: the rules, written once for both stores.

Exclusions (issue 30 item 4): deleting the documents of a removed subfolder or file is not enough while its folder
stays in the library: the next edit (the watcher), the next start (the catch-up) or a re-read (F5) would read it all
again. An exclusion is recorded in the same transaction as the removal's intent (:meth:`Folders.begin_removal`), so
from that commit on nothing automatic brings the path back. Naming the path itself again (``index PATH``, a drop,
"Include again", ``include PATH``) is the person's explicit wish and lifts it. Paths are compared as strings
(``paths.is_inside``): an exclusion holds for a file that is gone or not yet there.

The removal intent (``meta.pending_removal``) lists the paths whose removal began and has not finished: a removal
a quit or a crash interrupted is finished by whichever command opens the library next.

Each store supplies only its SQL (:class:`FolderRows`: store/folder_rows.py, store/postgres/folders.py); every
method here runs inside the caller's transaction (the store's facade opens it: store/facade.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from ..paths import is_inside

PENDING_REMOVAL = "pending_removal"  # meta key: JSON list of paths being removed (see Folders.begin_removal)


def pending_paths(raw: str | None) -> list[str]:
    """The paths a recorded removal intent names ([] when none, or when the stored value is not a list of paths:
    a damaged value must not stop every later write)."""
    try:
        paths = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


class MetaRows(Protocol):
    """The ``meta`` rows the folder rules read and write (store/meta.py, store/postgres/meta.py)."""

    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...
    def delete(self, key: str) -> None: ...
    def bump(self, key: str, by: int = 1) -> None: ...


class FolderRows(Protocol):
    """One store's SQL for library folders (``roots``), exclusions and the documents below a path."""

    def roots(self) -> list[str]: ...
    def root_machines(self) -> list[tuple[str, str, str]]: ...
    def put_root(self, path: str, machine: tuple[str, str], now: float) -> None: ...
    def delete_roots(self, paths: Sequence[str]) -> None: ...
    def excluded(self) -> list[str]: ...
    def exclusion_rows(self) -> list[tuple[str, str]]: ...
    def put_exclusion(self, path: str, root: str, now: float) -> None: ...
    def delete_exclusions(self, paths: Sequence[str]) -> None: ...
    def doc_id(self, path: str) -> int | None: ...
    def ids_below(self, path: str, limit: int) -> list[int]: ...
    def count_at_or_below(self, path: str) -> int: ...


class Folders:
    """The rules over one store's rows: what adding a folder, beginning and ending a removal, and lifting an
    exclusion change, identical on SQLite and PostgreSQL."""

    def __init__(self, rows: FolderRows, meta: MetaRows) -> None:
        self.rows = rows
        self.meta = meta

    def pending_removals(self) -> list[str]:
        """Paths whose removal began and has not finished (quit or crash meanwhile: finished at the next start)."""
        return pending_paths(self.meta.get(PENDING_REMOVAL))

    def add_root(self, path: str, machine: tuple[str, str]) -> None:
        """A folder (re)added: a removal of it (or of a folder inside it) that a quit interrupted is called off, so
        finishing it later cannot take what the person has just added again. A folder keeps the machine that added
        it; one from before machines were recorded ('') is claimed; this machine's name as it is now goes on all its
        folders (store/folder_rows.py)."""
        pending = self.pending_removals()
        if pending:
            left = [p for p in pending if not is_inside(p, path)]
            if len(left) != len(pending):
                self.meta.set(PENDING_REMOVAL, json.dumps(left))
        self.rows.put_root(path, machine, time.time())

    def begin_removal(self, paths: Sequence[str], exclude: Collection[str]) -> list[str]:
        """The removal's recorded intent: the paths join the pending removals, library folders at or below them
        stop being library folders, and a path of ``exclude`` (the person's removal, not a file gone from disk)
        inside a library folder becomes an exclusion, so nothing (a watcher, a catch-up, a re-read, the next start)
        brings it back while, or after, its documents are removed slice by slice. Returns every pending path."""
        pending = self.pending_removals()
        pending += [p for p in paths if p not in pending]
        self.meta.set(PENDING_REMOVAL, json.dumps(pending))
        roots = self.rows.roots()
        for path in paths:
            inner = [r for r in roots if is_inside(r, path)]  # the path is (or holds) library folders
            self.rows.delete_roots(inner)
            for root in inner:  # its exclusions mean nothing any more (adding it again starts afresh)
                self.drop_under(root)
            holders = [r for r in roots if r not in inner and is_inside(path, r)]
            within = any(q != path and is_inside(path, q) for q in paths)  # goes with a folder asked for too
            if path in exclude and holders and not within:
                self.drop_under(path)  # one exclusion of the folder stands for those inside it
                self.rows.put_exclusion(path, max(holders, key=len), time.time())
        self.meta.bump("catalog_version")
        return pending

    def end_removal(self, paths: Sequence[str]) -> None:
        """These paths' documents are gone: they leave the pending removals."""
        left = [p for p in self.pending_removals() if p not in paths]
        if left:
            self.meta.set(PENDING_REMOVAL, json.dumps(left))
        else:
            self.meta.delete(PENDING_REMOVAL)

    def add_exclusions(self, rows: Sequence[tuple[str, str]]) -> None:
        """Exclusions as another library has them (``copy``)."""
        now = time.time()
        for path, root in rows:
            self.rows.put_exclusion(path, root, now)

    def drop_under(self, path: str) -> list[str]:
        """Lift every exclusion at or below ``path``; returns them."""
        gone = [p for p in self.rows.excluded() if is_inside(p, path)]
        self.rows.delete_exclusions(gone)
        return gone

    def drop_exact(self, paths: Iterable[str]) -> list[str]:
        """Lift the exclusions of exactly these paths; returns those that were excluded."""
        have = set(self.rows.excluded())
        gone = [p for p in dict.fromkeys(paths) if p in have]
        self.rows.delete_exclusions(gone)
        return gone

    def lift_exclusions(self, paths: Sequence[str], under: bool) -> list[str]:
        """Include again: the exclusions of exactly ``paths``, or (``under``) every one at or below them."""
        lifted = self.drop_exact(paths) if not under else [p for path in paths for p in self.drop_under(path)]
        if lifted:
            self.meta.bump("catalog_version")  # the Library lists them: its listing changes
        return lifted

    def removal_slice(self, paths: Sequence[str], limit: int) -> list[int]:
        """Up to ``limit`` document ids at or below ``paths`` (ranges of the path index, never a scan)."""
        ids: list[int] = []
        for path in paths:
            if len(ids) >= limit:
                break
            own = self.rows.doc_id(path)
            if own is not None:
                ids.append(own)
            ids += self.rows.ids_below(path, limit - len(ids))
        return ids[:limit]

    def count_under(self, paths: Sequence[str]) -> int:
        """Documents at or below ``paths``: the size of a removal, for its progress."""
        return sum(self.rows.count_at_or_below(path) for path in paths)


__all__ = ["PENDING_REMOVAL", "FolderRows", "Folders", "MetaRows", "pending_paths"]
