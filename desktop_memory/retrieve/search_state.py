"""What one library's searches keep between queries, owned by one service.

Why an owner: the dense lane's code matrices hold ~99 MiB at a million vectors (``dense.DenseCodes``) and the
rank-bm25 lane an in-memory index of every passage (``lanes.Bm25Index``). Kept in the process they outlived the
service that loaded them, and services on different libraries shared (and evicted) one set. Now the service
creates one ``SearchState``, hands it to every ``Searcher`` it makes, and closes it when it closes: the memory goes
with the library. A ``Searcher`` made without one (tests, tools) owns its own.
"""

from __future__ import annotations

from .dense import DenseCodes
from .lanes import Bm25Index

__all__ = ["SearchState"]


class SearchState:
    """The dense lane's code matrices and the bm25 lane's index for one owner. Thread-safe (each part locks)."""

    def __init__(self) -> None:
        self.codes = DenseCodes()
        self.bm25 = Bm25Index()

    def nbytes(self) -> int:
        """Bytes the code matrices hold now (the bulk of the state at scale)."""
        return self.codes.nbytes()

    def close(self) -> None:
        """Free everything kept (the owner closes); a search still running finishes with what it holds."""
        self.codes.close()
        self.bm25.clear()
