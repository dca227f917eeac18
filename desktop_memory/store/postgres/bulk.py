"""Bulk loads into a PostgreSQL library (``desktop-memory copy`` into one): indexes built once after the rows
instead of kept up row by row.

* The vectors go in without the HNSW index, which is built once after the last slice: pgvector inserting vectors
  into an existing graph one at a time is several times slower than building the graph from all of them (with
  the server's parallel maintenance workers and ``maintenance_work_mem``: docs/SHARED.md).
* Word statistics (``chunk_terms``, ~65 rows a passage) go in without their primary key, which is then built by
  one sort: inserting each row into a btree of tens of millions of rows is what slows a large load down as it grows
  (docs/BENCHMARKS.md, "PostgreSQL bulk writes").

Both only when the load is large for the library: into an empty one, or one holding fewer passages than the load
brings (``incoming``). Then an HNSW index the library already has is dropped too and built again at the end, because
inserting hundreds of thousands of vectors into an existing graph one by one is far slower than building it from all
of them. Meanwhile other machines' searches of that library give the same results, slower (exact scans). A small
load into a big library keeps both indexes: their rebuild would cost more than the rows.

Each slice stays its own transaction. An interrupted load leaves the indexes missing — searches give the same
results, slower — until the load is run again (it goes on where it stopped and builds them at its end), or
``compact`` builds them; ``check`` names a missing one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .connection import write_tx
from .schema import Conn

if TYPE_CHECKING:
    from .store import PgStore

TERM_KEY = "chunk_terms_pkey"


def has_term_key(conn: Conn) -> bool:
    return conn.execute("select 1 from pg_indexes where tablename = 'chunk_terms' and indexname = %s",
                        (TERM_KEY,)).fetchone() is not None


def restore_term_key(conn: Conn) -> None:
    """The primary key of the word statistics, if a bulk load left it out (inside the caller's transaction)."""
    if not has_term_key(conn):
        conn.execute(f"alter table chunk_terms add constraint {TERM_KEY} primary key (lane, term, chunk_id) "
                     "include (tf, dl)")


def vector_tables(conn: Conn) -> list[str]:
    """Every model's vector table (the active one and those kept beside it)."""
    return [f"vectors_{int(str(slot))}" for (slot,) in conn.execute("select slot from vector_models order by slot")]


def large_for(conn: Conn, incoming: int) -> bool:
    """Whether a load of ``incoming`` passages is large for this library: it holds none, or fewer than that."""
    got = conn.execute("select count(*) from (select 1 from chunks limit %s) c", (max(1, incoming),)).fetchone()
    held = int(str(got[0])) if got else 0
    return held == 0 or held < incoming


@contextmanager
def index_after_load(store: PgStore, incoming: int = 0) -> Iterator[None]:
    """Inside the block, vectors are written without the HNSW index; when the load is large for the library
    (``large_for``), word statistics without their primary key and vectors without an HNSW index it already had;
    all are built after it (when it ends without an error)."""
    keyless = False
    if not store.mode:
        with write_tx(store.conn, store.url):
            if large_for(store.conn, incoming):
                if has_term_key(store.conn):
                    store.conn.execute(f"alter table chunk_terms drop constraint {TERM_KEY}")
                keyless = True
                for table in vector_tables(store.conn):
                    store.conn.execute(f"drop index if exists {table}_hnsw")
    store.vectors.defer_index = True
    store.writes.sort_terms = not keyless  # no key to fill in order: its build at the end sorts once
    try:
        yield
    finally:
        store.vectors.defer_index = False  # (a reconnect made new parts: theirs was never set)
        store.writes.sort_terms = True
    if not store.mode:
        with write_tx(store.conn, store.url):
            restore_term_key(store.conn)
        for table in vector_tables(store.conn):
            with write_tx(store.conn, store.url):
                store.vectors.ensure_index(table)
