"""The library's connections: ONE writer :class:`Store` and a bounded pool of reader Stores, owned by the service.

Connection ownership (the rule every caller relies on):

* The service owns (through this) ONE writer :class:`Store` and a bounded pool of at most ``readers`` reader Stores
  (default 3). Nothing else in the process opens a connection to the library; no connection is opened per call,
  per task or per thread, so a week-long GUI session holds ``1 + readers`` connections at most.
* ``with svc.writing() as store:`` takes the process-wide write lock, then hands out the writer. Any thread may
  use it, but only inside that block: the lock is what makes "one thread at a time" true. Its outermost
  transactions are BEGIN IMMEDIATE, so another process's writer waits on SQLite's busy timeout, never fails.
* ``with svc.reading() as store:`` leases one reader exclusively to the calling thread for the block and returns it
  to the pool afterwards (WAL: readers never wait for the writer). When every reader is leased, the next caller
  waits for one to come back. apsw connections may be used from any thread, never from two at once: the lease
  is that guarantee. Never keep a leased LibraryStore past the ``with`` block.
* A hybrid search holding a lease may take a second, *free* reader for the block (``ReaderPool.lease_if_idle``,
  never waiting) and hand it to exactly one helper thread that runs the keyword lane beside the semantic lane; the
  search waits for that thread before the lease ends. With no free reader it runs both lanes itself.
* :meth:`close` stops the scheduler (its running job within one slice), then closes every connection.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from .errors import StoreError
from .library_location import Location
from .library_open import open_library
from .reader_pool import ReaderPool
from .store.open import store_error
from .store.protocol import LibraryStore


class Connections:
    """The writer (opened now: a bad path, a newer schema or a missing extension fails at start-up) and the
    readers (opened on first need), with SQLite's environment errors made plain."""

    def __init__(self, db_path: Location, readers: int, busy_timeout_ms: int | None = None,
                 machine: tuple[str, str] = ("", "")) -> None:
        self.db_path = db_path
        self.machine = machine  # (id, readable name): the library folders this process adds are this machine's
        self._busy_timeout_ms = busy_timeout_ms  # None: the store's default (store/connection.py)
        self._write_lock = threading.RLock()
        self._notices: list[str] = []
        self._notices_lock = threading.Lock()
        self._writer: LibraryStore | None = self._open_store()
        self._readers = ReaderPool(self._open_store, readers)
        self.read_only_note: str = self._writer.mode_note

    @contextlib.contextmanager
    def _plain_errors(self) -> Iterator[None]:
        """SQLite's environment errors (disk full, read-only, busy, corrupt, I/O) become a StoreError that says
        what to do, so the CLI prints one line and the GUI a message, not a traceback. Committed work is kept:
        every write is its own transaction, rolled back whole on error."""
        try:
            yield
        except Exception as exc:  # SQLite's, or a PostgreSQL library's driver errors (store/open.py)
            err = store_error(exc, self.db_path)
            if err is None:
                raise
            raise err from exc

    def _open_store(self) -> LibraryStore:
        with self._plain_errors():
            # the library folders it adds are this machine's (recorded in a shared library: library_open.py)
            store = open_library(self.db_path, machine=self.machine)
        if self._busy_timeout_ms is not None:
            store.set_busy_timeout(self._busy_timeout_ms)
        with self._notices_lock:
            self._notices += [n for n in store.notices if n not in self._notices]
        return store

    @contextlib.contextmanager
    def writing(self) -> Iterator[LibraryStore]:
        """The writer, for this block only: one writer per process (lock); its write transactions wait for other
        processes' writers (IMMEDIATE)."""
        with self._write_lock:
            if self._writer is None:
                raise StoreError("The library is closed.")
            with self._plain_errors(), self._writer.immediate_writes() as store:
                yield store

    @contextlib.contextmanager
    def reading(self) -> Iterator[LibraryStore]:
        """A pooled reader, leased to the calling thread for this block (see the module doc)."""
        with self._readers.lease() as store, self._plain_errors():
            yield store

    @contextlib.contextmanager
    def spare_reader(self) -> Iterator[LibraryStore | None]:
        """A second pooled reader for a search's helper thread, or None when none is free (see lease_if_idle)."""
        with self._readers.lease_if_idle() as store, self._plain_errors():
            yield store

    def rename_machine(self, machine: tuple[str, str]) -> None:
        """This machine's readable name changed in the settings: the writer records it from its next write."""
        self.machine = machine
        writer = self._writer
        if writer is not None and writer.machine[0]:
            writer.machine = machine

    def open_count(self) -> int:
        """How many connections are open now (the writer plus readers opened so far)."""
        return (self._writer is not None) + self._readers.open_count()

    def ensure_open(self) -> None:
        if self._writer is None:
            raise StoreError("The library is closed.")

    def take_notices(self) -> list[str]:
        with self._notices_lock:
            notices, self._notices = self._notices, []
        return notices

    def stop_waiting(self) -> None:
        writer = self._writer
        if writer is not None:
            writer.stop_waiting()

    def close(self) -> None:
        """Close idle readers now (a leased one when its lease ends), then the writer once no write holds it."""
        self._readers.close()
        with self._write_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


__all__ = ["Connections"]
