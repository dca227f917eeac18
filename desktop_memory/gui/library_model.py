"""The Library's tree model: folders and files with status, reason, chunk counts and dates.

Why a hand-written tree model: a library of thousands of files is rebuilt in one beginResetModel/endResetModel
with plain Python lists (no per-cell QStandardItem allocation), so refreshing during indexing stays cheap.
Files are grouped by folder as a real tree: a folder sits under the nearest folder above it that holds files
(named relative to it, e.g. ``advanced/security``), with its counts rolled up into every folder above.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ..models import (
    STATUS_FAILED,
    STATUS_INDEXED,
    STATUS_SKIPPED,
    STATUS_UNCHANGED,
    DocumentInfo,
    FileOutcome,
    is_inside,
)
from .formatting import human_bytes, human_date, short_path
from .style import colors

COLUMNS = ["Name", "Status", "Chunks", "Semantic", "Size", "Modified", "Indexed", "Reason"]
C_NAME, C_STATUS, C_CHUNKS, C_SEM, C_SIZE, C_MOD, C_IDX, C_REASON = range(len(COLUMNS))
SortRole = Qt.ItemDataRole.UserRole + 10
FilterRole = Qt.ItemDataRole.UserRole + 11
PathRole = Qt.ItemDataRole.UserRole + 12
_NO_INDEX = QModelIndex()  # Qt's default "no parent" argument: an invalid index, never modified
ProblemRole = Qt.ItemDataRole.UserRole + 13


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


_SORT_KEYS = [
    lambda n: n.path.lower(),
    lambda n: n.status,
    lambda n: n.chunks,
    lambda n: n.vectors,
    lambda n: n.size,
    lambda n: n.mtime,
    lambda n: n.indexed_at,
    lambda n: n.reason,
]


@dataclass
class TreeSpec:
    """How to shape the tree: filter text, problems only, sort column/order."""

    needle: str = ""
    problems_only: bool = False
    sort_col: int = C_NAME
    descending: bool = False


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


def build_tree(docs: list[DocumentInfo], outcomes: dict[str, FileOutcome], spec: TreeSpec) -> _Node:
    """Group, filter and sort documents into a folder tree. Pure Python (no Qt): safe on a worker thread,
    and fast enough (a few ms per thousand files) to run on the UI thread for a sort or filter change."""
    root = _Node("")
    folders: dict[str, _Node] = {}
    needle = spec.needle.lower().strip()
    for d in docs:
        out = outcomes.get(d.path)
        status = d.status
        reason = d.error or ""
        if out is not None and out.status == STATUS_UNCHANGED and d.status == STATUS_INDEXED:
            status = STATUS_UNCHANGED
        elif out is not None and out.status in (STATUS_SKIPPED, STATUS_FAILED) and not reason:
            reason = out.reason
        problem = d.status in (STATUS_FAILED, STATUS_SKIPPED)
        if spec.problems_only and not problem:
            continue
        if needle and needle not in f"{d.path} {status} {reason}".lower():
            continue
        folder = os.path.dirname(d.path)
        fnode = folders.get(folder)
        if fnode is None:
            fnode = folders[folder] = _Node(folder)
        fnode.children.append(_Node(d.path, d, fnode, status=status, reason=reason, chunks=d.chunks,
                                    vectors=d.vectors, size=d.size, mtime=d.mtime, indexed_at=d.indexed_at,
                                    problems=int(problem)))
    names = set(folders)
    counts: dict[str, list[int]] = {f: [0, 0, 0] for f in folders}  # files, failed, skipped (rolled up)
    for path in sorted(folders, key=len):  # parents before children
        fnode = folders[path]
        parent_path = _folder_parent(path, names)
        fnode.parent = folders[parent_path] if parent_path else root
        fnode.parent.children.append(fnode)
    for path, fnode in sorted(folders.items(), key=lambda kv: -len(kv[0])):  # deepest first: roll up
        files = [c for c in fnode.children if c.doc is not None]
        c = counts[path]
        c[0] += len(files)
        c[1] += sum(1 for f in files if f.status == STATUS_FAILED)
        c[2] += sum(1 for f in files if f.status == STATUS_SKIPPED)
        for f in files:
            fnode.chunks += f.chunks
            fnode.vectors += f.vectors
            fnode.size += f.size
            fnode.mtime = max(fnode.mtime, f.mtime)
            fnode.indexed_at = max(fnode.indexed_at, f.indexed_at)
            fnode.problems += f.problems
        bits = [f"{c[0]:,} file{'s' if c[0] != 1 else ''}"]
        if c[1]:
            bits.append(f"{c[1]} failed")
        if c[2]:
            bits.append(f"{c[2]} skipped")
        fnode.status = " · ".join(bits)
        up = fnode.parent
        if up is not None and up is not root:
            pc = counts[up.path]
            pc[0], pc[1], pc[2] = pc[0] + c[0], pc[1] + c[1], pc[2] + c[2]
            up.chunks += fnode.chunks
            up.vectors += fnode.vectors
            up.size += fnode.size
            up.mtime = max(up.mtime, fnode.mtime)
            up.indexed_at = max(up.indexed_at, fnode.indexed_at)
            up.problems += fnode.problems
    key = _SORT_KEYS[spec.sort_col] if 0 <= spec.sort_col < len(_SORT_KEYS) else _SORT_KEYS[0]

    def order(node: _Node) -> None:  # folders first, then files; each group in the chosen order
        subs = sorted((c for c in node.children if c.doc is None), key=key, reverse=spec.descending)
        files = sorted((c for c in node.children if c.doc is not None), key=key, reverse=spec.descending)
        node.children = subs + files
        for i, c in enumerate(node.children):
            c.row = i
        for c in subs:
            order(c)

    order(root)
    return root


def walk(node: _Node) -> Iterator[_Node]:
    """Every node below ``node``, depth first."""
    for c in node.children:
        yield c
        if c.doc is None:
            yield from walk(c)


class LibraryModel(QAbstractItemModel):
    """Two-level tree (folder → files). Sorting and filtering are done here, in plain Python, instead of in a
    QSortFilterProxyModel whose per-comparison data() calls into Python cost far more on big libraries."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.watch_states: dict[str, str] = {}  # library folder → watching / paused / missing / error
        self._root = _Node("")
        self._docs: list[DocumentInfo] = []
        self._outcomes: dict[str, FileOutcome] = {}
        self.spec = TreeSpec()

    # -- data in -----------------------------------------------------------------------------------------
    def set_documents(self, docs: list[DocumentInfo], outcomes: dict[str, FileOutcome] | None = None,
                      tree: _Node | None = None) -> None:
        """Replace the data; ``tree`` may be pre-built on a worker with ``build_tree(docs, outcomes, spec)``."""
        self._docs = list(docs)
        if outcomes is not None:
            self._outcomes = dict(outcomes)
        self._install(tree if tree is not None else build_tree(self._docs, self._outcomes, self.spec))

    def set_outcomes(self, outcomes: dict[str, FileOutcome]) -> None:
        """Last indexing run's outcome per path, so "unchanged" (a run result, not a stored status) shows."""
        self._outcomes = dict(outcomes)
        self._install(build_tree(self._docs, self._outcomes, self.spec))

    def set_spec(self, **changes: object) -> None:
        for k, v in changes.items():
            setattr(self.spec, k, v)
        self._install(build_tree(self._docs, self._outcomes, self.spec))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.spec.sort_col = column
        self.spec.descending = order == Qt.SortOrder.DescendingOrder
        self._install(build_tree(self._docs, self._outcomes, self.spec))

    def _install(self, root: _Node) -> None:
        # Always a reset: indexes hold raw pointers to _Node objects, so no index may outlive its tree.
        self.beginResetModel()
        old, self._root = self._root, root
        self.endResetModel()
        for n in list(walk(old)):  # break parent<->child cycles so the old tree is freed now, not by a GC pause
            n.parent = None
        for n in [old, *walk(old)]:
            n.children = []

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
        return len(self._docs)

    def documents(self) -> list[DocumentInfo]:
        return list(self._docs)

    def outcomes(self) -> dict[str, FileOutcome]:
        return dict(self._outcomes)

    # -- helpers -----------------------------------------------------------------------------------------
    def node(self, index: QModelIndex | QPersistentModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def file_paths(self, index: QModelIndex) -> list[str]:
        n = self.node(index)
        return [c.path for c in walk(n) if c.doc is not None] if n.doc is None else [n.path]

    def folder_indexes(self, node: _Node | None = None) -> Iterator[QModelIndex]:
        """Every folder's column-0 index, depth first, without touching file rows (folders come first among a
        node's children): cheap enough to run on each refresh of a big library."""
        for i, c in enumerate((node or self._root).children):
            if c.doc is not None:
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

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        n: _Node = index.internalPointer()
        col = index.column()
        is_file = n.doc is not None
        if role == Qt.ItemDataRole.DisplayRole:
            if col == C_NAME:
                if is_file:
                    return os.path.basename(n.path)
                if n.parent is not None and n.parent.path:  # a subfolder: relative to the folder above
                    return os.path.relpath(n.path, n.parent.path)
                return short_path(n.path, 70)
            if col == C_STATUS:
                watch = "" if is_file else self.watch_state(n.path)
                return f"{n.status} · {watch}" if watch else n.status
            if col == C_CHUNKS:
                return f"{n.chunks:,}" if (n.chunks or is_file) else ""
            if col == C_SEM:
                if not n.chunks:
                    return ""
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
