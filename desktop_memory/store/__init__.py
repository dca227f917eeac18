"""A library's storage: the SQLite file (documents, chunks, FTS5 and sqlite-vec vectors) or a PostgreSQL database.

The app outside store/ comes in one way only: ``store.open.open_store`` gives a ``store.protocol.LibraryStore``
(docs/ARCHITECTURE.md, "One way into the store"). The names below are for tests and the benchmark harness, which
build or inspect the SQLite file itself."""

from ..models import HEADING_SEP
from .connection import open_connection, vec_library_path
from .migrations import SCHEMA_VERSION
from .repository import DocRow, Store, WriteResult

__all__ = ["HEADING_SEP", "SCHEMA_VERSION", "DocRow", "Store", "WriteResult", "open_connection", "vec_library_path"]
