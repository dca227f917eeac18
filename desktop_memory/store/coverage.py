"""Which passages have a vector yet: the search asks while an embedding is still running.

The semantic lane cannot judge a passage the embedding has not reached; fusion and match strength then judge it
on its keyword evidence alone (retrieve/fusion.py, retrieve/strength.py). One read by primary key, whatever the
library's size; ``chunks.embedded`` is set in the same transaction as the vector row (repository.py), so it is the
vector's presence.
"""

from __future__ import annotations

from collections.abc import Iterable

from .repository import Store
from .sql_values import as_int

_BATCH = 500  # ids per statement (well under SQLite's variable limit)


def without_vectors(store: Store, chunk_ids: Iterable[int]) -> set[int]:
    """The ids among ``chunk_ids`` (canonical chunks, as the lanes return them) that have no vector yet."""
    ids = sorted({int(i) for i in chunk_ids})
    missing: set[int] = set()
    for start in range(0, len(ids), _BATCH):
        part = ids[start : start + _BATCH]
        missing.update(as_int(cid) for (cid,) in store.conn.execute(
            f"select id from chunks where embedded = 0 and id in ({','.join('?' * len(part))})", part))
    return missing
