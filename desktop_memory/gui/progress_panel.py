"""The indexing progress area: files done / total, current file, chunks/s, ETA, Cancel; then a summary.

Why inline (not a progress dialog): indexing a big folder takes minutes, and the user should keep searching
meanwhile: documents are keyword-searchable as soon as they are extracted.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..models import STATUS_FAILED, FileOutcome, IndexProgress, IndexSummary
from .formatting import counted, human_duration, short_path

# One bar for the whole job, so it never falls back from 100 % to 0 % when embedding starts: reading files
# fills the first EXTRACT_SHARE of it, making vectors the rest. Units are per-mille.
EXTRACT_SHARE = 0.4
BAR_MAX = 1000
RESUME_HINT = "resume with Library → Embed missing vectors"


def problem_order(o: FileOutcome) -> tuple[int, str, str]:
    """Failures first (the ones to act on), then by file name ignoring case, then by full path."""
    return (0 if o.status == STATUS_FAILED else 1, os.path.basename(o.path).casefold(), o.path.casefold())


def bar_value(p: IndexProgress) -> int:
    """Where the job stands on the 0..BAR_MAX bar (see EXTRACT_SHARE)."""
    if p.phase == "scan":
        return 0
    files = (p.files_done / p.files_total) if p.files_total else 1.0
    if p.phase == "extract" or not p.chunks_to_embed:
        return int(BAR_MAX * EXTRACT_SHARE * min(1.0, files))
    embedded = min(1.0, p.chunks_embedded / p.chunks_to_embed)
    return int(BAR_MAX * (EXTRACT_SHARE + (1 - EXTRACT_SHARE) * embedded))


def unembedded(p: IndexProgress | None) -> int:
    """Passages this job wrote that still have no vector (as far as its last progress report knows)."""
    if p is None:
        return 0
    if p.chunks_to_embed:
        return max(0, p.chunks_to_embed - p.chunks_embedded)
    return max(0, p.chunks_written - p.chunks_embedded)


class ElidedLabel(QLabel):
    """A one-line label that elides in the middle instead of growing the window (long file paths)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = text
        self.elide_mode = Qt.TextElideMode.ElideMiddle  # ElideRight where the start matters most
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._elide()

    def _elide(self) -> None:
        fm = self.fontMetrics()
        w = max(40, self.width())
        super().setText(fm.elidedText(self._full, self.elide_mode, w))


def paused_text(missing: int) -> str:
    """The one sentence for embedding stopped by the person (the Resume button sits beside it)."""
    return (f"Embedding paused: {counted(missing, 'passage')} without vectors (keyword search finds them; semantic "
            "search does not yet) — Resume")


class ProgressPanel(QFrame):
    cancel_requested = Signal()
    resume_requested = Signal()
    closed = Signal()
    resume_shown = Signal()  # the panel now says a pause with its own Resume (the pause banner steps aside)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ProgressPanel")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(4)
        top = QHBoxLayout()
        self.title = QLabel("Indexing…")
        self.title.setObjectName("PanelTitle")
        top.addWidget(self.title)
        self.queued = QLabel("")
        self.queued.setObjectName("Muted")
        top.addWidget(self.queued)
        top.addStretch(1)
        self.problems_btn = QPushButton("Show problems")
        self.problems_btn.setCheckable(True)
        self.problems_btn.toggled.connect(self._toggle_problems)
        self.problems_btn.hide()
        top.addWidget(self.problems_btn)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop indexing (files done so far stay searchable)")
        self.cancel_btn.clicked.connect(self._on_cancel)
        top.addWidget(self.cancel_btn)
        self.resume_btn = QPushButton("Resume")
        self.resume_btn.setToolTip("Embed the passages still without vectors, in the background")
        self.resume_btn.clicked.connect(self._on_resume)
        self.resume_btn.hide()
        top.addWidget(self.resume_btn)
        self.close_btn = QPushButton("Close")
        self.close_btn.clicked.connect(self._on_close)
        self.close_btn.hide()
        top.addWidget(self.close_btn)
        lay.addLayout(top)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(8)
        lay.addWidget(self.bar)
        self.current = ElidedLabel("")
        self.current.setObjectName("Muted")
        lay.addWidget(self.current)
        self.detail = QLabel("")
        self.detail.setWordWrap(True)  # a long reason ("This index holds vectors from …") must not widen the window
        lay.addWidget(self.detail)
        self.problems = QTreeWidget()
        self.problems.setHeaderLabels(["File", "Status", "Reason"])
        self.problems.setRootIsDecorated(False)
        self.problems.setAlternatingRowColors(True)
        self.problems.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.problems.header().setStretchLastSection(True)
        self.problems.hide()
        lay.addWidget(self.problems)
        self.summary: IndexSummary | None = None
        self.searchable_files = 0  # files read by the job before this embedding (the title says so)
        # the library's vector count, from the same Stats as the status bar (one source for the number on screen)
        self.vectors: tuple[int, int] | None = None
        self.paused = False
        # the core reports per file / per embedding batch; a batch can take seconds on a slow machine, so the
        # elapsed time ticks here to show the job is alive
        self._clock = QElapsedTimer()
        self._last: IndexProgress | None = None
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._render_detail)
        self.hide()

    # -- running -----------------------------------------------------------------------------------------
    def start(self, n_paths: int, keep_bar: bool = False, what: str = "") -> None:
        """A new job. ``keep_bar``: it continues the previous one (the embedding after a read), so the bar
        stays where it is instead of starting over. ``what``: the line under the title (default: the drop)."""
        self.summary = None
        self.paused = False
        self.resume_btn.hide()
        self.title.setText("Preparing…")
        if not keep_bar:
            self.current.setText(what or f"{n_paths} item{'s' if n_paths != 1 else ''} dropped")
        self.detail.setText("")
        self.detail.show()  # finish() hides it when there is nothing to say; every new job shows it again
        if not keep_bar or self.bar.maximum() == 0:
            self.bar.setRange(0, 0)  # busy until the scan knows the total
        self.cancel_btn.show()
        self.cancel_btn.setEnabled(True)
        self.close_btn.hide()
        self.problems_btn.hide()
        self.problems_btn.setChecked(False)
        self.problems.hide()
        self._last = self._last if keep_bar else None
        if not keep_bar:
            self.searchable_files = 0
        self._clock.start()
        self._ticker.start()
        self.show()

    def set_queued(self, n: int) -> None:
        self.queued.setText(f"· {n} more queued" if n else "")

    def update_progress(self, p: IndexProgress) -> None:
        if p.phase == "scan":
            self.title.setText(f"Scanning… {counted(p.files_total, 'file')} found")
            self.bar.setRange(0, 0)
        else:
            if p.phase in ("extract", "embed") and p.files_done < p.files_total:
                self.title.setText(f"Reading {p.files_done:,} / {p.files_total:,} files")
            elif p.files_total:  # all files read; only vectors remain
                self.title.setText(f"Embedding · {p.files_done:,} / {p.files_total:,} files searchable by keyword")
            elif self.searchable_files:  # the embedding job after a read
                self.title.setText(f"Embedding · {counted(self.searchable_files, 'file')} searchable by keyword")
            else:
                self.title.setText("Embedding")
            self.bar.setRange(0, BAR_MAX)
            # monotonic within a job: a later report that knows of more chunks to embed never moves it back
            self.bar.setValue(max(self.bar.value() if self._last is not None else 0, bar_value(p)))
        if p.current:
            self.current.setText(p.current)
        self._last = p
        self._render_detail()

    def _render_detail(self) -> None:
        p = self._last
        if p is None:
            return
        bits = [f"{counted(p.chunks_written, 'chunk')} written this run"] if p.chunks_written or p.phase != "embed" \
            else []
        if self.vectors is not None and (p.chunks_to_embed or p.phase == "embed"):
            vectors, chunks = self.vectors  # the status bar's count (Stats), never a second, per-run one
            if p.phase == "embed" and p.chunks_to_embed and not p.current.startswith("building "):
                # while this run counts its passages ("496 of 3,008 this run"), the library's count is taken at the
                # same moment: what this run has left is all that is missing (Stats, read seconds earlier, said
                # "432/3,009" beside it: a QA walk)
                chunks = max(chunks, p.chunks_to_embed)
                vectors = chunks - max(0, p.chunks_to_embed - p.chunks_embedded)
            bits.append(f"semantic: {vectors:,}/{chunks:,} chunks embedded")
        if p.chunks_per_s:
            bits.append(f"{p.chunks_per_s:,.0f} chunks/s")
        if p.eta_s is not None and p.phase != "done":
            bits.append(f"ETA {human_duration(p.eta_s)}")
        elapsed = max(p.elapsed_s, self._clock.elapsed() / 1000 if self._clock.isValid() else 0.0)
        bits.append(f"elapsed {human_duration(elapsed)}")
        self.detail.setText(" · ".join(bits))

    def cancelling(self) -> None:
        self.cancel_btn.setEnabled(False)
        self.title.setText("Cancelling… (finishing the current file)")

    # -- finished ----------------------------------------------------------------------------------------
    def finish(self, s: IndexSummary) -> None:
        self._ticker.stop()
        self.summary = s
        head = "Cancelled" if s.cancelled else "Done"
        self.title.setText(f"{head} after {human_duration(s.elapsed_s)}" if s.cancelled
                           else f"{head} in {human_duration(s.elapsed_s)}")
        if not s.cancelled:  # a cancelled job keeps the bar where it stopped: it did not finish
            self.bar.setRange(0, BAR_MAX)
            self.bar.setValue(BAR_MAX)
        elif self.bar.maximum() == 0:
            self.bar.setRange(0, BAR_MAX)
            self.bar.setValue(0)
        parts = [f"{s.indexed:,} indexed", f"{s.unchanged:,} unchanged", f"{s.skipped:,} skipped",
                 f"{s.failed:,} failed"]
        if s.removed:
            parts.append(f"{s.removed:,} removed")
        tail = f" · {counted(s.chunks_added, 'chunk')} added"
        if s.vectors_reused:  # edited files: unchanged passages were not embedded again
            tail += f" ({s.vectors_reused:,} unchanged kept their vectors)"
        if s.indexed or s.unchanged or s.skipped or s.failed or s.removed or s.chunks_added:
            self.current.setText(" · ".join(parts) + tail)
        else:  # a burst that only embedded: say what it did, not a row of zeros about reading
            self.current.setText(f"{counted(s.chunks_embedded, 'passage')} embedded")
        missing = (max(0, self.vectors[1] - self.vectors[0]) if self.vectors else unembedded(self._last)) \
            if s.cancelled else 0
        if s.embed_error:
            detail = f"Semantic search unavailable for these files: {s.embed_error}"
        elif missing:
            detail = paused_text(missing)
        else:
            detail = ""
        self._show_resume(bool(missing) and not s.embed_error)
        self.detail.setText(detail)
        self.detail.setVisible(bool(detail))
        self.cancel_btn.hide()
        self.close_btn.show()
        problems = sorted(s.problems(), key=problem_order)
        self.problems.clear()
        for o in problems:
            it = QTreeWidgetItem([os.path.basename(o.path) or o.path, o.status, o.reason or "—"])
            it.setToolTip(0, o.path)
            it.setToolTip(2, o.reason)
            it.setData(0, Qt.ItemDataRole.UserRole, o.path)
            self.problems.addTopLevelItem(it)
        self.problems.resizeColumnToContents(0)
        self.problems.resizeColumnToContents(1)
        # as tall as its rows (up to 6; 3 in a short window, so its minimum still fits 1024×600), so a short list
        # does not push the results down
        rows = min(6 if self.window().height() >= 800 else 3, max(1, len(problems)))
        row_h = self.problems.sizeHintForRow(0) if problems else self.fontMetrics().height() + 4
        frame = 2 * self.problems.frameWidth() + 2
        self.problems.setFixedHeight(self.problems.header().sizeHint().height() + rows * row_h + frame)
        self.problems_btn.setVisible(bool(problems))
        self.problems_btn.setText(f"Show problems ({len(problems)})")
        # failures are the interesting part: show them right away
        self.problems_btn.setChecked(any(o.status == STATUS_FAILED for o in problems))
        self.show()

    def set_vectors(self, vectors: int, chunks: int, paused: bool) -> None:
        """The library's vector count (the status bar's Stats). After a Cancel (embedding ``paused``) the panel says
        how many passages wait and offers Resume; nothing resumes them otherwise."""
        self.vectors = (vectors, chunks)
        self.paused = paused
        missing = max(0, chunks - vectors)
        if self.summary is None:
            self._render_detail()
            return
        if not self.summary.cancelled or self.summary.embed_error:
            return
        if paused and missing:
            self.detail.setText(paused_text(missing))
        else:
            self.detail.setText("Every passage has its vector." if not missing else
                                f"{counted(missing, 'passage')} without vectors — {RESUME_HINT}.")
        self._show_resume(paused and bool(missing))
        self.detail.show()

    def _show_resume(self, visible: bool) -> None:
        self.resume_btn.setVisible(visible)
        if visible:
            self.resume_shown.emit()

    def fail(self, message: str) -> None:
        self._ticker.stop()
        self.title.setText("Indexing stopped")
        self.current.setText(message)
        self.detail.setText("")
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.cancel_btn.hide()
        self.close_btn.show()

    def _toggle_problems(self, on: bool) -> None:
        self.problems.setVisible(on)
        shown = "Hide problems" if on else "Show problems"
        self.problems_btn.setText(f"{shown} ({self.problems.topLevelItemCount()})")

    def _on_cancel(self) -> None:
        self.cancelling()
        self.cancel_requested.emit()

    def _on_resume(self) -> None:
        self.resume_btn.hide()
        self.resume_requested.emit()

    def _on_close(self) -> None:
        self.hide()
        self.closed.emit()

    @staticmethod
    def short(path: str) -> str:
        return short_path(path, 80)
