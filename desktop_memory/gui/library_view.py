"""Library tab: the indexed folders and files (gui/library_model.py, paged in as folders open) with a filter,
"Problems only", and re-index, remove (confirmed), reveal, open and "Compact and erase" actions.

Removal is final (issue 30): a folder row removes the folder (a library folder leaves the library, a folder inside
one is excluded), whatever is expanded or selected under it; excluded paths are listed as such, with "Include
again"."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal, SignalInstance
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

from ..errors import Cancelled
from ..models import FileOutcome, IndexProgress, LibraryListing
from ..paths import is_inside
from ..service_api import MemoryApi
from .formatting import human_bytes
from .library_model import LibraryModel, PathRole
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
    walk,
)
from .removal_words import removal_what, wide_enough_for_title
from .tasks import TaskRunner

STATUS_MAX_WIDTH = 420  # px: beyond it the tooltip has the rest
EXPAND_ALL_MAX_FOLDERS = 30  # a filtered big library opens its matching folders only when there are this few


COMPACT_TIP = ("Rebuild the database from what is indexed now, so nothing removed earlier survives in the file "
               "(VACUUM); in the background, search keeps working; press again to cancel")


class LibraryView(QWidget):
    reindex_requested = Signal(list)
    remove_requested = Signal(list)
    include_requested = Signal(list)  # excluded paths the person wants back (read again, like a drop)
    reveal_requested = Signal(str)
    open_requested = Signal(str)
    watch_pause_requested = Signal(str, bool)  # (library folder, pause?)
    compact_requested = Signal()  # "Compact and erase": the window calls start_compact(svc, runner)
    compact_finished = Signal(str, str)  # (message, level "info" | "error") for the window's banner
    _compact_progress = Signal(int)  # percent, from the compaction's worker thread

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
        self.include_btn = QPushButton("Include again")
        self.include_btn.setToolTip("Bring the selected excluded files or folders back into the library (read again)")
        self.include_btn.setVisible(False)  # shown only while an excluded row is selected
        self.reveal_btn = QPushButton("Reveal")
        self.reveal_btn.setToolTip("Show in the file manager")
        self.compact_btn = QPushButton("Compact and erase")
        self.compact_btn.setToolTip(COMPACT_TIP)
        for b in (self.reindex_btn, self.remove_btn, self.include_btn, self.reveal_btn, self.compact_btn):
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
        self._fetch_timer = QTimer(self)
        self._fetch_timer.setSingleShot(True)
        self._fetch_timer.setInterval(0)
        self._fetch_timer.timeout.connect(self._fetch_visible)
        self.tree.verticalScrollBar().valueChanged.connect(lambda _v: self._fetch_timer.start())
        self._open: set[str] = set()  # keys of the folders open on screen (expanded / collapsed keep it)
        self.tree.expanded.connect(self._folder_opened)
        self.tree.collapsed.connect(lambda idx: self._open.discard(self.model.node(idx).key))
        self.model.modelAboutToBeReset.connect(self._open.clear)  # the restore expands again
        self.model.rowsInserted.connect(lambda *_: self._fetch_timer.start())
        self.model.modelReset.connect(self._fetch_timer.start)
        self.model.modelAboutToBeReset.connect(self._save_view_state)
        self.model.modelReset.connect(self._restore_view_state)
        self.filter_box.textChanged.connect(self._filter_changed)
        self.problems_only.toggled.connect(self._problems_toggled)
        self.reindex_btn.clicked.connect(lambda: self._emit_paths(self.reindex_requested))
        self.remove_btn.clicked.connect(self.ask_remove)
        self.include_btn.clicked.connect(self.include_selected)
        self.reveal_btn.clicked.connect(self._reveal_current)
        self.compact_btn.clicked.connect(self.compact_requested.emit)
        self._compact_cancel: threading.Event | None = None  # set while a compaction runs: pressing cancels it
        self._compact_progress.connect(self._show_compact_progress)
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
        paths = self.selected_removal_paths()
        if not paths:
            return
        n = self.selected_file_count()
        box = QMessageBox(QMessageBox.Icon.Question, "Remove from index",
                          f"Remove {removal_what(self.tree, n)} from the index?",
                          QMessageBox.StandardButton.NoButton, self)
        wide_enough_for_title(box)
        if all(p in self.model.watch_states for p in paths):  # library folders: unregistered, no excluded row
            box.setInformativeText("The files on disk are not touched. The folder leaves the library: it is no "
                                   "longer watched, and only adding it again (drop it, or File → Add folder) reads "
                                   "and embeds it again.")
        else:
            box.setInformativeText("The files on disk are not touched. They stay out of the library: changes to "
                                   "them are not read again until you choose Include again (or add them again), "
                                   "which reads and embeds them again.")
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

    def set_listing(self, listing: LibraryListing, outcomes: dict[str, FileOutcome] | None = None,
                    tree: _Node | None = None) -> None:
        self._expand_all_next = (self.model.document_count() == 0 and listing.complete
                                 and listing.total_documents <= 300)
        self.model.set_listing(listing, outcomes, tree)
        self._update_empty()

    def _fetch_visible(self) -> None:
        """Page in the next files of every open folder whose last loaded row is on screen or within a screen of
        it: paging follows the scroll, and never reads a folder nobody looks at."""
        height = self.tree.viewport().height()
        for key in list(self._open):  # only the open folders: a scroll never walks every folder of the library
            idx = self.model.folder_index(key)
            if not idx.isValid() or not self.tree.isExpanded(idx):
                continue
            n = self.model.node(idx)
            if not self.model.wants_more(n):
                continue
            if n.loaded == 0:
                self.model.fetch_next(idx)
                continue
            last = self.tree.visualRect(self.model.index(len(n.children) - 1, 0, idx))
            if last.isValid() and last.top() < 2 * height:
                self.model.fetch_next(idx)

    def _folder_opened(self, idx: QModelIndex) -> None:
        n = self.model.node(idx)
        if n.doc is None:
            self._open.add(n.key)
            self._fetch_timer.start()

    def expanded_folder_keys(self) -> set[str]:
        """The store keys of the folders open on screen (a refresh reloads their loaded files)."""
        return {self.model.node(idx).key for idx in self._folders() if self.tree.isExpanded(idx)}

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
        expanded, selected, current = self._saved
        filtered = bool(self.model.spec.needle.strip()) or self.model.spec.problems_only
        few = self.model.is_complete() or sum(1 for _ in self._folders()) <= EXPAND_ALL_MAX_FOLDERS
        self._restore_expanded(expanded, expand_all=self._expand_all_next or (filtered and few))
        self._expand_all_next = False
        self._restore_selection(selected, current)
        self._update_buttons()
        self.fit_status_column()

    def fit_status_column(self) -> None:
        """Widen Status to its longest folder line ("14 files · 6 failed · 8 skipped · watching") so it is never
        cut; it only grows (a width the person chose stays), up to STATUS_MAX_WIDTH."""
        fm = self.tree.fontMetrics()
        texts = [str(idx.siblingAtColumn(C_STATUS).data() or "") for idx in self._folders()]
        need = max((fm.horizontalAdvance(t) for t in texts), default=0) + 2 * fm.averageCharWidth() + 8
        hdr = self.tree.header()
        if need > hdr.sectionSize(C_STATUS):
            hdr.resizeSection(C_STATUS, min(need, STATUS_MAX_WIDTH))

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

    def selected_file_count(self) -> int:
        """How many files the selection stands for (a folder: all its matching files, loaded or not)."""
        nodes = [self.model.node(idx) for idx in self.tree.selectionModel().selectedRows(0)]
        chosen = {id(n) for n in nodes}

        def inside_chosen(n: _Node) -> bool:  # a row under a selected folder is counted with the folder
            p = n.parent
            while p is not None:
                if id(p) in chosen:
                    return True
                p = p.parent
            return False

        return sum((1 if n.doc is not None else n.files) for n in nodes if not inside_chosen(n))

    def selected_removal_paths(self) -> list[str]:
        """What Remove takes out: a selected folder row is the folder itself (LibraryModel.removal_paths); a row
        inside a selected folder goes with it."""
        out: list[str] = []
        for idx in self.tree.selectionModel().selectedRows(0):
            out += [p for p in self.model.removal_paths(idx) if p not in out]
        return [p for p in out if not any(q != p and is_inside(p, q) for q in out)]

    def selected_excluded_paths(self) -> list[str]:
        return [p for idx in self.tree.selectionModel().selectedRows(0) for p in self.model.excluded_paths(idx)]

    def include_selected(self) -> None:
        """Include again: the excluded rows selected are read again (named explicitly, which lifts them)."""
        paths = self.selected_excluded_paths()
        if paths:
            self.include_requested.emit(paths)

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

    def start_compact(self, svc: MemoryApi, runner: TaskRunner) -> None:
        """Run ``svc.compact()`` on one of ``runner``'s worker threads (it rewrites the whole file: seconds to
        minutes on a big library); meanwhile the button shows its progress and cancels it when pressed (SQLite rolls
        the rewrite back: the library is as it was); ``compact_finished`` carries the outcome."""
        if self._compact_cancel is not None:  # pressed again while it runs: Cancel
            self._compact_cancel.set()
            self.compact_btn.setText("Cancelling…")
            self.compact_btn.setEnabled(False)
            return
        cancel = self._compact_cancel = threading.Event()
        self.compact_btn.setText("Compacting… (press to cancel)")
        self.compact_btn.setToolTip("Compacting the library; press to cancel (the library stays as it was)")

        def finish(message: str, level: str) -> None:
            self._compact_cancel = None
            self.compact_btn.setText("Compact and erase")
            self.compact_btn.setToolTip(COMPACT_TIP)
            self.compact_btn.setEnabled(True)
            self.compact_finished.emit(message, level)

        def done(result: tuple[int, int]) -> None:
            before, after = result
            finish(f"Compacted the library: {human_bytes(before)} → {human_bytes(after)}. Text removed from the "
                   "index is no longer in the database file.", "info")

        def failed(exc: BaseException, _tb: str) -> None:
            if isinstance(exc, Cancelled):
                finish("Compacting cancelled: the library is as it was.", "info")
            else:
                finish(f"Compacting the library failed: {exc}", "error")

        def progress(p: IndexProgress) -> None:  # on the worker thread: the signal crosses to the UI thread
            self._compact_progress.emit(p.files_done // 10 if p.phase == "compact" else 0)

        runner.submit(lambda: svc.compact(progress=progress, cancel=cancel), name="compact", on_done=done,
                      on_error=failed)

    def _show_compact_progress(self, percent: int) -> None:
        if self._compact_cancel is not None and not self._compact_cancel.is_set():
            self.compact_btn.setText(f"Compacting… {percent} % (press to cancel)")

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
        excluded = bool(self.selected_excluded_paths())
        self.include_btn.setVisible(excluded)
        self.include_btn.setEnabled(excluded)
        self.reveal_btn.setEnabled(self.tree.currentIndex().isValid())

    def _emit_paths(self, sig: SignalInstance) -> None:
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

    def _menu(self, pos: QPoint) -> None:
        idx = self.tree.indexAt(pos)
        if not idx.isValid():
            return
        path = self.proxy.index(idx.row(), 0, idx.parent()).data(PathRole)
        m = QMenu(self)
        if self.model.excluded_paths(idx):  # an excluded row: its one action is to come back
            m.addAction("Include again", self.include_selected)
            m.addAction("Reveal in file manager", lambda: self.reveal_requested.emit(path))
            m.exec(self.tree.viewport().mapToGlobal(pos))
            return
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


# the tree model's parts are imported from here by library_controller.py and tests
__all__ = ["LibraryView", "TreeSpec", "build_tree", "walk"]
