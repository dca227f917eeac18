"""Read one stored passage (chunk) by id, with the passages around it in the same file.

Front ends that hand out chunk ids (the MCP server's `get_passage`) need the passage again later, and usually
a little of what surrounds it: the neighbours are the chunks just before and after it in file order (``ord``).
Read-only: plain SELECTs, so a reader in another process never blocks the app's indexing (WAL).
"""

from __future__ import annotations

from typing import Any

from ..models import PassageWithNeighbours, StoredPassage
from .protocol import LibraryReads
from .row_types import stored_location


def _row(r: tuple[Any, ...]) -> StoredPassage:
    cid, doc_id, ord_, path, kind, text, heading, page, ls, le, cs, ce, mtime = r
    loc = stored_location(kind, heading, page, ls, le, cs, ce)
    return StoredPassage(chunk_id=cid, doc_id=doc_id, ord=ord_, source=path, kind=kind, text=text, location=loc,
                         mtime=mtime)


def read_passage(reads: LibraryReads, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
    """The passage with id ``chunk_id`` and up to ``neighbours`` passages on each side, or None if no such id."""
    found = reads.passage_rows(int(chunk_id), max(0, int(neighbours)))
    if found is None:
        return None
    row, around_rows, total = found
    passage = _row(row)
    around = [_row(r) for r in around_rows]
    return PassageWithNeighbours(passage=passage, before=[p for p in around if p.ord < passage.ord],
                                 after=[p for p in around if p.ord > passage.ord], chunks_in_file=int(total))
