"""Typed reads of SQLite values: apsw gives every cell as ``int | float | bytes | str | None`` (and a row from
``fetchone`` as ``Any | None``), so the store narrows each value it uses here, once, with a StoreError naming the
query when the file holds something the schema does not allow, instead of a TypeError deep in a caller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import apsw

from ..errors import StoreDamaged, StoreError

if TYPE_CHECKING:  # the value aliases live in apsw's stubs only
    Bindings: TypeAlias = Sequence[apsw.SQLiteValue] | None


def first_row(conn: apsw.Connection, sql: str, bindings: Bindings = None) -> apsw.SQLiteValues:
    """The first row of ``sql``; a query that always yields a row (``count(*)``, ``max(..)``, a pragma)."""
    row = conn.execute(sql, bindings).fetchone()
    if row is None:
        raise StoreError(f"The database returned no row for: {' '.join(sql.split()[:6])}")
    return tuple(row)


def scalar(conn: apsw.Connection, sql: str, bindings: Bindings = None) -> apsw.SQLiteValue:
    """The first column of the first row of ``sql``."""
    value: apsw.SQLiteValue = first_row(conn, sql, bindings)[0]
    return value


def scalar_int(conn: apsw.Connection, sql: str, bindings: Bindings = None) -> int:
    """An integer result (``count(*)``, ``coalesce(max(id), 0)``); NULL reads as 0, like ``max(id) or 0``."""
    return as_int(scalar(conn, sql, bindings) or 0)


def as_int(value: object) -> int:
    """``value`` as an int: integers pass, and so do floats and numeric text SQLite may hand back for them."""
    if isinstance(value, int):
        return value
    if isinstance(value, (float, str)):
        try:
            return int(value)
        except ValueError:
            pass
    raise StoreDamaged(f"The database holds {value!r} where a whole number belongs; run `desktop-memory check`.")


def as_opt_int(value: object) -> int | None:
    """A nullable integer column (page, line numbers)."""
    return None if value is None else as_int(value)


def as_float(value: object) -> float:
    """``value`` as a float (an integer column read into a float computation, or a REAL column)."""
    if isinstance(value, (int, float)):
        return float(value)
    raise StoreDamaged(f"The database holds {value!r} where a number belongs; run `desktop-memory check`.")


def as_str(value: object) -> str:
    """``value`` as text (a TEXT column)."""
    if isinstance(value, str):
        return value
    raise StoreDamaged(f"The database holds {value!r} where text belongs; run `desktop-memory check`.")


def as_bytes(value: object) -> bytes:
    """``value`` as bytes (a BLOB column: vectors, sign bits)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, memoryview):
        return value.tobytes()
    raise StoreDamaged(f"The database holds {value!r} where binary data belongs; run `desktop-memory check`.")
