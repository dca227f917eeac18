"""psycopg 3 (binary wheel) against the pure-Python pg8000 on the same PostgreSQL server: the driver choice of
issue 32 item 8 (docs/BENCHMARKS.md, "PostgreSQL library beside SQLite").

    python -m desktop_memory_bench.pg_drivers SOCKET_DIR     # e.g. the folder a pgserver runs in

Needs pg8000 importable (``pip install --target DIR pg8000`` and PYTHONPATH=DIR: it is not a dependency). Creates
and drops a database ``dm_drivers``. Best of three: 20,000 rows by COPY, 2,000 primary-key reads, 200 aggregate
reads of 100 rows.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable

ROWS = [(i, f"passage {i} " + "word " * 60, i % 500) for i in range(20000)]
Timing = tuple[float, float, float]


def _psycopg(sock: str) -> Timing:
    import psycopg

    conn = psycopg.connect(f"postgresql://postgres:@/dm_drivers?host={sock}", autocommit=True)
    conn.execute("drop table if exists t")
    conn.execute("create table t (id bigint primary key, text text, doc int)")
    t0 = time.perf_counter()
    with conn.transaction(), conn.cursor() as cur, cur.copy("copy t(id, text, doc) from stdin") as cp:
        for r in ROWS:
            cp.write_row(r)
    ins = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(2000):
        conn.execute("select text from t where id = %s", (i * 7,)).fetchone()
    point = (time.perf_counter() - t0) / 2000
    t0 = time.perf_counter()
    for i in range(200):
        conn.execute("select doc, count(*) from t where doc < %s group by doc order by doc limit 100",
                     (i + 100,)).fetchall()
    agg = (time.perf_counter() - t0) / 200
    conn.close()
    return ins, point, agg


def _pg8000(sock: str) -> Timing:
    import pg8000.native  # type: ignore[import-not-found, unused-ignore]

    conn = pg8000.native.Connection("postgres", unix_sock=f"{sock}/.s.PGSQL.5432", database="dm_drivers")
    conn.run("drop table if exists t")
    conn.run("create table t (id bigint primary key, text text, doc int)")
    t0 = time.perf_counter()
    buf = io.StringIO("".join(f"{a}\t{b}\t{c}\n" for a, b, c in ROWS))
    conn.run("begin")
    conn.run("copy t(id, text, doc) from stdin", stream=buf)
    conn.run("commit")
    ins = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(2000):
        conn.run("select text from t where id = :i", i=i * 7)
    point = (time.perf_counter() - t0) / 2000
    t0 = time.perf_counter()
    for i in range(200):
        conn.run("select doc, count(*) from t where doc < :n group by doc order by doc limit 100", n=i + 100)
    agg = (time.perf_counter() - t0) / 200
    conn.close()
    return ins, point, agg


def main(argv: list[str] | None = None) -> int:
    import psycopg

    sock = (argv or sys.argv[1:])[0]
    with psycopg.connect(f"postgresql://postgres:@/postgres?host={sock}", autocommit=True) as c:
        c.execute("drop database if exists dm_drivers")
        c.execute("create database dm_drivers")
    runs: list[tuple[str, Callable[[str], Timing]]] = [("psycopg [binary]", _psycopg), ("pg8000", _pg8000)]
    try:
        for name, fn in runs:
            ins, point, agg = (min(x) for x in zip(*[fn(sock) for _ in range(3)]))
            print(f"{name:18} insert 20k rows {ins * 1000:6.0f} ms ({len(ROWS) / ins:,.0f} rows/s) · point read "
                  f"{point * 1e6:5.0f} µs · 100-row aggregate {agg * 1000:5.2f} ms")
    finally:
        with psycopg.connect(f"postgresql://postgres:@/postgres?host={sock}", autocommit=True) as c:
            c.execute("drop database if exists dm_drivers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
