"""The one SQLite file: documents, chunks, FTS5 and sqlite-vec vectors."""

from ..models import HEADING_SEP
from .connection import open_connection, vec_library_path
from .migrations import SCHEMA_VERSION
from .repository import DocRow, Store, WriteResult

__all__ = ["HEADING_SEP", "SCHEMA_VERSION", "DocRow", "Store", "WriteResult", "open_connection", "vec_library_path"]
