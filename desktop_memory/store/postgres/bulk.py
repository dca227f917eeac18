"""Bulk loads into a PostgreSQL library (``desktop-memory copy`` into one): the vectors go in without the HNSW
index, which is built once after the last slice. pgvector inserting a vector into an existing graph one at a time
is several times slower than building the graph from all of them (with the server's parallel maintenance workers
and ``maintenance_work_mem``: docs/SHARED.md). Each slice stays its own transaction; an interrupted load leaves
the table without its index (the dense lane then scans exactly: the same results, slower) until the next load
finishes or the next vectors are stored, either of which builds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .connection import write_tx

if TYPE_CHECKING:
    from .store import PgStore


@contextmanager
def index_after_load(store: PgStore) -> Iterator[None]:
    """Write vectors without the HNSW index inside the block; build it (when the table is large enough) after."""
    store.vectors.defer_index = True
    try:
        yield
    finally:
        store.vectors.defer_index = False  # (a reconnect made new parts: theirs was never set)
    table = store.vectors.table()
    if table is not None and not store.mode:
        with write_tx(store.conn, store.url):
            store.vectors.ensure_index(table)
