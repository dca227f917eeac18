"""Open the store a library location names: a path is the SQLite Store, a ``postgresql://`` URL the shared
PostgreSQL store (through ``store/open.py``). The service and ``copy`` open libraries only here,
so a URL never reaches SQLite as a file name (``Path("postgresql://u@h/db")`` would create a folder "postgresql:").
"""

from __future__ import annotations

import os
from pathlib import Path

from .api_keys import get_key
from .library_location import Location, has_password, is_server_url
from .store.open import open_store
from .store.protocol import LibraryStore


def records_machines(location: Location) -> bool:
    """Whether the library folders added to this library are recorded with their machine: in a shared (server)
    library, yes; a SQLite file is one machine's (a file-sync service corrupts it), so its folders are recorded
    without one ('' = whichever machine opens it), exactly as before machines existed. ``copy`` to a server
    stamps them with the copying machine (library_copy.py)."""
    return isinstance(location, str) and is_server_url(location)


def open_library(location: Location, *, readonly: bool = False,
                 machine: tuple[str, str] = ("", "")) -> LibraryStore:
    """The store of ``location`` (store/open.py), adding library folders as ``machine``'s where the library
    records machines."""
    if isinstance(location, str) and is_server_url(location):
        store = open_store(location, readonly=readonly, password=server_password(location))
    else:
        store = open_store(Path(location), readonly=readonly)
    if records_machines(location):
        store.machine = machine
    return store


def server_password(url: str) -> str | None:
    """The password for a server library from the API-key store (``api-key set database``), when neither the URL
    (given on the command line or in the environment) nor PGPASSWORD carries one; None lets libpq look in
    ~/.pgpass or its service file."""
    if has_password(url) or os.environ.get("PGPASSWORD"):
        return None
    return get_key("database") or None
