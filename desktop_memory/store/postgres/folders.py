"""A PostgreSQL library's SQL for library folders, exclusions and the documents below a path; the rules over them
are store/folders.py (shared with the SQLite store). Every method runs inside the caller's write transaction."""

from __future__ import annotations

from collections.abc import Sequence

from ...paths import prefix_range
from .schema import Conn


class PgFolderRows:
    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def roots(self) -> list[str]:
        return [str(r[0]) for r in self.conn.execute("select path from roots order by path")]

    def root_machines(self) -> list[tuple[str, str, str]]:
        """(library folder, machine id, machine name) of every library folder, by path ('' id: not recorded)."""
        return [(str(p), str(i), str(n)) for p, i, n in
                self.conn.execute("select path, machine_id, machine_name from roots order by path")]

    def put_root(self, path: str, machine: tuple[str, str], now: float) -> None:
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

    def delete_roots(self, paths: Sequence[str]) -> None:
        if paths:
            self.conn.execute("delete from roots where path = any(%s)", (list(paths),))

    def excluded(self) -> list[str]:
        return [str(r[0]) for r in self.conn.execute("select path from exclusions order by path")]

    def exclusion_rows(self) -> list[tuple[str, str]]:
        return [(str(p), str(r)) for p, r in self.conn.execute("select path, root from exclusions order by path")]

    def put_exclusion(self, path: str, root: str, now: float) -> None:
        self.conn.execute(
            "insert into exclusions(path, root, added_at) values (%s, %s, %s) on conflict (path) do update "
            "set root = excluded.root, added_at = excluded.added_at", (path, root, now))

    def delete_exclusions(self, paths: Sequence[str]) -> None:
        if paths:
            self.conn.execute("delete from exclusions where path = any(%s)", (list(paths),))

    def doc_id(self, path: str) -> int | None:
        row = self.conn.execute("select id from documents where path = %s", (path,)).fetchone()
        return int(str(row[0])) if row else None

    def ids_below(self, path: str, limit: int) -> list[int]:
        lo, hi = prefix_range(path)  # paths are compared in "C" order, as prefix_range assumes
        return [int(str(r[0])) for r in self.conn.execute(
            "select id from documents where path >= %s and path < %s limit %s", (lo, hi, limit))]

    def count_at_or_below(self, path: str) -> int:
        lo, hi = prefix_range(path)
        row = self.conn.execute("select count(*) from documents where path = %s or (path >= %s and path < %s)",
                                (path, lo, hi)).fetchone()
        return int(str(row[0])) if row else 0
