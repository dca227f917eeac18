"""The library's embedding pause, visible wherever the library is shown: one banner with Resume.

Why: Cancel pauses embedding and the library keeps that pause (jobs/scheduler.py), but the progress panel that said
so is gone after a restart, a database switch, or once the person closed it: the passages then waited without
vectors and nothing said why or offered to go on. The same holds for a library whose embedding did not finish
(a database switch stopped it) and that will not resume by itself. This banner says so, with Resume, whenever no
work runs; the progress panel says it instead while it shows a cancelled job. Pure presentation: the pause itself
is the scheduler's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from ..models import Stats
from .formatting import counted

if TYPE_CHECKING:
    from .main_window import MainWindow

PAUSE_KEY = "embedding-paused"
OTHER_OFFERS = ("reembed", "embed-error", "embedder")  # banners that already say what to do about the vectors


def paused_banner_text(missing: int) -> str:
    if not missing:
        return "Embedding is paused (you pressed Cancel): new passages get no vectors until you resume."
    return (f"Embedding is paused (you pressed Cancel): {counted(missing, 'passage')} without vectors. Keyword "
            "search finds them; semantic search does not until you resume.")


def unfinished_banner_text(missing: int) -> str:
    return (f"{counted(missing, 'passage')} still without vectors: their embedding did not finish. Keyword search "
            "finds them; semantic search does not until they are embedded.")


class PauseBanner(QObject):
    """Shows, updates or dismisses the pause banner from the latest Stats (see the module doc)."""

    def __init__(self, window: MainWindow, resume: Callable[[], None]) -> None:
        super().__init__(window)
        self._w = window
        self._resume = resume
        self._shown_text = ""  # on screen, or closed by the person: the same words are not put up again

    def refresh(self) -> None:
        """After the current event: the window's stats handler may still queue the resume at start."""
        QTimer.singleShot(0, self._update)

    def _update(self) -> None:
        text = self._text(self._w.stats)
        if not text:
            self._dismiss()
        elif text != self._shown_text:
            self._shown_text = text
            self._w.banners.show_message(text, "info", key=PAUSE_KEY, actions=[("Resume", self._resume)])

    def _text(self, stats: Stats | None) -> str:
        w, jobs = self._w, self._w.index_jobs
        sched = jobs.scheduler
        if stats is None or w.svc is None or sched is None or jobs.is_running() or sched.busy():
            return ""
        missing = stats.pending_vectors
        if w.progress.isVisible() and w.progress.resume_btn.isVisible():
            return ""  # the panel of the cancelled job says it, with its own Resume
        if jobs.paused:
            return paused_banner_text(missing)
        others = {b.key for b in w.banners.banners()}
        if missing and stats.chunks and not jobs.auto_resume and w.embedder_state != "error" \
                and not others.intersection(OTHER_OFFERS):
            return unfinished_banner_text(missing)
        return ""

    def _dismiss(self) -> None:
        if self._shown_text:
            self._shown_text = ""
            self._w.banners.dismiss(PAUSE_KEY)


def install_pause_banner(window: MainWindow) -> PauseBanner:
    """Wire the banner to what changes it: new Stats, the pause itself, the panel closing, a job starting."""
    pb = PauseBanner(window, window.reembed_library)
    window.stats_refreshed.connect(pb.refresh)
    window.index_jobs.paused_changed.connect(lambda _paused: pb.refresh())
    window.index_jobs.started.connect(lambda _job: pb.refresh())
    window.index_jobs.finished.connect(pb.refresh)
    window.progress.closed.connect(pb.refresh)
    window.progress.resume_shown.connect(pb.refresh)
    return pb
