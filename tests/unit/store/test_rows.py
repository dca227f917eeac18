"""The store's typed cell reads: right types pass, a value the schema forbids is a StoreError, not a TypeError."""

from __future__ import annotations

import apsw
import pytest

from desktop_memory.errors import StoreError
from desktop_memory.store.sql_values import as_bytes, as_float, as_int, as_str, first_row, scalar, scalar_int


def test_scalars_from_a_real_connection() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("create table t(id integer primary key, name text, blob blob)")
    conn.execute("insert into t values(1, 'a', x'0102'), (7, 'b', null)")
    assert scalar_int(conn, "select count(*) from t") == 2
    assert scalar_int(conn, "select max(id) from t where id > ?", (100,)) == 0  # NULL reads as 0
    assert scalar(conn, "select name from t where id = ?", (7,)) == "b"
    assert first_row(conn, "select id, name from t order by id") == (1, "a")
    with pytest.raises(StoreError, match="no row"):
        first_row(conn, "select id from t where id = -1")


def test_narrowing_rejects_what_the_schema_forbids() -> None:
    assert as_int(3) == 3 and as_int("4") == 4 and as_int(2.0) == 2
    assert as_float(1) == 1.0 and as_str("x") == "x" and as_bytes(memoryview(b"ab")) == b"ab"
    for bad, fn in ((b"x", as_int), ("seven", as_int), (None, as_float), (3, as_str), ("s", as_bytes)):
        with pytest.raises(StoreError, match="desktop-memory check"):
            fn(bad)
