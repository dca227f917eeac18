"""Open the store a library location names: a path is the SQLite Store, a ``postgresql://`` URL the shared
PostgreSQL store (``store/open.py``, when this build has it). The service and ``copy`` open libraries only here,
so a URL never reaches SQLite as a file name (``Path("postgresql://u@h/db")`` would create a folder "postgresql:").
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from .errors import StoreError
from .library_location import Location, has_password, is_server_url, redacted
from .store import Store

NO_SERVER_STORE = ("{url} is a PostgreSQL library, and this build of desktop-memory cannot open one (its PostgreSQL "
                   "store is missing); use a database file, or install desktop-memory with its postgres extra.")


def records_machines(location: Location) -> bool:
    """Whether the library folders added to this library are recorded with their machine: in a shared (server)
    library, yes; a SQLite file is one machine's (a file-sync service corrupts it), so its folders are recorded
    without one ('' = whichever machine opens it), exactly as before machines existed. ``copy`` to a server
    stamps them with the copying machine (library_copy.py)."""
    return isinstance(location, str) and is_server_url(location)


def open_library(location: Location, *, readonly: bool = False, machine: tuple[str, str] = ("", "")) -> Store:
    """The store of ``location``, adding library folders as ``machine``'s where the library records machines.
    A URL's store has the SQLite Store's public methods (store/protocol.py)."""
    if isinstance(location, str) and is_server_url(location):
        opener = _server_opener()
        if opener is None:
            raise StoreError(NO_SERVER_STORE.format(url=redacted(location)))
        store: Store = opener(location, readonly=readonly, password=server_password(location))
    else:
        store = Store(Path(location), readonly=readonly)
    if records_machines(location):
        store.machine = machine
    return store


def server_password(url: str) -> str | None:
    """The password for a server library from the API-key store (``api-key set database``), when neither the URL
    (given on the command line or in the environment) nor PGPASSWORD carries one; None lets libpq look in
    ~/.pgpass or its service file."""
    if has_password(url) or os.environ.get("PGPASSWORD"):
        return None
    for name in ("api_keys", "embed.api_keys"):  # the API-key store (issue 31 moves it to the package's top)
        try:
            keys = importlib.import_module(f"{__package__}.{name}")
        except ImportError:
            continue
        return str(keys.get_key("database")) or None
    return None


def _server_opener() -> Any:
    """``store.open.open_store`` when the PostgreSQL store is part of this build, else None."""
    try:
        module = importlib.import_module(f"{__package__}.store.open")
    except ImportError:
        return None
    return getattr(module, "open_store", None)
