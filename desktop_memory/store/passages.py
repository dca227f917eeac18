"""Read one stored passage (chunk) by id, with the passages around it in the same file.

Front ends that hand out chunk ids (the MCP server's `get_passage`) need the passage again later, and usually
a little of what surrounds it: the neighbours are the chunks just before and after it in file order (``ord``).
Read-only: plain SELECTs, so a reader in another process never blocks the app's indexing (WAL).
"""

from __future__ import annotations

from typing import Any

from ..models import PassageWithNeighbours, StoredPassage
from .repository import Store
from .row_types import stored_location

_COLUMNS = ("c.id, c.doc_id, c.ord, d.path, d.kind, c.text, c.heading_path, c.page, c.line_start, c.line_end, "
            "c.char_start, c.char_end, d.mtime")


def _row(r: tuple[Any, ...]) -> StoredPassage:
    cid, doc_id, ord_, path, kind, text, heading, page, ls, le, cs, ce, mtime = r
    loc = stored_location(kind, heading, page, ls, le, cs, ce)
    return StoredPassage(chunk_id=cid, doc_id=doc_id, ord=ord_, source=path, kind=kind, text=text, location=loc,
                         mtime=mtime)


def read_passage(store: Store, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
    """The passage with id ``chunk_id`` and up to ``neighbours`` passages on each side, or None if no such id."""
    conn = store.conn
    row = conn.execute(f"select {_COLUMNS} from chunks c join documents d on d.id = c.doc_id where c.id = ?",
                       (int(chunk_id),)).fetchone()
    if row is None:
        return None
    passage = _row(row)
    n = max(0, int(neighbours))
    around = [] if n == 0 else [_row(r) for r in conn.execute(
        f"select {_COLUMNS} from chunks c join documents d on d.id = c.doc_id "
        "where c.doc_id = ? and c.ord between ? and ? and c.id != ? order by c.ord",
        (passage.doc_id, passage.ord - n, passage.ord + n, passage.chunk_id))]
    count = conn.execute("select count(*) from chunks where doc_id = ?", (passage.doc_id,)).fetchone()
    total = count[0] if count else 0
    return PassageWithNeighbours(passage=passage, before=[p for p in around if p.ord < passage.ord],
                                 after=[p for p in around if p.ord > passage.ord], chunks_in_file=int(total))
