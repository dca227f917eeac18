"""The meta table: key/value rows and the change counters every part of the Store bumps."""

from __future__ import annotations

import apsw


class MetaTable:
    """``meta`` rows on one connection: the recorded model, change counters, pending-work flags."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def get(self, key: str) -> str | None:
        row = self.conn.execute("select value from meta where key=?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str) -> None:
        self.conn.execute(
            "insert into meta(key, value) values(?, ?) on conflict(key) do update set value=excluded.value",
            (key, value),
        )

    def delete(self, key: str) -> None:
        self.conn.execute("delete from meta where key = ?", (key,))

    def bump(self, key: str, by: int = 1) -> None:
        self.conn.execute(
            "insert into meta(key, value) values(?, ?) "
            "on conflict(key) do update set value = cast(value as integer) + ?",
            (key, str(int(by)), int(by)),
        )

    def content_version(self) -> int:
        return int(self.get("content_version") or 0)

    def change_stamp(self) -> tuple[int, ...]:
        """Every change counter in one read: content_version (chunks written or removed), catalog_version (a file
        recorded as skipped/failed or touched), vec_epoch / vec_seq / vec_deleted (vectors). Equal stamps: nothing
        committed in between, by any process."""
        keys = ("content_version", "catalog_version", "vec_epoch", "vec_seq", "vec_deleted")
        rows = self.conn.execute(f"select key, value from meta where key in ({', '.join('?' * len(keys))})", keys)
        values = {str(k): int(str(v)) for k, v in rows}
        return tuple(values.get(k, 0) for k in keys)

    def bump_content_version(self) -> None:
        self.conn.execute(
            "insert into meta(key, value) values('content_version', '1') "
            "on conflict(key) do update set value = cast(value as integer) + 1"
        )
