"""Every file stays findable when identical chunks are collapsed.

The store keeps one *canonical* chunk per repeated passage (it alone has an FTS row and a vector); each other file
holding the same passage keeps a row with ``dup_of`` pointing at it. Ranking sees one passage, but:

- a filtered search treats a canonical chunk as allowed when its own file *or any copy's file* passes the filter
  (``allowed_sql``), so a path/kind filter finds a copy inside the filtered folder;
- each result names every other file holding the passage (``SearchResult.also_in``), and when the canonical
  chunk's own file is filtered out, the result shows the first copy that passes the filter instead
  (``resolve_holders``).

Only reachability lives here; which row owns the vector is the store's business (promotion on delete).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from ..models import SearchFilters
from ..store import Store
from .filters import filter_sql


def allowed_sql(filters: SearchFilters | None, chunk_alias: str = "c",
                doc_alias: str = "d") -> tuple[str, list[object]]:
    """A WHERE fragment true for a canonical chunk (alias ``chunk_alias``, its document ``doc_alias``) whose file
    or any copy's file passes ``filters``; ("", []) when unfiltered."""
    where, params = filter_sql(filters, doc_alias)
    if not where:
        return "", []
    copy_where, copy_params = filter_sql(filters, "dx")
    sql = (f"(({where}) or exists (select 1 from chunks x join documents dx on dx.id = x.doc_id "
           f"where x.dup_of = {chunk_alias}.id and {copy_where}))")
    return sql, [*params, *copy_params]


def allowed_canonical_sql(filters: SearchFilters | None) -> tuple[str, list[object]]:
    """A SELECT of canonical chunk ids allowed by ``filters`` (own file or a copy's file passes); ("", []) when
    unfiltered. Duplicates may repeat an id."""
    where, params = filter_sql(filters)
    if not where:
        return "", []
    return ("select coalesce(c.dup_of, c.id) as id from chunks c join documents d on d.id = c.doc_id where " + where,
            params)


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


def resolve_holders(store: Store, ids: Sequence[int], filters: SearchFilters | None = None) -> dict[int, Holders]:
    """{canonical chunk id: Holders} for the given canonical ids, in one query (plus one for the copies)."""
    if not ids:
        return {}
    where, params = filter_sql(filters)
    passes = f"({where})" if where else "1"
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(
        f"select c.id, c.id, c.doc_id, d.path, {passes} from chunks c join documents d on d.id = c.doc_id "
        f"where c.id in ({marks}) "
        f"union all select c.dup_of, c.id, c.doc_id, d.path, {passes} from chunks c "
        f"join documents d on d.id = c.doc_id where c.dup_of in ({marks})",
        [*params, *ids, *params, *ids],
    ).fetchall()
    grouped: dict[int, list[Holder]] = {}
    for canon, cid, doc_id, path, ok in rows:
        grouped.setdefault(cast(int, canon), []).append(Holder(cast(int, cid), cast(int, doc_id), str(path), bool(ok)))
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
