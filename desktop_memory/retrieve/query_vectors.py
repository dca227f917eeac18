"""Query embeddings started before the search that needs them, each computed once.

Why: in the window a person types, then presses Enter; embedding the query is the first step on the semantic
lane's critical path (embed, then the dense scan; the keyword lane runs beside them). The window asks for the text
in the box to be embedded as it is typed (``MemoryService.prepare_query``), so by the Enter the vector is ready or
on its way, and the search waits for that one instead of embedding again. One ``QueryVectors`` per search state
(one library's service). Cost: a few KiB (``CAPACITY`` vectors of 384 floats) and, while typing, at most one
query embedding running for the window at a time (the window drops the ones the next key made stale before they
start).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..embed.base import Embedder

__all__ = ["CAPACITY", "QueryVectors", "TimedVector"]

CAPACITY = 32  # queries remembered: the last few typed or searched (a vector is 1.5 KiB at 384 dimensions)
TimedVector = tuple[np.ndarray, float]  # (the unit query vector, milliseconds its embedding took)


def _timed(embedder: Embedder, query: str) -> TimedVector:
    t0 = time.perf_counter()
    vec = embedder.embed_query(query)
    return vec, (time.perf_counter() - t0) * 1000


class QueryVectors:
    """``(embedder, query) → Future`` of its vector: done, or running on the embedding threads. Thread-safe.

    A failed embedding is forgotten (the next search tries again and says why it failed). The key holds the
    embedder object itself (its identity and model id): a new embedder after a settings change never meets a
    vector of the old one."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        # the embedder is kept beside its future so its id is never reused by another while the entry lives
        self._futures: OrderedDict[tuple[int, str, str], tuple[Embedder, Future[TimedVector]]] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, embedder: Embedder, query: str, pool: ThreadPoolExecutor) -> Future[TimedVector]:
        """The query's vector: the one already made or on its way, else one started now on ``pool``."""
        key = (id(embedder), embedder.model_id, query)
        with self._lock:
            held = self._futures.get(key)
            if held is not None:
                self._futures.move_to_end(key)
                return held[1]
            fut = pool.submit(_timed, embedder, query)
            self._futures[key] = (embedder, fut)
            while len(self._futures) > self._capacity:
                self._futures.popitem(last=False)
        fut.add_done_callback(lambda f: self._forget_failed(key, f))
        return fut

    def _forget_failed(self, key: tuple[int, str, str], fut: Future[TimedVector]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            with self._lock:
                held = self._futures.get(key)
                if held is not None and held[1] is fut:
                    del self._futures[key]

    def clear(self) -> None:
        with self._lock:
            self._futures.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._futures)
