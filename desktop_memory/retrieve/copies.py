"""Every file stays findable when identical chunks are collapsed.

The store keeps one *canonical* chunk per repeated passage (it alone has an FTS row and a vector); each other file
holding the same passage keeps a row with ``dup_of`` pointing at it. Ranking sees one passage, but:

- a filtered search treats a canonical chunk as allowed when its own file *or any copy's file* passes the filter
  (``store/filters.py``: ``allowed_sql``), so a path/kind filter finds a copy inside the filtered folder;
- each result names every other file holding the passage (``SearchResult.also_in``), and when the canonical
  chunk's own file is filtered out, the result shows the first copy that passes the filter instead
  (``resolve_holders``).

Only reachability lives here; which row owns the vector is the store's business (promotion on delete).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..models import SearchFilters
from ..store.protocol import LibraryStore


@dataclass
class Holder:
    """One row holding a passage: the canonical chunk or a collapsed copy."""

    chunk_id: int
    doc_id: int
    path: str
    passes: bool  # its file passes the search's filters (always True unfiltered)


@dataclass
class Holders:
    shown: Holder  # the row a result presents (canonical, or the first copy inside the filter)
    others: list[Holder] = field(default_factory=list)  # every other file holding the passage

    def also_in(self) -> list[str]:
        seen = {self.shown.path}
        out: list[str] = []
        for h in self.others:
            if h.path not in seen:
                seen.add(h.path)
                out.append(h.path)
        return out


def resolve_holders(store: LibraryStore, ids: Sequence[int],
                    filters: SearchFilters | None = None) -> dict[int, Holders]:
    """{canonical chunk id: Holders} for the given canonical ids, in one query (plus one for the copies)."""
    if not ids:
        return {}
    grouped: dict[int, list[Holder]] = {}
    for canon, cid, doc_id, path, ok in store.reads.holder_rows(ids, filters):
        grouped.setdefault(canon, []).append(Holder(cid, doc_id, path, ok))
    out: dict[int, Holders] = {}
    for canon, holders in grouped.items():
        own = [h for h in holders if h.chunk_id == canon]
        if not own:  # the canonical row vanished (concurrent delete): nothing to show
            continue
        copies = sorted((h for h in holders if h.chunk_id != canon), key=lambda h: h.chunk_id)
        ordered = own + copies
        shown = next((h for h in ordered if h.passes), own[0])
        out[canon] = Holders(shown=shown, others=[h for h in ordered if h is not shown])
    return out
