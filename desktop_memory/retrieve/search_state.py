"""What one library's searches keep between queries, owned by one service.

Why an owner: the dense lane's code matrices hold ~99 MiB at a million vectors (``dense.DenseCodes``) and the
rank-bm25 lane an in-memory index of every passage (``lanes.Bm25Index``). Kept in the process they outlived the
service that loaded them, and services on different libraries shared (and evicted) one set. Now the service
creates one ``SearchState``, hands it to every ``Searcher`` it makes, and closes it when it closes: the memory goes
with the library, and so do the keyword lane's remembered counts for it. A ``Searcher`` made without one (tests,
tools) owns its own.
"""

from __future__ import annotations

import threading

from . import compounds, keyword
from .dense import DenseCodes
from .lanes import Bm25Index
from .query_vectors import QueryVectors

__all__ = ["SearchState"]


class SearchState:
    """The dense lane's code matrices and the bm25 lane's index for one owner. Thread-safe (each part locks).

    The keyword lane's small answers (term counts, sampled frequencies, compound spellings: ``keyword.py``,
    ``compounds.py``) stay in bounded tables keyed by file and content version, shared by whoever searches that
    file; closing the state drops those of the files it searched."""

    def __init__(self) -> None:
        self.codes = DenseCodes()
        self.bm25 = Bm25Index()
        self.query_vectors = QueryVectors()  # queries embedded as they were typed, or searched just before
        self._files: set[str] = set()  # the database files searched with this state (``str(store.path)``)
        self._lock = threading.Lock()

    def searched(self, path: str) -> None:
        """Note a file this state's searches read (its keyword answers are dropped at close)."""
        if path not in self._files:
            with self._lock:
                self._files.add(path)

    def nbytes(self) -> int:
        """Bytes the code matrices hold now (the bulk of the state at scale)."""
        return self.codes.nbytes()

    def close(self) -> None:
        """Free everything kept (the owner closes); a search still running finishes with what it holds."""
        self.codes.close()
        self.bm25.clear()
        self.query_vectors.clear()
        with self._lock:
            files, self._files = self._files, set()
        for path in files:
            keyword.forget(path)
            compounds.forget(path)
