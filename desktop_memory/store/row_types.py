"""The records the Store hands out (not SQLite values: sql_values.py narrows those): a document's row, what writing
one document did, a result's chunk row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..models import HEADING_SEP, Location


def stored_location(kind: str, heading: str | None, page: int | None, line_start: int | None,
                    line_end: int | None, char_start: int, char_end: int) -> Location:
    """A chunk row's location columns back into a Location (the one place that reads them)."""
    return Location.from_stored(kind, heading_path=tuple(heading.split(HEADING_SEP)) if heading else (), page=page,
                                line_start=line_start, line_end=line_end, char_start=char_start, char_end=char_end)


@dataclass
class DocRow:
    id: int
    path: str
    kind: str
    size: int
    mtime: float
    content_hash: str
    status: str
    error: str
    n_chunks: int


@dataclass
class WriteResult:
    doc_id: int
    chunks: int
    duplicates: int
    vectors_reused: int = 0  # chunks of a re-indexed document whose unchanged text kept its old vector
    vectors_stored: int = 0  # chunks given the vector the write carried (``DocumentWrite.vectors``: a copy)


class ChunkRow(NamedTuple):
    """One result's chunk and document columns, typed (``SearchReads.chunk_rows``)."""

    chunk_id: int
    doc_id: int
    path: str
    kind: str
    text: str
    heading: str | None
    page: int | None
    line_start: int | None
    line_end: int | None
    char_start: int
    char_end: int
    mtime: float

    def location(self) -> Location:
        return stored_location(self.kind, self.heading, self.page, self.line_start, self.line_end, self.char_start,
                               self.char_end)
