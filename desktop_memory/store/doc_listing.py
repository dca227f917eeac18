"""The Library's listing: folder summaries from one aggregate query, and documents one sorted page at a time.

Why: reading every document (with a per-document count of its vectors) and building the whole tree before the
Library's first screen costs 41 s for 145,000 documents at a million passages. So a folder's summary is one row
of a ``group by`` over the ``documents_folder`` index (migration 'library listing'), whose first column is the
folder *key*, the path up to and including its last separator, computed by ``FOLDER_KEY`` from built-in,
deterministic functions (so the index needs no custom function on any connection); a folder's files are a range
of that same index, in name order, read ``limit`` rows at a time. Only the chunks still waiting for a vector (and
duplicates, which have none of their own) are joined per folder to give the folder's "Semantic" figure: that
costs what is pending, not what is stored. The sort keys, the filter and the folder key are the listing's own
(desktop_memory/library_listing.py): this module renders them as SQL, so the window's in-memory grouping of a small
library orders and filters exactly as this does.
"""

from __future__ import annotations

from collections.abc import Mapping

import apsw

from ..library_listing import NEEDLE_SQL, PROBLEMS_SQL, folder_path, order_sql
from ..models import DocumentInfo, FolderSummary, LibraryListing, LibraryQuery
from .migrations import FOLDER_KEY
from .sql_values import as_float, as_int, as_str, scalar_int

_D_FOLDER_KEY = FOLDER_KEY.replace("path", "d.path")  # the same expression, documents aliased d

# a collapsed duplicate has no vector of its own: it is found through its holder's, so it counts as embedded
# once the holder is (the status bar's "all chunks embedded" and the Library's "Semantic" ✓ agree)
_HOLDER_EMBEDDED = "(select h.embedded from chunks h where h.id = c.dup_of) = 1"
_DOC_COLUMNS = ("d.id, d.path, d.kind, d.status, d.error, d.size, d.mtime, d.indexed_at, d.n_chunks, "
                "(select count(*) from chunks c where c.doc_id = d.id and (c.embedded = 1 or "
                f"(c.dup_of is not null and {_HOLDER_EMBEDDED}))) as vec")


# Above this many chunks without a vector (a long embedding, e.g. after a model change), the folders' "Semantic"
# figure is not computed: joining every waiting chunk to its folder costs 13 s at a million passages all pending,
# on the worker the searches use, at every refresh. The folders then say they are being embedded (vectors = -1);
# each file's own figure (a page: a few hundred documents) is still exact.
PER_FOLDER_PENDING_LIMIT = 50_000


def _where(query: LibraryQuery) -> tuple[list[str], list[object]]:
    clauses: list[str] = []
    args: list[object] = []
    needle = query.needle.strip().lower()
    if needle:
        clauses.append(f"instr(lower({NEEDLE_SQL}), ?) > 0")
        args.append(needle)
    if query.problems_only:
        clauses.append(PROBLEMS_SQL)
    return clauses, args


def _per_folder(conn: apsw.Connection, condition: str, query: LibraryQuery) -> dict[str, int]:
    """{folder key: chunks matching ``condition``} over a partial index of chunks (pending, or duplicates)."""
    clauses, args = _where(query)
    sql = (f"select {_D_FOLDER_KEY}, count(*) from chunks c join documents d on d.id = c.doc_id "
           f"where {condition}{''.join(' and ' + c for c in clauses)} group by 1")
    return {as_str(k): as_int(n) for k, n in conn.execute(sql, args)}


def folders(conn: apsw.Connection, query: LibraryQuery) -> list[FolderSummary]:
    """Every folder holding documents that match ``query``, with its direct files' counts and totals (``vectors``
    is -1, unknown, while more than ``PER_FOLDER_PENDING_LIMIT`` chunks wait for a vector)."""
    clauses, args = _where(query)
    where = f"where {' and '.join(clauses)}" if clauses else ""
    rows = conn.execute(
        f"select {_D_FOLDER_KEY}, count(*), sum(d.status = 'failed'), sum(d.status = 'skipped'), "
        f"sum(d.n_chunks), sum(d.size), max(d.mtime), max(d.indexed_at) from documents d {where} "
        f"group by {_D_FOLDER_KEY}", args).fetchall()
    waiting = scalar_int(conn, "select count(*) from chunks where embedded = 0 and dup_of is null")
    waiting += scalar_int(conn, "select count(*) from chunks where dup_of is not null")
    known = waiting <= PER_FOLDER_PENDING_LIMIT
    pending = _per_folder(conn, "c.embedded = 0 and c.dup_of is null", query) if known else {}
    dups = _per_folder(conn, f"c.dup_of is not null and c.embedded = 0 and not {_HOLDER_EMBEDDED}",
                       query) if known else {}
    out = []
    for key, files, failed, skipped, chunks, size, mtime, indexed_at in rows:
        k = as_str(key)
        n = as_int(chunks or 0)
        out.append(FolderSummary(key=k, path=folder_path(k), files=as_int(files), failed=as_int(failed or 0),
                                 skipped=as_int(skipped or 0), chunks=n,
                                 vectors=n - pending.get(k, 0) - dups.get(k, 0) if known else -1,
                                 size=as_int(size or 0),
                                 mtime=as_float(mtime or 0.0), indexed_at=as_float(indexed_at or 0.0)))
    return out


def _doc(row: tuple[object, ...]) -> DocumentInfo:
    i, path, kind, status, error, size, mtime, indexed_at, chunks, vec = row[:10]
    return DocumentInfo(as_int(i), as_str(path), as_str(kind), as_str(status), as_str(error), as_int(size),
                        as_float(mtime), as_float(indexed_at), as_int(chunks), as_int(vec))


def page(conn: apsw.Connection, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
    """Rows ``offset`` .. ``offset + limit`` of folder ``key``'s own files (not its subfolders'), in the
    query's order (ties by id). In name order this is a range of the folder index, whatever the library's size."""
    clauses, args = _where(query)
    sql = (f"select {_DOC_COLUMNS} from documents d where {_D_FOLDER_KEY} = ?"
           f"{''.join(' and ' + c for c in clauses)} order by {order_sql(query)} limit ? offset ?")
    return [_doc(r) for r in conn.execute(sql, [key, *args, int(limit), int(offset)])]


def everything(conn: apsw.Connection, query: LibraryQuery) -> dict[str, list[DocumentInfo]]:
    """Every matching document grouped by folder key, each folder in the query's order (a small library: one
    query instead of one per folder)."""
    clauses, args = _where(query)
    where = f"where {' and '.join(clauses)}" if clauses else ""
    out: dict[str, list[DocumentInfo]] = {}
    for r in conn.execute(f"select {_DOC_COLUMNS}, {_D_FOLDER_KEY} from documents d {where} "
                                f"order by {order_sql(query)}", args):
        out.setdefault(as_str(r[10]), []).append(_doc(r))
    return out


def listing(conn: apsw.Connection, query: LibraryQuery, pages: Mapping[str, int], eager_limit: int) -> LibraryListing:
    """Folder summaries, plus the first ``pages[key]`` files of each folder asked for; in a library of no more
    than ``eager_limit`` documents, every document unfiltered (``complete``: a small library shows whole, and its
    filter and sort stay instant, as they always were)."""
    total = scalar_int(conn, "select count(*) from documents")
    if total <= eager_limit:  # everything, unfiltered: the window filters and sorts it without asking again
        whole = LibraryQuery(sort=query.sort, descending=query.descending)
        return LibraryListing(query=query, folders=folders(conn, whole), files=everything(conn, whole),
                              total_documents=total, complete=True)
    summary = folders(conn, query)
    known = {f.key for f in summary}
    files = {key: page(conn, query, key, 0, n) for key, n in pages.items() if key in known and n > 0}
    return LibraryListing(query=query, folders=summary, files=files, total_documents=total)


__all__ = ["FOLDER_KEY", "PER_FOLDER_PENDING_LIMIT", "folders", "listing", "page"]
