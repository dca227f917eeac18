"""The Library's listing rules, written once for the store and the window (no Qt, no SQL connection): the sort
keys, the filter, the folder a document is grouped under, and the in-memory reference grouping.

Why one home: the store groups, filters and sorts in SQL (store/doc_listing.py; a million passages cannot be read
for the first screen), and the window does the same in Python for a small library it holds whole, so a filter or a
sort needs no query. When each kept its own table of the eight sort keys, a key could order one way on the first
screen and another after a click. Here each key is one row (the column a person clicks, the SQL the store orders
by, the field sorted in memory); tests/unit/test_doc_listing.py checks that the store's SQL and
:func:`listing_from_documents` give the same listing for every key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .models import (
    STATUS_FAILED,
    STATUS_INDEXED,
    STATUS_SKIPPED,
    STATUS_UNCHANGED,
    DocumentInfo,
    FileOutcome,
    FolderSummary,
    LibraryListing,
    LibraryQuery,
)


@dataclass(frozen=True)
class SortKey:
    """One way to order the Library. ``sql`` is the store's ORDER BY expression (documents aliased ``d``; ``vec``
    is the document's embedded chunks); ``field`` the DocumentInfo attribute sorted in memory and ``row_field``
    the same value on a Library row (gui/library_tree's nodes) when that is named differently. ``folded``: compared
    without case (``collate nocase`` in SQL, ``str.lower`` here)."""

    name: str
    label: str
    sql: str
    field: str
    row_field: str = ""
    folded: bool = False

    def of(self, doc: DocumentInfo) -> object:
        """The value a document is sorted by."""
        return self._fold(getattr(doc, self.field))

    def of_row(self, row: object) -> object:
        """The value a Library row (a folder's or a file's) is sorted by."""
        return self._fold(getattr(row, self.row_field or self.field))

    def _fold(self, value: object) -> object:
        return value.lower() if self.folded and isinstance(value, str) else value


# In the Library's column order: a column's index is its key's index here.
SORT_KEYS: tuple[SortKey, ...] = (
    SortKey("name", "Name", "d.path collate nocase", "path", folded=True),
    SortKey("status", "Status", "d.status", "status"),
    SortKey("chunks", "Chunks", "d.n_chunks", "chunks"),
    SortKey("vectors", "Semantic", "vec", "vectors"),
    SortKey("size", "Size", "d.size", "size"),
    SortKey("mtime", "Modified", "d.mtime", "mtime"),
    SortKey("indexed_at", "Indexed", "d.indexed_at", "indexed_at"),
    SortKey("reason", "Reason", "d.error", "error", row_field="reason"),
)
_BY_NAME = {k.name: k for k in SORT_KEYS}

# The filter: "problems only" keeps these statuses; the needle is a substring of a document's path, status and
# reason joined by spaces (NEEDLE_SQL is that text in SQL; SQLite's lower() folds ASCII letters only).
PROBLEM_STATUSES: tuple[str, ...] = (STATUS_FAILED, STATUS_SKIPPED)
PROBLEMS_SQL = f"d.status in ({', '.join(repr(s) for s in PROBLEM_STATUSES)})"
NEEDLE_SQL = "d.path || ' ' || d.status || ' ' || d.error"


def sort_key(name: str) -> SortKey:
    """The key called ``name``; an unknown name sorts by name (a query from an older window)."""
    return _BY_NAME.get(name, SORT_KEYS[0])


def order_sql(query: LibraryQuery) -> str:
    """The store's ORDER BY for ``query``: its key in its direction, ties by id (ascending either way, as
    :func:`sort_documents` does)."""
    return f"{sort_key(query.sort).sql}{' desc' if query.descending else ''}, d.id"


def sort_documents(docs: list[DocumentInfo], query: LibraryQuery) -> None:
    """Sort ``docs`` in place as :func:`order_sql` orders them."""
    key = sort_key(query.sort)
    docs.sort(key=lambda d: d.id)
    docs.sort(key=key.of, reverse=query.descending)  # type: ignore[arg-type]  # each key is one comparable type


def folder_key_of(path: str) -> str:
    """The folder key of a document path: the path up to and including its last separator (the store computes the
    same in SQL: store/migrations.py ``FOLDER_KEY``, the first column of its folder index)."""
    i = max(path.rfind("/"), path.rfind("\\"))
    return path[: i + 1] if i >= 0 else ""


def folder_path(key: str) -> str:
    """The folder as ``os.path.dirname`` names it, from its key: ``/a/b/`` → ``/a/b``, ``/`` → ``/``."""
    if len(key) > 1 and key[-1] in "/\\" and not key[:-1].endswith(":"):
        return key[:-1]
    return key


def shown_status(d: DocumentInfo, outcomes: Mapping[str, FileOutcome]) -> tuple[str, str]:
    """(status, reason) as the Library shows a document: "unchanged" and a skip reason come from the last run."""
    out = outcomes.get(d.path)
    status, reason = d.status, d.error or ""
    if out is not None and out.status == STATUS_UNCHANGED and d.status == STATUS_INDEXED:
        status = STATUS_UNCHANGED
    elif out is not None and out.status in PROBLEM_STATUSES and not reason:
        reason = out.reason
    return status, reason


def summarise(key: str, group: Sequence[DocumentInfo]) -> FolderSummary:
    """A folder's summary row from its own (matching) documents, as the store's aggregate query computes it."""
    return FolderSummary(
        key=key, path=folder_path(key), files=len(group), failed=sum(d.status == STATUS_FAILED for d in group),
        skipped=sum(d.status == STATUS_SKIPPED for d in group), chunks=sum(d.chunks for d in group),
        vectors=sum(d.vectors for d in group), size=sum(d.size for d in group),
        mtime=max(d.mtime for d in group), indexed_at=max(d.indexed_at for d in group))


def listing_from_documents(docs: Sequence[DocumentInfo], query: LibraryQuery,
                           outcomes: Mapping[str, FileOutcome] | None = None) -> LibraryListing:
    """The listing the store gives for ``query`` when every document is at hand (a complete listing re-filtered
    in the window, the tests' in-memory service, the reference the store's SQL is tested against): filtered,
    grouped by folder, each folder sorted, ties by id."""
    outcomes = outcomes or {}
    needle = query.needle.strip().lower()
    files: dict[str, list[DocumentInfo]] = {}
    for d in docs:
        status, reason = shown_status(d, outcomes)
        if query.problems_only and d.status not in PROBLEM_STATUSES:
            continue
        if needle and needle not in f"{d.path} {status} {reason}".lower():
            continue
        files.setdefault(folder_key_of(d.path), []).append(d)
    for group in files.values():
        sort_documents(group, query)
    return LibraryListing(query=query, folders=[summarise(k, g) for k, g in files.items()], files=files,
                          total_documents=len(docs))


__all__ = ["NEEDLE_SQL", "PROBLEMS_SQL", "PROBLEM_STATUSES", "SORT_KEYS", "SortKey", "folder_key_of", "folder_path",
           "listing_from_documents", "order_sql", "shown_status", "sort_documents", "sort_key", "summarise"]
