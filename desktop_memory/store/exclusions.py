"""Exclusions: what the person removed from inside a library folder, kept out of every later walk of it.

Why a table of its own (issue 30 item 4): deleting the documents of a removed subfolder or file is not enough while
its folder stays in the library: the next edit (the watcher), the next start (the catch-up) or a re-read (F5) would
read it all again. An exclusion is recorded in the same transaction as the removal's intent
(``Store.begin_removal``), so from that commit on nothing automatic brings the path back. Naming the path itself
again (``index PATH``, a drop, "Include again", ``include PATH``) is the person's explicit wish and lifts it.
Paths are compared as strings (``paths.is_inside``): an exclusion holds for a file that is gone or not yet there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence

import apsw

from ..paths import is_inside
from .sql_values import as_str

PENDING_REMOVAL = "pending_removal"  # meta key: JSON list of paths being removed (see Store.begin_removal)


def pending_paths(raw: str | None) -> list[str]:
    """The paths a recorded removal intent names ([] when none, or when the stored value is not a list of paths:
    a damaged value must not stop every later write). Both stores keep the intent in this form."""
    try:
        paths = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


class Exclusions:
    """``exclusions`` rows on one connection. Every method runs inside the caller's transaction (or autocommits)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def paths(self) -> list[str]:
        """Every excluded path, sorted (a library holds a handful: read whole, filtered in Python)."""
        return [as_str(r[0]) for r in self.conn.execute("select path from exclusions order by path")]

    def rows(self) -> list[tuple[str, str]]:
        """(excluded path, the library folder it was removed from), sorted by path."""
        return [(as_str(p), as_str(r)) for p, r in self.conn.execute("select path, root from exclusions order by path")]

    def add(self, path: str, root: str) -> None:
        self.conn.execute("insert into exclusions(path, root, added_at) values(?, ?, ?) "
                          "on conflict(path) do update set root = excluded.root, added_at = excluded.added_at",
                          (path, root, time.time()))

    def drop_under(self, path: str) -> list[str]:
        """Lift every exclusion at or below ``path``; returns them."""
        gone = [p for p in self.paths() if is_inside(p, path)]
        self._delete(gone)
        return gone

    def drop_exact(self, paths: Iterable[str]) -> list[str]:
        """Lift the exclusions of exactly these paths; returns those that were excluded."""
        have = set(self.paths())
        gone = [p for p in dict.fromkeys(paths) if p in have]
        self._delete(gone)
        return gone

    def _delete(self, paths: Sequence[str]) -> None:
        self.conn.executemany("delete from exclusions where path = ?", [(p,) for p in paths])


__all__ = ["Exclusions"]
