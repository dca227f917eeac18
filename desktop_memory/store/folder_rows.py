"""The SQLite file's SQL for library folders, exclusions and the documents below a path; the rules over them are
store/folders.py (shared with the PostgreSQL store). Every method runs inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from ..paths import prefix_range
from .sql_values import as_int, as_str, scalar_int


class SqliteFolderRows:
    """``roots`` and ``exclusions`` rows on one connection (a library holds a handful: read whole, filtered in
    Python), and the documents' path index (ranges, never a scan)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def roots(self) -> list[str]:
        return [as_str(r[0]) for r in self.conn.execute("select path from roots order by path")]

    def root_machines(self) -> list[tuple[str, str, str]]:
        """(library folder, machine id, machine name) of every library folder, by path ('' id: not recorded)."""
        return [(as_str(p), as_str(i), as_str(n)) for p, i, n in
                self.conn.execute("select path, machine_id, machine_name from roots order by path")]

    def put_root(self, path: str, machine: tuple[str, str], now: float) -> None:
        machine_id, name = machine
        # a folder keeps the machine that added it; one from before machines were recorded ('') is claimed
        self.conn.execute(
            "insert into roots(path, added_at, indexed_at, machine_id, machine_name) values(?, ?, ?, ?, ?) "
            "on conflict(path) do update set indexed_at=excluded.indexed_at, "
            "machine_id = case when roots.machine_id = '' then excluded.machine_id else roots.machine_id end, "
            "machine_name = case when roots.machine_id in ('', excluded.machine_id) then excluded.machine_name "
            "else roots.machine_name end",
            (path, now, now, machine_id, name),
        )
        if machine_id:  # this machine's readable name as it is now, on all its folders
            self.conn.execute("update roots set machine_name = ? where machine_id = ? and machine_name <> ?",
                              (name, machine_id, name))

    def delete_roots(self, paths: Sequence[str]) -> None:
        self.conn.executemany("delete from roots where path=?", [(p,) for p in paths])

    def excluded(self) -> list[str]:
        return [as_str(r[0]) for r in self.conn.execute("select path from exclusions order by path")]

    def exclusion_rows(self) -> list[tuple[str, str]]:
        """(excluded path, the library folder it was removed from), sorted by path."""
        return [(as_str(p), as_str(r)) for p, r in self.conn.execute("select path, root from exclusions order by path")]

    def put_exclusion(self, path: str, root: str, now: float) -> None:
        self.conn.execute("insert into exclusions(path, root, added_at) values(?, ?, ?) "
                          "on conflict(path) do update set root = excluded.root, added_at = excluded.added_at",
                          (path, root, now))

    def delete_exclusions(self, paths: Sequence[str]) -> None:
        self.conn.executemany("delete from exclusions where path = ?", [(p,) for p in paths])

    def doc_id(self, path: str) -> int | None:
        row = self.conn.execute("select id from documents where path = ?", (path,)).fetchone()
        return as_int(row[0]) if row else None

    def ids_below(self, path: str, limit: int) -> list[int]:
        lo, hi = prefix_range(path)
        return [as_int(r[0]) for r in self.conn.execute(
            "select id from documents where path >= ? and path < ? limit ?", (lo, hi, limit))]

    def count_at_or_below(self, path: str) -> int:
        return (scalar_int(self.conn, "select count(*) from documents where path = ?", (path,))
                + scalar_int(self.conn, "select count(*) from documents where path >= ? and path < ?",
                             prefix_range(path)))
