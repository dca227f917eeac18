"""Library folders, exclusions and the removal intent on a PostgreSQL library: the same rules as the SQLite store
(store/repository.py ``begin_removal``, store/exclusions.py), each change in one write transaction."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence

from ...paths import is_inside, prefix_range
from ..exclusions import PENDING_REMOVAL, pending_paths
from .meta import PgMeta
from .schema import Conn


def _range(path: str) -> tuple[str, str]:
    """(lowest, just above highest) path strictly below ``path`` (paths are compared in "C" order)."""
    return prefix_range(path)


class PgFolders:
    def __init__(self, conn: Conn, meta: PgMeta) -> None:
        self.conn = conn
        self.meta = meta

    # ---------- folders ----------
    def roots(self) -> list[str]:
        return [str(r[0]) for r in self.conn.execute("select path from roots order by path")]

    def root_machines(self) -> list[tuple[str, str, str]]:
        """(library folder, machine id, machine name) of every library folder, by path ('' id: not recorded)."""
        return [(str(p), str(i), str(n)) for p, i, n in
                self.conn.execute("select path, machine_id, machine_name from roots order by path")]

    def add_root(self, path: str, machine: tuple[str, str]) -> None:
        """As ``Store.add_root``: a folder keeps the machine that added it; one not recorded ('') is claimed by the
        machine adding it again; this machine's name as it is now goes on all its folders."""
        pending = self.pending_removals()
        if pending:
            left = [p for p in pending if not is_inside(p, path)]
            if len(left) != len(pending):
                self.meta.set(PENDING_REMOVAL, json.dumps(left))
        now = time.time()
        machine_id, name = machine
        self.conn.execute(
            "insert into roots(path, added_at, indexed_at, machine_id, machine_name) values (%s, %s, %s, %s, %s) "
            "on conflict (path) do update set indexed_at = excluded.indexed_at, "
            "machine_id = case when roots.machine_id = '' then excluded.machine_id else roots.machine_id end, "
            "machine_name = case when roots.machine_id in ('', excluded.machine_id) then excluded.machine_name "
            "else roots.machine_name end", (path, now, now, machine_id, name))
        if machine_id:
            self.conn.execute("update roots set machine_name = %s where machine_id = %s and machine_name <> %s",
                              (name, machine_id, name))

    def remove_root(self, path: str) -> None:
        self.conn.execute("delete from roots where path = %s", (path,))

    # ---------- exclusions ----------
    def excluded(self) -> list[str]:
        return [str(r[0]) for r in self.conn.execute("select path from exclusions order by path")]

    def exclusion_rows(self) -> list[tuple[str, str]]:
        """(excluded path, the library folder it was removed from), by path."""
        return [(str(p), str(r)) for p, r in self.conn.execute("select path, root from exclusions order by path")]

    def add_exclusions(self, rows: Sequence[tuple[str, str]]) -> None:
        """Record exclusions as another library has them (``copy``), inside the caller's write transaction."""
        now = time.time()
        for path, root in rows:
            self.conn.execute(
                "insert into exclusions(path, root, added_at) values (%s, %s, %s) on conflict (path) do update "
                "set root = excluded.root, added_at = excluded.added_at", (path, root, now))

    def _drop(self, paths: Sequence[str]) -> None:
        if paths:
            self.conn.execute("delete from exclusions where path = any(%s)", (list(paths),))

    def drop_under(self, path: str) -> list[str]:
        gone = [p for p in self.excluded() if is_inside(p, path)]
        self._drop(gone)
        return gone

    def drop_exact(self, paths: Sequence[str]) -> list[str]:
        have = set(self.excluded())
        gone = [p for p in dict.fromkeys(paths) if p in have]
        self._drop(gone)
        return gone

    # ---------- removal intent ----------
    def pending_removals(self) -> list[str]:
        return pending_paths(self.meta.get(PENDING_REMOVAL))

    def begin_removal(self, paths: Sequence[str], exclude: Collection[str]) -> list[str]:
        """Record the removal's intent (see ``Store.begin_removal``); inside the caller's write transaction."""
        pending = self.pending_removals()
        pending += [p for p in paths if p not in pending]
        self.meta.set(PENDING_REMOVAL, json.dumps(pending))
        roots = self.roots()
        for path in paths:
            inner = [r for r in roots if is_inside(r, path)]
            if inner:
                self.conn.execute("delete from roots where path = any(%s)", (inner,))
            for root in inner:
                self.drop_under(root)
            holders = [r for r in roots if r not in inner and is_inside(path, r)]
            within = any(q != path and is_inside(path, q) for q in paths)
            if path in exclude and holders and not within:
                self.drop_under(path)
                self.conn.execute(
                    "insert into exclusions(path, root, added_at) values (%s, %s, %s) on conflict (path) do update "
                    "set root = excluded.root, added_at = excluded.added_at",
                    (path, max(holders, key=len), time.time()))
        self.meta.bump("catalog_version")
        return pending

    def end_removal(self, paths: Sequence[str]) -> None:
        left = [p for p in self.pending_removals() if p not in paths]
        if left:
            self.meta.set(PENDING_REMOVAL, json.dumps(left))
        else:
            self.meta.delete(PENDING_REMOVAL)

    def removal_slice(self, paths: Sequence[str], limit: int) -> list[int]:
        ids: list[int] = []
        for path in paths:
            if len(ids) >= limit:
                break
            own = self.conn.execute("select id from documents where path = %s", (path,)).fetchone()
            if own is not None:
                ids.append(int(str(own[0])))
            lo, hi = _range(path)
            ids += [int(str(r[0])) for r in self.conn.execute(
                "select id from documents where path >= %s and path < %s limit %s", (lo, hi, limit - len(ids)))]
        return ids[:limit]

    def count_under(self, paths: Sequence[str]) -> int:
        docs = 0
        for path in paths:
            lo, hi = _range(path)
            row = self.conn.execute("select count(*) from documents where path = %s or (path >= %s and path < %s)",
                                    (path, lo, hi)).fetchone()
            docs += int(str(row[0])) if row else 0
        return docs
