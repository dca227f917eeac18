"""Library: indexed folders and files with status, reason, chunk counts and dates; re-index, remove, reveal.

Why a hand-written tree model: a library of thousands of files is rebuilt in one beginResetModel/endResetModel
with plain Python lists (no per-cell QStandardItem allocation), so refreshing during indexing stays cheap.
Files are grouped by folder as a real tree: a folder sits under the nearest folder above it that holds files
(named relative to it, e.g. ``advanced/security``), with its counts rolled up into every folder above.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..models import DocumentInfo, FileOutcome
from .formatting import human_bytes, human_date, short_path
from .style import colors

COLUMNS = ["Name", "Status", "Chunks", "Semantic", "Size", "Modified", "Indexed", "Reason"]
C_NAME, C_STATUS, C_CHUNKS, C_SEM, C_SIZE, C_MOD, C_IDX, C_REASON = range(len(COLUMNS))
SortRole = Qt.ItemDataRole.UserRole + 10
FilterRole = Qt.ItemDataRole.UserRole + 11
PathRole = Qt.ItemDataRole.UserRole + 12
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
        if out is not None and out.status == "unchanged" and d.status == "indexed":
            status = "unchanged"
        elif out is not None and out.status in ("skipped", "failed") and not reason:
            reason = out.reason
        problem = d.status in ("failed", "skipped")
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
        c[1] += sum(1 for f in files if f.status == "failed")
        c[2] += sum(1 for f in files if f.status == "skipped")
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

    def __init__(self, parent=None) -> None:
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

    def set_spec(self, **changes) -> None:
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
        holders = [r for r in self.watch_states if path == r or path.startswith(r.rstrip(os.sep) + os.sep)]
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
        return index.internalPointer() if index.isValid() else self._root  # type: ignore[return-value]

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
    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        p = self.node(parent)
        if 0 <= row < len(p.children) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, p.children[row])
        return QModelIndex()

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        n: _Node = index.internalPointer()
        p = n.parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
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
            if n.status == "failed" or (not is_file and "failed" in n.status):
                return colors()["error_text"]
            if n.status == "skipped":
                return colors()["muted"]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (C_CHUNKS, C_SEM, C_SIZE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class LibraryView(QWidget):
    reindex_requested = Signal(list)
    remove_requested = Signal(list)
    reveal_requested = Signal(str)
    open_requested = Signal(str)
    watch_pause_requested = Signal(str, bool)  # (library folder, pause?)
    compact_requested = Signal()  # "Compact and erase": the window calls start_compact(svc, runner)
    compact_finished = Signal(str, str)  # (message, level "info" | "error") for the window's banner

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 6, 0, 0)
        lay.setSpacing(6)
        bar = QHBoxLayout()
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter library by name, status or reason…")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.setAccessibleName("Filter the library")
        esc = QAction("Clear filter", self.filter_box)
        esc.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        esc.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        esc.triggered.connect(self.filter_box.clear)
        self.filter_box.addAction(esc)
        bar.addWidget(self.filter_box, 1)
        self.problems_only = QCheckBox("Problems only")
        bar.addWidget(self.problems_only)
        self.reindex_btn = QPushButton("Re-index")
        self.reindex_btn.setToolTip("Read the selected files again, even if unchanged (F5)")
        self.remove_btn = QPushButton("Remove from index…")
        self.remove_btn.setToolTip("Forget the selected files (Delete); the files on disk are not touched")
        self.reveal_btn = QPushButton("Reveal")
        self.reveal_btn.setToolTip("Show in the file manager")
        self.compact_btn = QPushButton("Compact and erase")
        self.compact_btn.setToolTip("Rebuild the database from what is indexed now, so nothing removed earlier "
                                    "survives in the file (VACUUM); waits for a running index job")
        for b in (self.reindex_btn, self.remove_btn, self.reveal_btn, self.compact_btn):
            b.setAutoDefault(False)
            bar.addWidget(b)
        lay.addLayout(bar)

        self.model = LibraryModel(self)
        self.proxy = self.model  # no proxy: the model sorts and filters itself
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(C_NAME, Qt.SortOrder.AscendingOrder)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        self.tree.doubleClicked.connect(self._double_clicked)
        self.tree.setAccessibleName("Library")
        hdr = self.tree.header()
        hdr.setStretchLastSection(True)
        hdr.setSectionResizeMode(C_NAME, QHeaderView.ResizeMode.Interactive)
        hdr.resizeSection(C_NAME, 320)
        for c, w in ((C_STATUS, 150), (C_CHUNKS, 70), (C_SEM, 80), (C_SIZE, 80), (C_MOD, 110), (C_IDX, 110)):
            hdr.resizeSection(c, w)

        self.empty = QLabel("Nothing indexed yet. Drop files or folders anywhere on this window.")
        self.empty.setWordWrap(True)
        self.empty.setObjectName("EmptyHint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.tree)
        lay.addWidget(self.stack, 1)

        self._expand_all_next = False
        self._saved: tuple[set[str], set[str], str | None] = (set(), set(), None)
        self.model.modelAboutToBeReset.connect(self._save_view_state)
        self.model.modelReset.connect(self._restore_view_state)
        self.filter_box.textChanged.connect(self._filter_changed)
        self.problems_only.toggled.connect(self._problems_toggled)
        self.reindex_btn.clicked.connect(lambda: self._emit_paths(self.reindex_requested))
        self.remove_btn.clicked.connect(self.ask_remove)
        self.reveal_btn.clicked.connect(self._reveal_current)
        self.compact_btn.clicked.connect(self.compact_requested.emit)
        self.tree.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.tree.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())

        # keyboard: Delete removes, F5 re-indexes (while the tree has focus)
        for text, key, slot in (("Remove from index", QKeySequence(QKeySequence.StandardKey.Delete), self.ask_remove),
                                ("Re-index", QKeySequence("F5"), lambda: self._emit_paths(self.reindex_requested))):
            a = QAction(text, self.tree)
            a.setShortcut(key)
            a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            a.triggered.connect(lambda _=False, slot=slot: slot())
            self.tree.addAction(a)
        self.confirm_box: QMessageBox | None = None
        self._update_buttons()

    def ask_remove(self) -> None:
        """Removing throws away chunks and vectors that take minutes to rebuild: ask first (Enter confirms,
        Esc keeps them). Window-modal and non-blocking, so the event loop (and indexing) goes on meanwhile."""
        paths = self.selected_paths()
        if not paths:
            return
        n = len(paths)
        what = f"“{os.path.basename(paths[0])}”" if n == 1 else f"{n:,} files"
        box = QMessageBox(QMessageBox.Icon.Question, "Remove from index?",
                          f"Remove {what} from the index?", QMessageBox.StandardButton.NoButton, self)
        box.setInformativeText("The files on disk are not touched. Searching will no longer find them until "
                               "you add them again (which reads and embeds them again).")
        remove = box.addButton("&Remove from index", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(remove)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        def finished(_result: int) -> None:
            self.confirm_box = None
            if box.clickedButton() is remove:
                self.remove_requested.emit(paths)

        box.finished.connect(finished)
        self.confirm_box = box
        box.open()

    def set_documents(self, docs: list[DocumentInfo], outcomes: dict[str, FileOutcome] | None = None,
                      tree: _Node | None = None) -> None:
        self._expand_all_next = self.model.document_count() == 0 and len(docs) <= 300
        self.model.set_documents(docs, outcomes, tree)
        self._update_empty()

    def _update_empty(self) -> None:
        """The tree, or a sentence saying why it is empty (nothing indexed, or nothing matches the filter)."""
        spec = self.model.spec
        if not self.model.document_count():
            self.empty.setText("Nothing indexed yet. Drop files or folders anywhere on this window.")
        elif self.model.rowCount() == 0:
            if spec.needle.strip() and spec.problems_only:
                self.empty.setText(f"No problem files match “{spec.needle.strip()}”.")
            elif spec.needle.strip():
                self.empty.setText(f"No files match “{spec.needle.strip()}”. Clear the filter (Esc) to see all.")
            else:
                self.empty.setText("No problems: every file was indexed.")
        self.stack.setCurrentWidget(self.tree if self.model.rowCount() else self.empty)

    def set_outcomes(self, outcomes: dict[str, FileOutcome]) -> None:
        self.model.set_outcomes(outcomes)

    def row_count_visible(self) -> int:
        return sum(1 for idx in self.model.indexes() if self.model.node(idx).doc is not None)

    def _save_view_state(self) -> None:
        self._saved = (self._expanded_paths(), self._selected_row_paths(), self._current_path())

    def _restore_view_state(self) -> None:
        expanded, selected, current = getattr(self, "_saved", (set(), set(), None))
        self._restore_expanded(expanded, expand_all=self._expand_all_next or bool(self.model.spec.needle)
                               or self.model.spec.problems_only)
        self._expand_all_next = False
        self._restore_selection(selected, current)
        self._update_buttons()

    # refreshes (every second while indexing) must not lose what the user selected or expanded
    def _selected_row_paths(self) -> set[str]:
        return {idx.data(PathRole) for idx in self.tree.selectionModel().selectedRows(0)}

    def _current_path(self) -> str | None:
        idx = self.tree.currentIndex()
        return idx.sibling(idx.row(), 0).data(PathRole) if idx.isValid() else None

    def _restore_selection(self, paths: set[str], current: str | None) -> None:
        if not paths and not current:
            return
        sm = self.tree.selectionModel()
        flags = sm.SelectionFlag.Select | sm.SelectionFlag.Rows
        for idx in self.model.indexes():
            p = self.model.node(idx).path  # not idx.data(): no Python data() call per row
            if p == current:
                sm.setCurrentIndex(idx, sm.SelectionFlag.NoUpdate)
            if p in paths:
                sm.select(idx, flags)

    def _folders(self) -> Iterator[QModelIndex]:
        return self.model.folder_indexes()

    def _expanded_paths(self) -> set[str]:
        return {self.model.node(idx).path for idx in self._folders() if self.tree.isExpanded(idx)}

    def _restore_expanded(self, paths: set[str], expand_all: bool = False) -> None:
        for idx in self._folders():
            if expand_all or self.model.node(idx).path in paths:
                self.tree.expand(idx)

    def selected_paths(self) -> list[str]:
        out: list[str] = []
        for idx in self.tree.selectionModel().selectedRows(0):
            for p in self.model.file_paths(idx):
                if p not in out:
                    out.append(p)
        return out

    def row_texts(self) -> list[str]:
        """Every visible file row as "name | status | reason" (tests and accessibility dumps)."""
        out = []
        for idx in self.model.indexes():
            if self.model.node(idx).doc is None:
                continue
            cells = [idx.sibling(idx.row(), col).data() or "" for col in range(len(COLUMNS))]
            out.append(" | ".join([cells[C_NAME], cells[C_STATUS], cells[C_CHUNKS], cells[C_REASON]]))
        return out

    def start_compact(self, svc, runner) -> None:
        """Run ``svc.compact()`` on one of ``runner``'s worker threads (it rewrites the whole file: seconds to
        minutes on a big library); the button says so meanwhile and ``compact_finished`` carries the outcome."""
        if not self.compact_btn.isEnabled():
            return
        self.compact_btn.setEnabled(False)
        self.compact_btn.setText("Compacting…")

        def finish(message: str, level: str) -> None:
            self.compact_btn.setText("Compact and erase")
            self.compact_btn.setEnabled(True)
            self.compact_finished.emit(message, level)

        def done(result) -> None:
            before, after = result
            finish(f"Compacted the library: {human_bytes(before)} → {human_bytes(after)}. Text removed from the "
                   "index is no longer in the database file.", "info")

        runner.submit(svc.compact, name="compact", on_done=done,
                      on_error=lambda exc, _tb: finish(f"Compacting the library failed: {exc}", "error"))

    def _filter_changed(self, text: str) -> None:
        self.model.set_spec(needle=text)
        self._update_empty()

    def _problems_toggled(self, on: bool) -> None:
        self.model.set_spec(problems_only=on)
        self._update_empty()

    def _update_buttons(self) -> None:
        has = bool(self.tree.selectionModel().selectedRows(0))
        for b in (self.reindex_btn, self.remove_btn):
            b.setEnabled(has)
        self.reveal_btn.setEnabled(self.tree.currentIndex().isValid())

    def _emit_paths(self, sig: Signal) -> None:  # type: ignore[type-arg]
        paths = self.selected_paths()
        if paths:
            sig.emit(paths)

    def _reveal_current(self) -> None:
        idx = self.tree.currentIndex()
        if idx.isValid():
            self.reveal_requested.emit(self.proxy.index(idx.row(), 0, idx.parent()).data(PathRole))

    def _double_clicked(self, idx: QModelIndex) -> None:
        path = self.proxy.index(idx.row(), 0, idx.parent()).data(PathRole)
        if path and os.path.isfile(path):
            self.open_requested.emit(path)

    def _menu(self, pos) -> None:
        idx = self.tree.indexAt(pos)
        if not idx.isValid():
            return
        path = self.proxy.index(idx.row(), 0, idx.parent()).data(PathRole)
        m = QMenu(self)
        if os.path.isfile(path):
            m.addAction("Open", lambda: self.open_requested.emit(path))
        m.addAction("Reveal in file manager", lambda: self.reveal_requested.emit(path))
        m.addSeparator()
        m.addAction("Re-index", lambda: self._emit_paths(self.reindex_requested))
        m.addAction("Remove from index…", self.ask_remove)
        root = self.model.watch_root(path)
        if root is not None:
            paused = self.model.watch_states[root] == "paused"
            m.addAction(f"{'Resume' if paused else 'Pause'} watching {os.path.basename(root) or root}",
                        lambda: self.watch_pause_requested.emit(root, not paused))
        m.addSeparator()
        m.addAction("Compact and erase…", self.compact_requested.emit).setEnabled(self.compact_btn.isEnabled())
        m.exec(self.tree.viewport().mapToGlobal(pos))
