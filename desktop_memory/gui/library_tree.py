"""The Library's folder tree, Qt-free: folders nest under the nearest folder above them that holds files, counts
roll up, and each folder carries only the files loaded so far (the rest arrive a page at a time).

Why a listing instead of every document: at a million passages (145,000 documents) reading and grouping every
document costs 41 s before the Library's first screen. So the tree is built from a
:class:`~desktop_memory.models.LibraryListing`: one summary row per folder (the store's aggregate query) and the
first files of the folders on screen. A small library's listing is ``complete`` (every document, unfiltered), and
then filtering and sorting are done in plain Python (desktop_memory/library_listing.py, whose sort keys and filter
the store renders as SQL) without asking the store again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..library_listing import PROBLEM_STATUSES, SORT_KEYS, listing_from_documents, shown_status
from ..models import DocumentInfo, FileOutcome, LibraryListing, LibraryQuery
from ..paths import below, is_inside
from .machine_labels import machine_of

COLUMNS = [k.label for k in SORT_KEYS]  # a column sorts by the listing's key of the same index
STATUS_EXCLUDED = "excluded"
EXCLUDED_REASON = "removed from the library: watching and re-reading leave it out (Include again brings it back)"
C_NAME, C_STATUS, C_CHUNKS, C_SEM, C_SIZE, C_MOD, C_IDX, C_REASON = range(len(COLUMNS))


@dataclass
class _Node:
    path: str
    doc: DocumentInfo | None = None
    parent: _Node | None = None
    children: list[_Node] = field(default_factory=list)
    row: int = 0
    status: str = ""
    reason: str = ""
    chunks: int = 0
    vectors: int = 0
    size: int = 0
    mtime: float = 0.0
    indexed_at: float = 0.0
    problems: int = 0
    key: str = ""  # a folder's key in the store (path up to its last separator)
    own_files: int = 0  # a folder's matching files directly inside it (loaded or not)
    loaded: int = 0  # how many of them are in ``children``
    files: int = 0  # a folder's matching files, its subfolders' included
    excluded: bool = False  # a path the person removed from inside a library folder ("Include again" brings it back)


@dataclass
class TreeSpec:
    """How to shape the tree: filter text, problems only, sort column/order."""

    needle: str = ""
    problems_only: bool = False
    sort_col: int = C_NAME
    descending: bool = False

    def query(self) -> LibraryQuery:
        """The store's form of this spec (sort by column name)."""
        sort = SORT_KEYS[self.sort_col].name if 0 <= self.sort_col < len(SORT_KEYS) else "name"
        return LibraryQuery(needle=self.needle.strip(), problems_only=self.problems_only, sort=sort,
                            descending=self.descending)


def _folder_parent(folder: str, folders: set[str]) -> str | None:
    """The nearest proper ancestor of ``folder`` that is itself a folder of the tree (None: top level)."""
    cur = os.path.dirname(folder)
    while cur and cur != folder:
        if cur in folders:
            return cur
        nxt = os.path.dirname(cur)
        if nxt == cur:
            break
        cur = nxt
    return None


def file_node(d: DocumentInfo, parent: _Node, outcomes: dict[str, FileOutcome]) -> _Node:
    status, reason = shown_status(d, outcomes)
    return _Node(d.path, d, parent, status=status, reason=reason, chunks=d.chunks, vectors=d.vectors, size=d.size,
                 mtime=d.mtime, indexed_at=d.indexed_at,
                 problems=int(d.status in PROBLEM_STATUSES))


def folder_status(files: int, failed: int, skipped: int) -> str:
    bits = [f"{files:,} file{'s' if files != 1 else ''}"]
    if failed:
        bits.append(f"{failed} failed")
    if skipped:
        bits.append(f"{skipped} skipped")
    return " · ".join(bits)


def build_tree(listing: LibraryListing, outcomes: dict[str, FileOutcome], spec: TreeSpec) -> _Node:
    """Folders (all of them, from their summaries) nested and rolled up, each with the files the listing holds.
    Pure Python (no Qt): safe on a worker thread, and fast enough to run on the UI thread for a sort or filter
    change of a complete listing (re-filtered here first)."""
    q = spec.query()
    if listing.complete and (q.needle or q.problems_only or (q.sort, q.descending) != (listing.query.sort,
                                                                                      listing.query.descending)):
        docs = [d for group in listing.files.values() for d in group]
        listing = dataclasses.replace(listing_from_documents(docs, q, outcomes), excluded=listing.excluded,
                                      machines=listing.machines, roots=listing.roots)
    root = _Node("")
    folders: dict[str, _Node] = {}
    counts: dict[str, list[int]] = {}  # files, failed, skipped (rolled up)
    for f in listing.folders:
        node = folders[f.path] = _Node(f.path, key=f.key, own_files=f.files, chunks=f.chunks, vectors=f.vectors,
                                       size=f.size, mtime=f.mtime, indexed_at=f.indexed_at,
                                       problems=f.failed + f.skipped)
        counts[f.path] = [f.files, f.failed, f.skipped]
        docs = listing.files.get(f.key, [])
        node.children = [file_node(d, node, outcomes) for d in docs]
        node.loaded = len(docs)
    _add_library_folders(listing.roots, folders, counts)
    names = set(folders)
    for path in sorted(folders, key=len):  # parents before children
        fnode = folders[path]
        parent_path = _folder_parent(path, names)
        fnode.parent = folders[parent_path] if parent_path else root
        fnode.parent.children.append(fnode)
    for path, fnode in sorted(folders.items(), key=lambda kv: -len(kv[0])):  # deepest first: roll up
        c = counts[path]
        fnode.files = c[0]
        fnode.status = folder_status(*c)
        up = fnode.parent
        if up is not None and up is not root:
            pc = counts[up.path]
            pc[0], pc[1], pc[2] = pc[0] + c[0], pc[1] + c[1], pc[2] + c[2]
            up.chunks += fnode.chunks
            up.vectors = -1 if min(up.vectors, fnode.vectors) < 0 else up.vectors + fnode.vectors
            up.size += fnode.size
            up.mtime = max(up.mtime, fnode.mtime)
            up.indexed_at = max(up.indexed_at, fnode.indexed_at)
            up.problems += fnode.problems
    _add_excluded(listing.excluded, folders, root, q.needle.lower(), q.problems_only)
    key = (SORT_KEYS[spec.sort_col] if 0 <= spec.sort_col < len(SORT_KEYS) else SORT_KEYS[0]).of_row

    def order(node: _Node) -> None:  # folders first (sorted here), then files (in the store's order), then excluded
        folders_here = (c for c in node.children if c.doc is None and not c.excluded)
        subs = sorted(folders_here, key=key, reverse=spec.descending)  # type: ignore[arg-type]
        node.children = (subs + [c for c in node.children if c.doc is not None]
                         + sorted((c for c in node.children if c.excluded), key=lambda c: c.path.lower()))
        for i, c in enumerate(node.children):
            c.row = i
        for c in subs:
            order(c)

    order(root)
    if listing.machines:  # a shared library: this machine's folders first, then each other machine's together
        mine = [c for c in root.children if not c.excluded and machine_of(c.path, listing.machines) is None]
        theirs = sorted((c for c in root.children if c not in mine), key=lambda c: (
            machine_of(c.path, listing.machines) or "", root.children.index(c)))
        root.children = mine + theirs
        for i, top in enumerate(root.children):
            top.row = i
    return root


def _add_excluded(paths: list[str], folders: dict[str, _Node], root: _Node, needle: str, problems_only: bool) -> None:
    """One row per exclusion, under the nearest folder shown above it (else at the top, where its folder was), so
    the person sees what they removed and can include it again. Not a problem: hidden by "Problems only"."""
    if problems_only:
        return
    names = set(folders)
    for path in paths:
        if needle and needle not in f"{path} {STATUS_EXCLUDED}".lower():
            continue
        parent_path = _folder_parent(path, names)
        parent = folders[parent_path] if parent_path else root
        parent.children.append(_Node(path, parent=parent, status=STATUS_EXCLUDED, reason=EXCLUDED_REASON,
                                     excluded=True))


def _add_library_folders(roots: Sequence[str], folders: dict[str, _Node], counts: dict[str, list[int]]) -> None:
    """A library folder holding no files itself (``notes/`` with only ``notes/work`` and ``notes/home`` inside) is
    still a row, above its subfolders: the top rows are the folders the person added, each saying "watching" once,
    as the status bar counts them. Only when something listed is below it (a filter may hide all of it)."""
    for root in roots:
        if root in folders or not any(is_inside(path, root) for path in folders):
            continue
        folders[root] = _Node(root, key=below(root))
        counts[root] = [0, 0, 0]


def walk(node: _Node) -> Iterator[_Node]:
    """Every loaded node below ``node``, depth first."""
    for c in node.children:
        yield c
        if c.doc is None:
            yield from walk(c)


def fully_loaded(node: _Node) -> bool:
    """Every file below this folder is in the tree (nothing left to page in)."""
    return node.loaded >= node.own_files and all(fully_loaded(c) for c in node.children if c.doc is None)


__all__ = ["COLUMNS", "EXCLUDED_REASON", "STATUS_EXCLUDED", "TreeSpec", "build_tree", "file_node", "folder_status",
           "fully_loaded", "walk"]
