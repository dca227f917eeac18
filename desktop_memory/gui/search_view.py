"""The search bar: query box (search-as-you-type, debounced), backend selector and filters.

The bar only *asks* for a search (``search_requested``); the main window runs it on a worker on the "search"
channel, so a newer query always invalidates an older one.
"""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..config import BACKENDS
from ..models import SearchFilters
from ..paths import normalise

BACKEND_LABELS = {
    "hybrid": "Hybrid (keyword + semantic)",
    "keyword": "Keyword (FTS5)",
    "bm25": "BM25",
    "dense": "Semantic only",
}
KIND_LABELS = [("", "All kinds"), ("markdown", "Markdown"), ("text", "Text"), ("code", "Code"), ("pdf", "PDF"),
               ("document", "Word / ODF / RTF"), ("slides", "Slides"), ("ebook", "E-books"), ("html", "Web pages")]
AGE_CHOICES = [(0, "Any time"), (1, "Past day"), (7, "Past week"), (31, "Past month"), (365, "Past year")]
DEBOUNCE_MS = 220
MAX_RECENT = 12
# keys the query box keeps for itself; every other Ctrl/Alt combination goes to the window's shortcuts
EDITING_KEYS = (
    QKeySequence.StandardKey.Copy, QKeySequence.StandardKey.Cut, QKeySequence.StandardKey.Paste,
    QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo, QKeySequence.StandardKey.SelectAll,
    QKeySequence.StandardKey.MoveToNextWord, QKeySequence.StandardKey.MoveToPreviousWord,
    QKeySequence.StandardKey.SelectNextWord, QKeySequence.StandardKey.SelectPreviousWord,
    QKeySequence.StandardKey.DeleteEndOfWord, QKeySequence.StandardKey.DeleteStartOfWord,
    QKeySequence.StandardKey.MoveToStartOfLine, QKeySequence.StandardKey.MoveToEndOfLine,
    QKeySequence.StandardKey.SelectStartOfLine, QKeySequence.StandardKey.SelectEndOfLine,
)


class SearchBar(QWidget):
    search_requested = Signal()  # debounced, or immediate on Enter / filter change
    navigate = Signal(int)  # a Qt.Key the results list should handle (Up/Down/PageUp/PageDown)
    accept_current = Signal()  # kept for compatibility: Enter in the box searches, it never opens a file

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        row = QHBoxLayout()
        row.setSpacing(6)
        self.box = QLineEdit()
        self.box.setObjectName("SearchBox")
        self.box.setPlaceholderText("Search your memory…   (Ctrl+K)")
        self.box.setClearButtonEnabled(True)
        self.box.setAccessibleName("Search query")
        self.box.installEventFilter(self)
        row.addWidget(self.box, 1)
        # recent queries: a menu on this button, or ↓ in the empty search box
        self.recent_btn = QToolButton()
        self.recent_btn.setObjectName("RecentButton")
        self.recent_btn.setText("Recent ▾")  # its own arrow: the style's menu indicator overlapped the label
        self.recent_btn.setToolTip("Recent searches (↓ in the empty search box)")
        self.recent_btn.setAccessibleName("Recent searches")
        self.recent_btn.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.recent_menu = QMenu(self.recent_btn)
        self.recent_btn.setMenu(self.recent_menu)
        self._recent: list[str] = []
        self._rebuild_recent()
        row.addWidget(self.recent_btn)
        self.backend = QComboBox()
        self.backend.setAccessibleName("Search backend")
        self.backend.setToolTip("Search backend (Ctrl+B cycles)")
        for b in BACKENDS:
            self.backend.addItem(BACKEND_LABELS.get(b, b), b)
        row.addWidget(self.backend)
        self.filter_btn = QToolButton()
        self.filter_btn.setText("Filters")
        self.filter_btn.setCheckable(True)
        self.filter_btn.setToolTip("Filter by kind, folder or date (Ctrl+Shift+F)")
        row.addWidget(self.filter_btn)
        outer.addLayout(row)

        self.filters_row = QWidget()
        fr = QHBoxLayout(self.filters_row)
        fr.setContentsMargins(0, 0, 0, 0)
        fr.setSpacing(6)
        kind_label = QLabel("&Kind")
        self.kind = QComboBox()
        for k, label in KIND_LABELS:
            self.kind.addItem(label, k)
        kind_label.setBuddy(self.kind)
        fr.addWidget(kind_label)
        fr.addWidget(self.kind)
        path_label = QLabel("&Path")
        self.path = QLineEdit()
        self.path.setPlaceholderText("folder, or a glob like */notes/*.md")
        self.path.setClearButtonEnabled(True)
        path_label.setBuddy(self.path)
        fr.addWidget(path_label)
        fr.addWidget(self.path, 1)
        age_label = QLabel("&Modified")
        self.age = QComboBox()
        for days, label in AGE_CHOICES:
            self.age.addItem(label, days)
        age_label.setBuddy(self.age)
        fr.addWidget(age_label)
        fr.addWidget(self.age)
        self.filters_row.setVisible(False)
        outer.addWidget(self.filters_row)
        self.filter_btn.toggled.connect(self._toggle_filters)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.search_requested)
        self._last_requested: tuple[object, ...] | None = None
        self.box.textChanged.connect(lambda _t: self._timer.start())
        self.path.textChanged.connect(lambda _t: self._timer.start())
        self.backend.currentIndexChanged.connect(lambda _i: self.request_now())
        self.kind.currentIndexChanged.connect(lambda _i: self._filters_changed())
        self.age.currentIndexChanged.connect(lambda _i: self._filters_changed())

    # -- values ------------------------------------------------------------------------------------------
    def query(self) -> str:
        return self.box.text().strip()

    def current_backend(self) -> str:
        return str(self.backend.currentData())

    def set_backend(self, name: str) -> None:
        i = self.backend.findData(name)
        if i >= 0:
            self.backend.blockSignals(True)
            self.backend.setCurrentIndex(i)
            self.backend.blockSignals(False)

    def cycle_backend(self) -> None:
        self.backend.setCurrentIndex((self.backend.currentIndex() + 1) % self.backend.count())

    def filters(self) -> SearchFilters:
        f = SearchFilters()
        kind = self.kind.currentData()
        if kind:
            f.kinds = (kind,)
        p = self.path.text().strip()
        if p:
            if any(ch in p for ch in "*?["):
                f.path_glob = p if p.startswith(("*", "/")) or os.path.isabs(p) else "*" + p
            else:
                f.path_prefix = normalise(p)
        days = int(self.age.currentData() or 0)
        if days:
            f.modified_since = time.time() - days * 86400
        return f

    def active_filter_count(self) -> int:
        return sum(map(bool, (self.kind.currentData(), self.path.text().strip(), self.age.currentData())))

    def state(self) -> dict[str, object]:
        """Persisted in settings.gui so filters survive a restart."""
        return {
            "filters_open": self.filter_btn.isChecked(),
            "kind": self.kind.currentData() or "",
            "path": self.path.text(),
            "age_days": int(self.age.currentData() or 0),
        }

    def restore(self, st: dict[str, object]) -> None:
        for w in (self.kind, self.path, self.age):
            w.blockSignals(True)
        i = self.kind.findData(st.get("kind", ""))
        self.kind.setCurrentIndex(max(0, i))
        self.path.setText(str(st.get("path", "")))
        age = st.get("age_days", 0) or 0
        i = self.age.findData(int(age) if isinstance(age, (int, float, str)) else 0)
        self.age.setCurrentIndex(max(0, i))
        for w in (self.kind, self.path, self.age):
            w.blockSignals(False)
        self.filter_btn.setChecked(bool(st.get("filters_open")) or self.active_filter_count() > 0)
        self._update_filter_label()

    # -- recent queries ----------------------------------------------------------------------------------
    def recent(self) -> list[str]:
        return list(self._recent)

    def set_recent(self, queries: list[str]) -> None:
        self._recent = [q for q in dict.fromkeys(str(q).strip() for q in queries) if q][:MAX_RECENT]
        self._rebuild_recent()

    def remember(self, query: str) -> None:
        """A query whose results were shown goes to the top of the recent list (once)."""
        q = query.strip()
        if q:
            self.set_recent([q, *[r for r in self._recent if r != q]])

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        for q in self._recent:
            a = self.recent_menu.addAction(q if len(q) <= 60 else q[:59] + "…")
            a.triggered.connect(lambda _=False, q=q: self.use_query(q))
        if self._recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear recent searches", lambda: self.set_recent([]))
        self.recent_btn.setEnabled(bool(self._recent))

    def use_query(self, q: str) -> None:
        self.box.setText(q)
        self.box.setFocus(Qt.FocusReason.OtherFocusReason)
        self.request_now()

    def show_recent(self) -> None:
        if self._recent:
            self.recent_menu.popup(self.box.mapToGlobal(self.box.rect().bottomLeft()))

    # -- behaviour ---------------------------------------------------------------------------------------
    def request_now(self) -> None:
        self._timer.stop()
        self.search_requested.emit()

    def focus_query(self) -> None:
        self.box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.box.selectAll()

    def _filters_changed(self) -> None:
        self._update_filter_label()
        self.request_now()

    def _update_filter_label(self) -> None:
        n = self.active_filter_count()
        self.filter_btn.setText(f"Filters ({n})" if n else "Filters")

    def _toggle_filters(self, on: bool) -> None:
        self.filters_row.setVisible(on)
        if on:
            self.kind.setFocus()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.box and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key == Qt.Key.Key_Down and not self.box.text() and self._recent:
                self.show_recent()
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
                self.navigate.emit(key)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                # a person pressing Enter "to search" must never launch an app: Enter searches now (the
                # results list's own Enter opens the selected file)
                self.request_now()  # the search's worker starts first; the recent menu is rebuilt meanwhile
                self.remember(self.query())
                return True
            if key == Qt.Key.Key_Escape and self.box.text():
                self.box.clear()
                return True
        if obj is self.box and event.type() == QEvent.Type.ShortcutOverride:
            # QLineEdit claims Ctrl+K (delete to end of line), Ctrl+E (end of line)… on X11 before the window's
            # shortcuts see them: let the window's shortcuts win, except for real editing keys
            assert isinstance(event, QKeyEvent)
            mods = event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                                        | Qt.KeyboardModifier.MetaModifier)
            if mods and not any(event.matches(k) for k in EDITING_KEYS):
                event.ignore()
                return True
        return super().eventFilter(obj, event)
