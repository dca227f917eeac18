"""Bulk loads into a PostgreSQL library (``desktop-memory copy`` into one): the HNSW index built once after the
rows instead of kept up vector by vector.

The vectors go in without the HNSW index, which is built once after the last slice: pgvector inserting vectors into
an existing graph one at a time is several times slower than building the graph from all of them (with the
server's parallel maintenance workers and ``maintenance_work_mem``: docs/SHARED.md). When the load is large for the
library — into an empty one, or one holding fewer passages than the load brings (``incoming``) — an HNSW index the
library already has is dropped too and built again at the end. Meanwhile other machines' searches of that library
give the same results, slower (exact scans). A small load into a big library keeps it: its rebuild would cost more
than the rows. (The word statistics need no index build: a write adds one segment per word, and a bulk load's are
large enough not to be merged behind it: postings.py.)

Each slice stays its own transaction. An interrupted load leaves the index missing — searches give the same
results, slower — until the load is run again (it goes on where it stopped and builds it at its end), or
``compact`` builds it; ``check`` names a missing one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .connection import write_tx
from .schema import Conn

if TYPE_CHECKING:
    from .store import PgStore


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
    """Inside the block, vectors are written without the HNSW index, and when the load is large for the library
    (``large_for``) without the one it already had; it is built after the block (when it ends without an error)."""
    if not store.mode:
        with write_tx(store.conn, store.url):
            if large_for(store.conn, incoming):
                for table in vector_tables(store.conn):
                    store.conn.execute(f"drop index if exists {table}_hnsw")
    store.vectors.defer_index = True
    store.writes.bulk = True  # a slice's segments are large: none merged behind it (postings.py)
    try:
        yield
    finally:
        store.vectors.defer_index = False  # (a reconnect made new parts: theirs was never set)
        store.writes.bulk = False
    if not store.mode:
        for table in vector_tables(store.conn):
            with write_tx(store.conn, store.url):
                store.vectors.ensure_index(table)
        # the stage tables' rows all came and went: a plain VACUUM gives their pages back (the files end empty),
        # where autovacuum, busy with the big tables during a large load, left ~1 GB each at 1M passages
        store.conn.execute("vacuum token_stage, segment_stage")
