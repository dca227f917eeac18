"""Prompt-context panel: the exact block that Copy puts on the clipboard, and the controls that shape it.

Shows, top to bottom: token budget + "tokens used / budget"; one checkbox row per result (include/exclude,
with its token cost and whether it fit); the block itself, read-only; the Copy button.

Why the block is shown read-only: what you see is byte-for-byte what gets pasted, so the user can trust it.
The block comes from ``MemoryService.build_context`` (run on a worker); this panel never re-formats it.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..models import ContextReport, SearchResult
from .style import monospace_font

COPY_SHORTCUT_TEXT = "Ctrl+Shift+C"


class ContextPanel(QWidget):
    budget_changed = Signal(int)
    include_toggled = Signal(int, bool)  # chunk_id, included
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
        self.budget.setRange(64, 200_000)
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
        self.items = QListWidget()
        self.items.setAccessibleName("Passages in the context (Space toggles)")
        self.items.setUniformItemSizes(True)
        self.items.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.items.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.items.setWordWrap(False)
        self.items.itemChanged.connect(self._on_item_changed)
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
        self.weak_btn.setToolTip("Weak matches probably do not answer the query, so they start excluded. "
                                 "Include them all (or tick single ones above).")
        self.weak_btn.setAutoDefault(False)
        self.weak_btn.clicked.connect(self.include_weak_requested)
        self.weak_btn.hide()
        foot.addWidget(self.weak_btn)
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
        self._updating = False
        self._flash = QTimer(self)
        self._flash.setSingleShot(True)
        self._flash.timeout.connect(lambda: self.copy_btn.setText(f"Copy context  ({COPY_SHORTCUT_TEXT})"))
        self.budget.valueChanged.connect(self.budget_changed)

    def set_budget(self, tokens: int) -> None:
        self.budget.blockSignals(True)
        self.budget.setValue(tokens)
        self.budget.blockSignals(False)

    def set_results(self, results: list[SearchResult], included: list[bool]) -> None:
        """One checkbox row per result; token costs arrive later with the report."""
        self._updating = True
        self.items.clear()
        self.weak_btn.setVisible(any(r.strength == "weak" and not inc for r, inc in zip(results, included)))
        for r, inc in zip(results, included):
            it = QListWidgetItem(self._row_text(r, None, None))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if inc else Qt.CheckState.Unchecked)
            it.setData(Qt.ItemDataRole.UserRole, r.chunk_id)
            it.setData(Qt.ItemDataRole.UserRole + 1, r)
            it.setToolTip(r.source)
            self.items.addItem(it)
        self._updating = False
        if not results:
            self.set_report(None)

    def set_included(self, chunk_id: int, on: bool) -> None:
        self._updating = True
        weak_left = False
        for i in range(self.items.count()):
            it = self.items.item(i)
            if it.data(Qt.ItemDataRole.UserRole) == chunk_id:
                it.setData(Qt.ItemDataRole.UserRole + 2, "")
                it.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            r = it.data(Qt.ItemDataRole.UserRole + 1)
            weak_left |= r.strength == "weak" and it.checkState() == Qt.CheckState.Unchecked
        self.weak_btn.setVisible(weak_left)
        self._updating = False

    def set_report(self, report: ContextReport | None) -> None:
        self.report = report
        if report is None:
            self.block.setPlainText("")
            self.block.setPlaceholderText(
                "Search, then copy the passages that fit the budget as one block for your chat.")
            self.meter.setText(f"0 / {self.budget.value():,} tokens")
            self.dropped.setText("")
            self.copy_btn.setEnabled(False)
            return
        self.block.setPlainText(report.text)
        if not report.text and self.weak_btn.isVisible():
            self.block.setPlaceholderText("No strong matches: weak passages are left out of the context. "
                                          "Tick one above, or Include weak matches, to paste it anyway.")
        self.meter.setText(f"{report.tokens_used:,} / {report.budget:,} tokens")
        self.meter.setProperty("over", "true" if report.tokens_used > report.budget else "false")
        self.meter.style().unpolish(self.meter)
        self.meter.style().polish(self.meter)
        self.copy_btn.setEnabled(bool(report.text))
        fit = {i.chunk_id: i.tokens for i in report.items}
        dropped = {i.chunk_id: i.tokens for i in report.dropped}
        self._updating = True
        for i in range(self.items.count()):
            it = self.items.item(i)
            cid = it.data(Qt.ItemDataRole.UserRole)
            r: SearchResult = it.data(Qt.ItemDataRole.UserRole + 1)
            excluded = it.checkState() == Qt.CheckState.Unchecked
            tokens = fit.get(cid, dropped.get(cid))
            state = "excluded" if excluded else ("fits" if cid in fit else ("did not fit" if cid in dropped else None))
            it.setText(self._row_text(r, tokens, state))
            f = QFont(self.items.font())
            f.setItalic(state == "did not fit")
            it.setFont(f)
            # included but not in the block: a half tick, not a full one (it is not what gets pasted)
            it.setData(Qt.ItemDataRole.UserRole + 2, "partial" if state == "did not fit" else "")
            if state == "did not fit":
                it.setCheckState(Qt.CheckState.PartiallyChecked)
                it.setToolTip(f"{r.source}\nIncluded, but it did not fit the token budget: raise the budget or "
                              "exclude a passage above it.")
            elif not excluded:
                it.setCheckState(Qt.CheckState.Checked)
                it.setToolTip(r.source)
        self._updating = False
        if report.dropped:
            names = ", ".join(f"#{d.rank} {os.path.basename(d.source)}" for d in report.dropped[:6])
            more = f" and {len(report.dropped) - 6} more" if len(report.dropped) > 6 else ""
            self.dropped.setText(f"Did not fit the budget: {names}{more}")
        else:
            self.dropped.setText(f"{len(report.items)} passage{'s' if len(report.items) != 1 else ''} in rank order")

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
        if r.strength == "weak":
            bits.append("weak")
        bits.append(os.path.basename(r.source) + (f" · {loc}" if loc else ""))
        return "  ".join(bits[:1]) + "  " + " · ".join(bits[1:])

    def _on_item_changed(self, it: QListWidgetItem) -> None:
        if self._updating:
            return
        # a click on a half-ticked ("did not fit") row turns it Checked in Qt's cycle: the person meant "exclude"
        cid = int(it.data(Qt.ItemDataRole.UserRole))
        was_partial = it.data(Qt.ItemDataRole.UserRole + 2) == "partial"
        on = it.checkState() == Qt.CheckState.Checked and not was_partial
        if was_partial:
            self._updating = True
            it.setData(Qt.ItemDataRole.UserRole + 2, "")
            it.setCheckState(Qt.CheckState.Unchecked)
            self._updating = False
        self.include_toggled.emit(cid, on)
