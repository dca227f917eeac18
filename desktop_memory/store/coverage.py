"""Which passages have a vector yet: the search asks while an embedding is still running.

The semantic lane cannot judge a passage the embedding has not reached; fusion and match strength then judge it
on its keyword evidence alone (retrieve/fusion.py, retrieve/strength.py). One read by primary key, whatever the
library's size; ``chunks.embedded`` is set in the same transaction as the vector row (repository.py), so it is the
vector's presence.
"""

from __future__ import annotations

from collections.abc import Iterable

from .protocol import LibraryStore


def without_vectors(store: LibraryStore, chunk_ids: Iterable[int]) -> set[int]:
    """The ids among ``chunk_ids`` (canonical chunks, as the lanes return them) that have no vector yet."""
    return store.reads.without_vectors(chunk_ids)
