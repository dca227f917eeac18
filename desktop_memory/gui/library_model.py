"""The Library's Qt tree model over :mod:`library_tree`: folders with status, counts and dates, and their files,
paged in as they come into view.

Why a hand-written lazy model: the tree is rebuilt in one beginResetModel/endResetModel from plain Python nodes
(no per-cell QStandardItem allocation), and a folder's files beyond those loaded are asked for through Qt's
``canFetchMore``/``fetchMore`` (the view calls them when a folder is expanded or scrolled to its end): the model
hands the request to ``page_loader`` (the controller runs it on a worker) and :meth:`LibraryModel.add_page` inserts
the answer, unless the tree was replaced meanwhile (a late page of an older tree is dropped).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ..models import STATUS_FAILED, STATUS_SKIPPED, DocumentInfo, FileOutcome, LibraryListing, LibraryQuery
from ..paths import is_inside
from .formatting import human_bytes, human_date, short_path
from .library_tree import (
    C_CHUNKS,
    C_IDX,
    C_MOD,
    C_NAME,
    C_REASON,
    C_SEM,
    C_SIZE,
    C_STATUS,
    COLUMNS,
    TreeSpec,
    _Node,
    build_tree,
    file_node,
    fully_loaded,
    walk,
)
from .machine_labels import machine_of
from .style import colors

SortRole = Qt.ItemDataRole.UserRole + 10
FilterRole = Qt.ItemDataRole.UserRole + 11
PathRole = Qt.ItemDataRole.UserRole + 12
_NO_INDEX = QModelIndex()  # Qt's default "no parent" argument: an invalid index, never modified
ProblemRole = Qt.ItemDataRole.UserRole + 13
PAGE = 200  # files per page: a few screens of rows
PageLoader = Callable[[int, LibraryQuery, str, int], None]  # (tree generation, query, folder key, offset)


def _empty_listing() -> LibraryListing:
    return LibraryListing(query=LibraryQuery(), folders=[], files={}, total_documents=0, complete=True)


class LibraryModel(QAbstractItemModel):
    """Folder → files tree. Sorting and filtering are the store's (an indexed query) or, for a small library
    held whole, done here in plain Python instead of in a QSortFilterProxyModel whose per-comparison data() calls
    into Python cost far more on big libraries."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.watch_states: dict[str, str] = {}  # library folder → watching / paused / missing / error
        self._root = _Node("")
        self._listing = _empty_listing()
        self._outcomes: dict[str, FileOutcome] = {}
        self._folders_by_key: dict[str, _Node] = {}
        self._fetching: set[str] = set()  # folder keys with a page on its way
        self.generation = 0  # bumped by every new tree: a page asked for an older tree is dropped
        self.spec = TreeSpec()
        self.page_loader: PageLoader | None = None
        self.query_changed: Callable[[], None] | None = None  # the spec changed and the store must be asked again

    # -- data in -----------------------------------------------------------------------------------------
    def set_listing(self, listing: LibraryListing, outcomes: dict[str, FileOutcome] | None = None,
                    tree: _Node | None = None) -> None:
        """Replace the data; ``tree`` may be pre-built on a worker with ``build_tree(listing, outcomes, spec)``."""
        self._listing = listing
        if outcomes is not None:
            self._outcomes = dict(outcomes)
        self._install(tree if tree is not None else build_tree(listing, self._outcomes, self.spec))

    def set_outcomes(self, outcomes: dict[str, FileOutcome]) -> None:
        """Last indexing run's outcome per path, so "unchanged" (a run result, not a stored status) shows."""
        self._outcomes = dict(outcomes)
        self._install(build_tree(self._listing, self._outcomes, self.spec))

    def set_spec(self, **changes: object) -> None:
        for k, v in changes.items():
            setattr(self.spec, k, v)
        self._respec()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.spec.sort_col = column
        self.spec.descending = order == Qt.SortOrder.DescendingOrder
        self._respec()

    def _respec(self) -> None:
        """A complete listing is re-shaped here at once; a partial one is asked of the store again (the current
        tree stays until the answer comes)."""
        if self._listing.complete:
            self._install(build_tree(self._listing, self._outcomes, self.spec))
        elif self.query_changed is not None:
            self.query_changed()

    def is_complete(self) -> bool:
        return self._listing.complete

    def listing_query(self) -> LibraryQuery:
        return self._listing.query

    def _install(self, root: _Node) -> None:
        # Always a reset: indexes hold raw pointers to _Node objects, so no index may outlive its tree.
        self.beginResetModel()
        old, self._root = self._root, root
        self.generation += 1
        self._fetching.clear()
        self._folders_by_key = {n.key: n for n in walk(root) if n.doc is None and not n.excluded}
        self.endResetModel()
        for n in list(walk(old)):  # break parent<->child cycles so the old tree is freed now, not by a GC pause
            n.parent = None
        for n in [old, *walk(old)]:
            n.children = []

    # -- paging ------------------------------------------------------------------------------------------
    def hasChildren(self, parent: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        n = self.node(parent)
        return n.doc is None and (bool(n.children) or n.own_files > n.loaded)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        """Only a folder's first page: QTreeView asks again on every layout of an opened folder (each page
        inserted lays it out again), which would page in the whole folder; later pages are asked for by the view
        as their end scrolls into sight (:meth:`fetch_next`)."""
        if not parent.isValid():
            return False
        n = self.node(parent)
        return n.doc is None and n.loaded == 0 and self.wants_more(n)

    def wants_more(self, n: _Node) -> bool:
        """Folder ``n`` has files not loaded and none on their way."""
        return n.loaded < n.own_files and n.key not in self._fetching and self.page_loader is not None

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self.fetch_next(parent)

    def fetch_next(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        """Ask for the next page of this folder's files (nothing when all are loaded or a page is on its way)."""
        n = self.node(parent)
        if n.doc is not None or not self.wants_more(n) or self.page_loader is None:
            return
        self._fetching.add(n.key)
        self.page_loader(self.generation, self._listing.query, n.key, n.loaded)

    def add_page(self, generation: int, key: str, offset: int, docs: list[DocumentInfo]) -> bool:
        """Append a page of folder ``key``'s files; False (dropped) when the tree changed since it was asked for."""
        node = self._folders_by_key.get(key)
        if generation != self.generation or node is None or offset != node.loaded:
            return False
        self._fetching.discard(key)
        docs = docs[: max(0, node.own_files - node.loaded)]
        if not docs:
            node.own_files = node.loaded  # the folder shrank since its summary: nothing more to ask for
            return True
        start = len(node.children)
        parent = self.createIndex(node.row, 0, node)
        self.beginInsertRows(parent, start, start + len(docs) - 1)
        for i, d in enumerate(docs):
            child = file_node(d, node, self._outcomes)
            child.row = start + i
            node.children.append(child)
        node.loaded += len(docs)
        self._listing.files.setdefault(key, []).extend(docs)
        self.endInsertRows()
        return True

    def page_failed(self, generation: int, key: str) -> None:
        if generation == self.generation:
            self._fetching.discard(key)

    def folder_index(self, key: str) -> QModelIndex:
        """The column-0 index of the folder with store key ``key`` (invalid when the tree has none)."""
        n = self._folders_by_key.get(key)
        return self.createIndex(n.row, 0, n) if n is not None else QModelIndex()

    def loaded_pages(self, keys: set[str] | None = None) -> dict[str, int]:
        """{folder key: files loaded} for the folders in ``keys`` (all when None), so a refresh reloads as many."""
        return {k: n.loaded for k, n in self._folders_by_key.items()
                if n.loaded and (keys is None or k in keys)}

    def watch_root(self, path: str) -> str | None:
        """The innermost library folder holding ``path`` (whose watch state applies to it), or None."""
        holders = [r for r in self.watch_states if is_inside(path, r)]
        return max(holders, key=len) if holders else None

    def watch_state(self, path: str) -> str:
        root = self.watch_root(path)
        return self.watch_states[root] if root else ""

    def set_watch_states(self, states: dict[str, str]) -> None:
        if states != self.watch_states:
            self.watch_states = dict(states)
            if self.rowCount():
                self.dataChanged.emit(self.index(0, C_STATUS), self.index(self.rowCount() - 1, C_STATUS))

    def document_count(self) -> int:
        """Documents in the library (all of them, whatever the filter)."""
        return self._listing.total_documents

    def documents(self) -> list[DocumentInfo]:
        """The documents loaded so far (all of them in a complete listing)."""
        return [d for group in self._listing.files.values() for d in group]

    def outcomes(self) -> dict[str, FileOutcome]:
        return dict(self._outcomes)

    # -- helpers -----------------------------------------------------------------------------------------
    def node(self, index: QModelIndex | QPersistentModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def file_paths(self, index: QModelIndex) -> list[str]:
        """The files a selected row stands for. A folder not wholly loaded stands for itself (the service acts on
        everything under it) when nothing is filtered out; filtered, for the matching files loaded so far. An
        excluded row stands for nothing (it is not in the index; "Include again" is its action)."""
        n = self.node(index)
        if n.excluded:
            return []
        if n.doc is not None:
            return [n.path]
        q = self._listing.query
        if not fully_loaded(n) and not (q.needle or q.problems_only) and not self._listing.complete:
            return [n.path]
        return [c.path for c in walk(n) if c.doc is not None]

    def removal_paths(self, index: QModelIndex) -> list[str]:
        """What removing a selected row removes. A folder row, nothing filtered out, is the folder itself, however
        much of it is loaded or expanded: the service then takes a library folder out of the library and excludes
        a folder inside one, so no edit, catch-up or re-read brings it back (issue 30). Filtered, the matching
        files loaded so far (each excluded from its library folder)."""
        n = self.node(index)
        if n.doc is None and not n.excluded and not (self.spec.needle.strip() or self.spec.problems_only):
            return [n.path]
        return self.file_paths(index)

    def excluded_paths(self, index: QModelIndex) -> list[str]:
        """The excluded path a row shows ([] for any other row): what "Include again" names."""
        n = self.node(index)
        return [n.path] if n.excluded else []

    def folder_indexes(self, node: _Node | None = None) -> Iterator[QModelIndex]:
        """Every folder's column-0 index, depth first, without touching file rows (folders come first among a
        node's children): cheap enough to run on each refresh of a big library."""
        for i, c in enumerate((node or self._root).children):
            if c.doc is not None or c.excluded:
                break
            yield self.createIndex(i, 0, c)
            yield from self.folder_indexes(c)

    def indexes(self, parent: QModelIndex | None = None) -> Iterator[QModelIndex]:
        """Every column-0 index below ``parent``, depth first (folders and files)."""
        parent = parent if parent is not None else QModelIndex()
        for r in range(self.rowCount(parent)):
            idx = self.index(r, 0, parent)
            yield idx
            if self.node(idx).doc is None:
                yield from self.indexes(idx)

    # -- Qt model API ------------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> QModelIndex:
        p = self.node(parent)
        if 0 <= row < len(p.children) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, p.children[row])
        return QModelIndex()

    # [override]: PySide6's stub declares QAbstractItemModel.parent() as QObject.parent()'s overload set, which no
    # Python override can match; Qt calls this one with an index.
    def parent(self, index: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        n: _Node = index.internalPointer()
        p = n.parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> int:
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def machines(self) -> dict[str, str]:
        """Other machines' library folders in this listing (a shared library), folder → machine name."""
        return self._listing.machines

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        n: _Node = index.internalPointer()
        col = index.column()
        is_file = n.doc is not None
        if n.excluded:
            return self._excluded_data(n, col, role)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == C_NAME:
                if is_file:
                    return os.path.basename(n.path)
                if n.parent is not None and n.parent.path:  # a subfolder: relative to the folder above
                    return os.path.relpath(n.path, n.parent.path)
                machine = machine_of(n.path, self._listing.machines)  # a shared library: another machine's
                return f"{machine}: {short_path(n.path, 60)}" if machine else short_path(n.path, 70)
            if col == C_STATUS:
                # on the library folder's own row (a top row), not repeated on every subfolder below it
                own = n.path in self.watch_states or n.parent is self._root
                watch = self.watch_state(n.path) if own and not is_file else ""
                return f"{n.status} · {watch}" if watch else n.status
            if col == C_CHUNKS:
                return f"{n.chunks:,}" if (n.chunks or is_file) else ""
            if col == C_SEM:
                if not n.chunks:
                    return ""
                if n.vectors < 0:  # not counted while a long embedding runs (store/doc_listing.py)
                    return "embedding…"
                return "✓" if n.vectors >= n.chunks else f"{n.vectors:,}/{n.chunks:,}"
            if col == C_SIZE:
                return human_bytes(n.size)
            if col == C_MOD:
                return human_date(n.mtime)
            if col == C_IDX:
                return human_date(n.indexed_at)
            if col == C_REASON:
                return n.reason
            return None
        if role == PathRole:
            return n.path
        if role == ProblemRole:
            return n.problems > 0
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == C_STATUS:  # the status column is narrow: its tooltip is the whole status
                return n.status + (f": {n.reason}" if n.reason else "")
            if col == C_REASON and n.reason:
                return n.reason
            return n.path + (f"\n{n.status}: {n.reason}" if n.reason else "")
        if role == Qt.ItemDataRole.ForegroundRole and col in (C_STATUS, C_REASON):
            if n.status == STATUS_FAILED or (not is_file and STATUS_FAILED in n.status):
                return colors()["error_text"]
            if n.status == STATUS_SKIPPED:
                return colors()["muted"]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (C_CHUNKS, C_SEM, C_SIZE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _excluded_data(self, n: _Node, col: int, role: int) -> object:
        """An excluded row: its name, "excluded" and why, muted; nothing else (it holds no files)."""
        if role == Qt.ItemDataRole.DisplayRole:
            if col == C_NAME:
                return os.path.relpath(n.path, n.parent.path) if n.parent is not None and n.parent.path else short_path(
                    n.path, 70)
            return {C_STATUS: n.status, C_REASON: n.reason}.get(col, "")
        if role == PathRole:
            return n.path
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{n.path}\n{n.reason}"
        if role == Qt.ItemDataRole.ForegroundRole:
            return colors()["muted"]
        return None
