"""The service's readers: a bounded pool of reader Stores, each leased to one thread at a time.

Why a pool: apsw connections may be used from any thread, never from two at once, and a week-long session must not
open a connection per call. The lease is the "one thread at a time" guarantee; see service.py's module doc for the
connection rules this keeps.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from .errors import StoreError
from .store.protocol import LibraryStore


class ReaderPool:
    """At most ``size`` reader Stores, opened on first need, leased to one thread at a time, reused forever."""

    def __init__(self, open_store: Callable[[], LibraryStore], size: int) -> None:
        if size < 1:
            raise ValueError("a reader pool needs at least one connection")
        self._open = open_store
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[LibraryStore] = []
        self._all: list[LibraryStore] = []
        self._closed = False

    @contextlib.contextmanager
    def lease(self) -> Iterator[LibraryStore]:
        self._slots.acquire()
        try:
            with self._held() as store:
                yield store
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def lease_if_idle(self) -> Iterator[LibraryStore | None]:
        """A reader only if one is free right now, else None; never waits. For a thread that already holds a
        lease and wants a second connection for a helper thread (the hybrid search's keyword lane): waiting there
        could deadlock two such callers on each other, so without a free reader the caller works alone."""
        if not self._slots.acquire(blocking=False):
            yield None
            return
        try:
            with self._lock:
                closed = self._closed
            if closed:
                yield None
                return
            with self._held() as store:
                yield store
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def _held(self) -> Iterator[LibraryStore]:
        """An idle reader (or a new one, up to ``size``) for the block; the caller holds a slot."""
        with self._lock:
            if self._closed:
                raise StoreError("The library is closed.")
            store = self._idle.pop() if self._idle else None
        if store is None:
            store = self._open()
            with self._lock:
                self._all.append(store)
        try:
            yield store
        finally:
            with self._lock:
                if self._closed:
                    store.close()
                else:
                    self._idle.append(store)

    def open_count(self) -> int:
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        """Close idle readers now; a reader still leased is closed when its lease ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._all = [s for s in self._all if s not in idle]
        for store in idle:
            store.close()


__all__ = ["ReaderPool"]
