"""Drag-and-drop: turning drops into local paths, the empty state and the overlay shown while dragging.

The window must accept drops *anywhere*, including over child widgets that have their own drop handling (a
QLineEdit would happily paste a file URL as text): :func:`route_drops_to` hands every drag to the window.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..paths import normalise
from .search_view import KIND_LABELS


def formats_sentence() -> str:
    """Every kind of file the app reads, from the Kind filter's list (one list: a new format shows up in both):
    "Markdown, text, code, PDF, Word / ODF / RTF, slides, e-books and web pages"."""
    labels = [label if label == "Markdown" or any(c.isupper() for c in label[1:]) else label.lower()
              for kind, label in KIND_LABELS if kind]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


def local_paths(mime: QMimeData | None) -> list[str]:
    """Existing local files/folders in a drag's mime data (web URLs and missing paths are ignored)."""
    if mime is None or not mime.hasUrls():
        return []
    out: list[str] = []
    for url in mime.urls():
        if url.isLocalFile():
            p = normalise(url.toLocalFile())
            if os.path.exists(p) and p not in out:
                out.append(p)
    return out


def route_drops_to(window: QWidget) -> int:
    """Make every widget inside ``window`` pass file drags up to it; returns how many widgets were changed.

    Qt delivers a drag to the innermost widget under the cursor that accepts drops, else to its nearest ancestor
    that does. Text fields and item views accept drops by default (a QLineEdit would paste a file URL as text),
    so switching that off on every descendant sends every drag, anywhere on the window, to the window's own
    dragEnterEvent/dropEvent. (An application-wide Python event filter would do the same but costs a Python
    call, and a GIL hand-over from the indexing thread, for every event of every widget: it stalled repaints
    by hundreds of milliseconds while indexing.)
    """
    changed = 0
    for w in window.findChildren(QWidget):
        if w.acceptDrops() and not w.isWindow():
            w.setAcceptDrops(False)
            changed += 1
    window.setAcceptDrops(True)
    return changed


class EmptyState(QFrame):
    """The first thing a new user sees: a big dashed drop target with Add buttons."""

    add_files = Signal()
    add_folder = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(32, 32, 32, 32)
        lay.addStretch(1)
        self.icon = QLabel("⇩")
        self.icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        f = self.icon.font()
        f.setPointSizeF(max(f.pointSizeF(), 9) * 3.2)
        self.icon.setFont(f)
        self.icon.setObjectName("EmptyHint")
        lay.addWidget(self.icon)
        self.title = QLabel("Drop files or folders here to start")
        self.title.setObjectName("EmptyTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.title)
        self.hint = QLabel(
            f"{formats_sentence()} become a private, searchable memory.\n"
            "Everything stays on this computer, in one database file."
        )
        self.hint.setObjectName("EmptyHint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        lay.addWidget(self.hint)
        row = QHBoxLayout()
        row.addStretch(1)
        self.files_btn = QPushButton("Add files…")
        self.folder_btn = QPushButton("Add folder…")
        self.files_btn.clicked.connect(self.add_files)
        self.folder_btn.clicked.connect(self.add_folder)
        row.addWidget(self.files_btn)
        row.addWidget(self.folder_btn)
        row.addStretch(1)
        lay.addSpacing(8)
        lay.addLayout(row)
        lay.addStretch(2)

    def set_dragging(self, on: bool) -> None:
        self.setProperty("dragging", "true" if on else "false")
        self.style().unpolish(self)
        self.style().polish(self)


class DropOverlay(QFrame):
    """Translucent frame over the whole window while files are dragged over it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("DropOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        lay = QVBoxLayout(self)
        self.label = QLabel("Drop to add to your memory")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.label)
        self.hide()

    def cover(self) -> None:
        p = self.parentWidget()
        if p is not None:
            self.setGeometry(p.rect().adjusted(8, 8, -8, -8))
        self.raise_()
        self.show()


class FileDropTarget:
    """Mixin for the main window: drags of local files anywhere on it show the overlay, a drop indexes them, and
    the two "Add…" dialogs feed the same place. Needs ``overlay`` (DropOverlay), ``empty_state`` (EmptyState) and
    ``add_paths(paths)``; put it before the Qt base class."""

    overlay: DropOverlay
    empty_state: EmptyState

    def add_paths(self, paths: list[str], force: bool = False) -> None:
        raise NotImplementedError

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if local_paths(e.mimeData()):
            e.acceptProposedAction()
            self.overlay.cover()
            self.empty_state.set_dragging(True)

    def dragMoveEvent(self, e: QDragMoveEvent) -> None:
        if local_paths(e.mimeData()):
            e.acceptProposedAction()

    def dragLeaveEvent(self, e: QDragLeaveEvent) -> None:
        self._drag_left()

    def dropEvent(self, e: QDropEvent) -> None:
        paths = local_paths(e.mimeData())
        self._drag_left()
        if paths:
            e.acceptProposedAction()
            self.add_paths(paths)

    def _drag_left(self) -> None:
        self.overlay.hide()
        self.empty_state.set_dragging(False)

    def choose_files(self) -> None:
        parent = self if isinstance(self, QWidget) else None
        files, _ = QFileDialog.getOpenFileNames(
            parent, "Add files to your memory", str(Path.home()),
            "Documents (*.md *.markdown *.txt *.pdf *.py *.rs *.js *.ts *.go *.java *.c *.cpp *.h *.rst);;"
            "All files (*)")
        if files:
            self.add_paths(files)

    def choose_folder(self) -> None:
        parent = self if isinstance(self, QWidget) else None
        d = QFileDialog.getExistingDirectory(parent, "Add a folder to your memory", str(Path.home()))
        if d:
            self.add_paths([d])
