"""Prompt-context panel: the exact block that Copy puts on the clipboard, and the controls that shape it.

Shows, top to bottom: token budget + "tokens used / budget"; one checkbox row per result (include/exclude,
with its token cost and whether it fit); the block itself, read-only; the Copy button.

The checkbox rows are a view of the results model itself (through a proxy that only changes their text), so
"included in context" has one owner: the results model's CheckStateRole. Ticking a row here is the same
edit as pressing Space in the results list.

Why the block is shown read-only: what you see is byte-for-byte what gets pasted, so the user can trust it.
The block comes from ``MemoryService.build_context`` (run on a worker); this panel never re-formats it.
"""

from __future__ import annotations

import os

from PySide6.QtCore import (
    QAbstractItemModel,
    QIdentityProxyModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..models import WEAK, ContextReport, SearchResult
from ..settings_schema import field as schema_field
from .context_controller import budget_to_fit, fits_nothing_text
from .machine_labels import result_name
from .results_model import is_checked
from .style import monospace_font

COPY_SHORTCUT_TEXT = "Ctrl+Shift+C"
_RESULT_ROLE = Qt.ItemDataRole.UserRole + 1  # results_model.ResultRole (not imported: this panel takes any model)


class ContextRows(QIdentityProxyModel):
    """The results model seen as context rows: same rows and check state, text with each row's token cost."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fit: dict[int, int] = {}
        self._dropped: dict[int, int] = {}

    def set_report(self, report: ContextReport | None) -> None:
        self._fit = {i.chunk_id: i.tokens for i in report.items} if report else {}
        self._dropped = {i.chunk_id: i.tokens for i in report.dropped} if report else {}
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0, 0), self.index(n - 1, 0),
                                  [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.FontRole,
                                   Qt.ItemDataRole.CheckStateRole])

    def _state(self, r: SearchResult, included: bool) -> tuple[int | None, str | None]:
        cid = r.chunk_id
        tokens = self._fit.get(cid, self._dropped.get(cid))
        if not included:
            return tokens, "left out"
        return tokens, "fits" if cid in self._fit else ("did not fit" if cid in self._dropped else None)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return super().flags(index) | Qt.ItemFlag.ItemIsUserCheckable

    def _did_not_fit(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        r = super().data(index, _RESULT_ROLE)
        return (isinstance(r, SearchResult) and r.chunk_id in self._dropped
                and is_checked(super().data(index, Qt.ItemDataRole.CheckStateRole)))

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: object,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        # a half-ticked row ("did not fit") turns Checked in Qt's click cycle: the person meant "leave it out"
        if role == Qt.ItemDataRole.CheckStateRole and self._did_not_fit(index):
            value = Qt.CheckState.Unchecked
        return super().setData(index, value, role)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.CheckStateRole and self._did_not_fit(index):
            return Qt.CheckState.PartiallyChecked  # included, but not in the block: not a full tick
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.FontRole):
            return super().data(index, role)
        r = super().data(index, _RESULT_ROLE)
        if not isinstance(r, SearchResult):
            return super().data(index, role)
        included = is_checked(super().data(index, Qt.ItemDataRole.CheckStateRole))
        tokens, state = self._state(r, included)
        if role == Qt.ItemDataRole.ToolTipRole:
            if state == "did not fit":
                return (f"{r.source}\nIncluded, but it did not fit the token budget: raise the budget or exclude a "
                        "passage above it.")
            return r.source
        if role == Qt.ItemDataRole.FontRole:
            f = QFont()
            f.setItalic(state == "did not fit")
            return f
        return ContextPanel._row_text(r, tokens, state)


class ContextPanel(QWidget):
    budget_changed = Signal(int)
    copy_requested = Signal()
    include_weak_requested = Signal()  # "Include weak matches": tick every weak result at once

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        head = QHBoxLayout()
        title = QLabel("Prompt context")
        title.setObjectName("PanelTitle")
        head.addWidget(title)
        head.addStretch(1)
        budget_label = QLabel("&Budget")
        self.budget = QSpinBox()
        spec = schema_field("context.budget_tokens")  # the settings' range: the panel never clamps a valid budget
        self.budget.setRange(int(spec.minimum or 0), int(spec.maximum or 10_000_000))
        self.budget.setSingleStep(256)
        self.budget.setSuffix(" tokens")
        self.budget.setAccelerated(True)
        self.budget.setKeyboardTracking(False)
        self.budget.setAccessibleName("Token budget")
        budget_label.setBuddy(self.budget)
        head.addWidget(budget_label)
        head.addWidget(self.budget)
        self.meter = QLabel("0 / 0 tokens")
        self.meter.setObjectName("TokenMeter")
        head.addWidget(self.meter)
        lay.addLayout(head)

        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        self.rows = ContextRows(self)
        self.items = QListView()
        self.items.setModel(self.rows)
        self.items.setAccessibleName("Passages in the context (Space toggles)")
        self.items.setUniformItemSizes(True)
        self.items.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.items.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.items.setWordWrap(False)
        split.addWidget(self.items)
        self.block = QPlainTextEdit()
        self.block.setReadOnly(True)
        self.block.setFont(monospace_font())
        self.block.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.block.setPlaceholderText("Search, then copy the passages that fit the budget as one block for your chat.")
        self.block.setAccessibleName("Context block, exactly as copied")
        split.addWidget(self.block)
        split.setSizes([120, 300])
        lay.addWidget(split, 1)

        foot = QHBoxLayout()
        self.weak_btn = QPushButton("Include weak matches")
        self.weak_btn.setToolTip("Weak matches probably do not answer the query, so they start left out of the "
                                 "context. Include them all (or tick single ones above).")
        self.weak_btn.setAutoDefault(False)
        self.weak_btn.clicked.connect(self.include_weak_requested)
        self.weak_btn.hide()
        foot.addWidget(self.weak_btn)
        self.raise_btn = QPushButton("")
        self.raise_btn.setToolTip("Raise the token budget so the best included passage fits")
        self.raise_btn.setAutoDefault(False)
        self.raise_btn.clicked.connect(self.raise_budget)
        self.raise_btn.hide()
        foot.addWidget(self.raise_btn)
        self.dropped = QLabel("")
        self.dropped.setObjectName("Muted")
        self.dropped.setWordWrap(True)
        foot.addWidget(self.dropped, 1)
        self.copy_btn = QPushButton(f"Copy context  ({COPY_SHORTCUT_TEXT})")
        self.copy_btn.setToolTip("Put exactly this block on the clipboard")
        self.copy_btn.setEnabled(False)
        self.copy_btn.clicked.connect(self.copy_requested)
        foot.addWidget(self.copy_btn)
        lay.addLayout(foot)

        self.report: ContextReport | None = None
        self._flash = QTimer(self)
        self._flash.setSingleShot(True)
        self._flash.timeout.connect(lambda: self.copy_btn.setText(f"Copy context  ({COPY_SHORTCUT_TEXT})"))
        self.budget.valueChanged.connect(self.budget_changed)

    def set_budget(self, tokens: int) -> None:
        self.budget.blockSignals(True)
        self.budget.setValue(tokens)
        self.budget.blockSignals(False)

    def set_results_model(self, model: QAbstractItemModel) -> None:
        """Show one checkbox row per row of ``model`` (the results model, owner of CheckStateRole)."""
        self.rows.setSourceModel(model)
        model.modelReset.connect(self._update_weak)
        model.dataChanged.connect(lambda *_: self._update_weak())

    def weak_left_out(self) -> int:
        """Weak results that are not included (the *Include weak matches* button shows while there are any)."""
        n = 0
        src = self.rows.sourceModel()  # the results model: its check state is the proxy's whenever it is unchecked
        if src is None:
            return 0
        for row in range(src.rowCount()):
            idx = src.index(row, 0)
            r = idx.data(_RESULT_ROLE)
            if isinstance(r, SearchResult) and r.strength == WEAK and \
                    idx.data(Qt.ItemDataRole.CheckStateRole) in (Qt.CheckState.Unchecked, 0):
                n += 1
        return n

    def _update_weak(self) -> None:
        self.weak_btn.setVisible(self.weak_left_out() > 0)

    def set_report(self, report: ContextReport | None) -> None:
        self.report = report
        if report is None:
            self.rows.set_report(None)
            self.block.setPlainText("")
            self._placeholder("Search, then copy the passages that fit the budget as one block for your chat.")
            self.meter.setText(f"0 / {self.budget.value():,} tokens")
            self.dropped.setText("")
            self.copy_btn.setEnabled(False)
            self.raise_btn.hide()
            return
        self.rows.set_report(report)
        self.block.setPlainText(report.text)
        raise_to = budget_to_fit(report)
        self.raise_btn.setVisible(raise_to is not None)
        if raise_to is not None:  # the budget, not the matches, is why the block is empty: say so, offer the fix
            self.raise_btn.setText(f"&Raise budget to {raise_to:,}")
            self._placeholder(f"{fits_nothing_text(report)} Raise the budget to {raise_to:,} tokens, or "
                              "exclude that passage to try the next one.")
        elif not report.text and self.weak_left_out():
            self._placeholder("No strong matches: weak passages are left out of the context. "
                              "Tick one above, or Include weak matches, to paste it anyway.")
        elif not report.text:
            self._placeholder("Nothing is included: tick a result above to put it in the block.")
        self.meter.setText(f"{report.tokens_used:,} / {report.budget:,} tokens")
        self.meter.setProperty("over", "true" if report.tokens_used > report.budget else "false")
        self.meter.style().unpolish(self.meter)
        self.meter.style().polish(self.meter)
        self.copy_btn.setEnabled(bool(report.text))
        if raise_to is not None:
            self.dropped.setText("")  # the block's placeholder says it all, and the button offers the fix
        elif report.dropped:
            names = ", ".join(f"#{d.rank} {os.path.basename(d.source)}" for d in report.dropped[:6])
            more = f" and {len(report.dropped) - 6} more" if len(report.dropped) > 6 else ""
            self.dropped.setText(f"Did not fit the budget: {names}{more}")
        else:
            self.dropped.setText(f"{len(report.items)} passage{'s' if len(report.items) != 1 else ''} in rank order")

    def _placeholder(self, text: str) -> None:
        self.block.setPlaceholderText(text)
        self.block.viewport().update()  # Qt does not repaint an empty editor's placeholder on its own (garbled)

    def raise_budget(self) -> None:
        raise_to = budget_to_fit(self.report)
        if raise_to is not None:
            self.budget.setValue(raise_to)  # → budget_changed → re-pack

    def flash_copied(self) -> None:
        self.copy_btn.setText("Copied ✓")
        self._flash.start(1500)

    def text(self) -> str:
        return self.report.text if self.report else ""

    @staticmethod
    def _row_text(r: SearchResult, tokens: int | None, state: str | None) -> str:
        """``#3 · 211 tok · file.md · Heading › Sub`` — the numbers first, so eliding never hides them."""
        loc = r.location.describe()
        bits = [f"#{r.rank}"]
        if tokens is not None:
            bits.append(f"{tokens:,} tok")
        if state and state != "fits":
            bits.append(state.upper() if state == "did not fit" else state)
        if r.strength == WEAK:
            bits.append("weak")
        bits.append(result_name(r) + (f" · {loc}" if loc else ""))  # another machine's: "desktop: plan.md"
        return "  ".join(bits[:1]) + "  " + " · ".join(bits[1:])
