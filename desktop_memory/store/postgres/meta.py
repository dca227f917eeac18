"""The ``meta`` table: a library's counters and small state, as in the SQLite store (store/meta.py)."""

from __future__ import annotations

from .schema import Conn

CHANGE_KEYS = ("content_version", "catalog_version", "vec_epoch", "vec_seq", "vec_deleted")


class PgMeta:
    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def get(self, key: str) -> str | None:
        row = self.conn.execute("select value from meta where key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        self.conn.execute("insert into meta(key, value) values (%s, %s) "
                          "on conflict (key) do update set value = excluded.value", (key, value))

    def delete(self, key: str) -> None:
        self.conn.execute("delete from meta where key = %s", (key,))

    def bump(self, key: str, by: int = 1) -> None:
        self.conn.execute("insert into meta(key, value) values (%s, %s) on conflict (key) do update "
                          "set value = (meta.value::bigint + %s)::text", (key, str(by), by))

    def content_version(self) -> int:
        return int(self.get("content_version") or 0)

    def change_stamp(self) -> tuple[int, ...]:
        """Every change counter in one read (see ``MetaTable.change_stamp``)."""
        got = {str(k): int(str(v)) for k, v in self.conn.execute(
            "select key, value from meta where key = any(%s)", (list(CHANGE_KEYS),))}
        return tuple(got.get(k, 0) for k in CHANGE_KEYS)
