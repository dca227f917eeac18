"""Open a library wherever it lives: a path opens the SQLite ``Store``, a ``postgresql://`` URL the PostgreSQL
store (store/postgres/). The one factory the service and the front ends call, so neither tests a location itself;
with what surrounds an open: either store's errors as one sentence (``store_error``) and the lock's busy waits.

With protocol.py (the ``LibraryStore`` an open returns) and row_types.py this is the way into the store from
outside store/ (docs/ARCHITECTURE.md, "One way into the store").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from ..errors import StoreError
from ..library_location import shown
from .connection import on_busy_wait, probe_busy, translate_error
from .location import is_server_url
from .protocol import LibraryStore

if TYPE_CHECKING:
    from .repository import Store


def open_store(location: str | Path, *, readonly: bool = False, password: str | None = None) -> LibraryStore:
    """The store for ``location``. ``password`` is used for a server only (never written anywhere); a file path
    ignores it. Raises StoreError (a UserError) with one sentence when the library cannot be opened."""
    if isinstance(location, str) and is_server_url(location):
        from .postgres.store import PgStore  # psycopg is imported only for a server library

        return PgStore(location, readonly=readonly, password=password)
    from .repository import Store

    return Store(location, readonly=readonly)


def sqlite_store(store: LibraryStore, what: str) -> Store:
    """``store`` as the SQLite Store, for the few parts that are SQLite-only so far (``what`` names the part in the
    one-sentence refusal a PostgreSQL library gets)."""
    from .repository import Store

    if isinstance(store, Store):
        return store
    raise StoreError(f"{what} is not available on a PostgreSQL library yet.")


def server_error(exc: BaseException, location: str | Path) -> StoreError | None:
    """A PostgreSQL driver error as the StoreError the front ends show (one sentence), or None when ``exc`` is not
    one or is a programming error. psycopg is never imported here: a SQLite library never loads it."""
    if not type(exc).__module__.startswith("psycopg") or not isinstance(location, str):
        return None
    from .postgres.connection import translate

    return translate(exc, location)


def store_error(exc: BaseException, location: str | Path) -> StoreError | None:
    """Either store's own error (SQLite's disk full, locked, not ours; a PostgreSQL driver's) as the StoreError the
    front ends show, or None when ``exc`` is neither, or a programming error: the caller re-raises it."""
    if isinstance(exc, apsw.Error):
        return translate_error(exc, shown(location))
    return server_error(exc, location)


__all__ = ["on_busy_wait", "open_store", "probe_busy", "server_error", "sqlite_store", "store_error"]
