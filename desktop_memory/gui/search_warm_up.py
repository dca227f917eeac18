"""Loads what the first search needs in the background once the window is shown (``MemoryApi.warm_up``).

Why: at a million passages the first search paid for loading the dense lane's code matrices (~100 MB), the keyword
lane's cached counts, a second reader connection, the search threads and the model session's first run: 2 s for
the first search, 0.3 s for the second. The window shows first; the warm-up starts once the library is open, the
window is visible and the Library's first screen is there (1.5 s at most), then again (semantic) when the embedder
is ready. It runs on the jobs runner (never the UI thread), on readers only (never the writer), and the window's
shutdown cancels it with the other jobs (``TaskRunner.cancel_all``: the matrices' load is interrupted, later steps
are skipped). A search during the warm-up simply runs: one that
needs the matrices waits for the load in progress instead of loading them a second time.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from ..service_api import MemoryApi
from .tasks import Task, TaskContext, TaskRunner

log = logging.getLogger(__name__)
CHANNEL = "warm-up"
SHOWN_POLL_MS = 100  # how often a warm-up held back until the window is visible looks again
FIRST_SCREEN_WAIT_MS = 1500  # the warm-up waits for the Library's first screen at most this long


class SearchWarmUp(QObject):
    """When: the service is open, the window is visible and the Library's first screen is there (or 1.5 s have
    passed), so the window's own start-up never waits for it; again with the model's first run once the embedder
    is ready (after the first one has ended: one warm-up at a time)."""

    finished = Signal(bool)  # semantic: whether the model's first run was part of it

    def __init__(self, runner: TaskRunner, window: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._window = window
        self._svc: MemoryApi | None = None
        self._screen_ready = False  # the Library's first screen arrived (or the wait for it ran out)
        self._semantic_wanted = False  # the embedder is ready: the model's first run is to be warmed too
        self._plain_done: MemoryApi | None = None  # the service a warm-up already ran for
        self._running = False  # one warm-up at a time: two would hold two of the 3 readers, one waiting on the other
        self.started = 0  # warm-ups submitted (tests, the window benchmark)

    def service_opened(self, svc: MemoryApi) -> None:
        self._svc, self._screen_ready, self._semantic_wanted = svc, False, False
        QTimer.singleShot(FIRST_SCREEN_WAIT_MS, self, lambda: self._screen_arrived(svc))  # ends with self

    def first_screen(self) -> None:
        """The Library listed its first screen (called on every refresh; only the first matters)."""
        self._screen_arrived(self._svc)

    def embedder_ready(self) -> None:
        self._semantic_wanted = True
        self._kick()

    def _screen_arrived(self, svc: MemoryApi | None) -> None:
        if svc is not None and svc is self._svc and not self._screen_ready:
            self._screen_ready = True
            self._kick()

    def _kick(self) -> None:
        svc = self._svc
        if svc is None or not self._screen_ready or self._running:
            return  # a running warm-up kicks again when it ends
        if not self._window.isVisible():  # never before the window is on screen: it must not wait for this
            QTimer.singleShot(SHOWN_POLL_MS, self, self._kick)
            return
        semantic, plain_due = self._semantic_wanted, self._plain_done is not svc
        self._semantic_wanted, self._plain_done = False, svc  # before submitting: an inline runner ends it at once
        if semantic or plain_due:
            self._submit(svc, semantic=semantic)

    def _submit(self, svc: MemoryApi, *, semantic: bool) -> None:
        self.started += 1
        self._running = True

        def run(ctx: TaskContext) -> bool:  # worker thread
            svc.warm_up(ctx.cancel_event, semantic=semantic)
            return semantic

        submitted: list[Task] = []  # empty while an inline runner (tests) runs it inside submit()
        task = self._runner.submit(
            run, name="warm-up", channel=CHANNEL, with_context=True, on_done=self.finished.emit,
            on_error=lambda exc, _tb: log.info("warm-up skipped: %s", exc),
            on_finished=lambda: self._ended(bool(submitted) and submitted[0].cancel_event.is_set()))
        submitted.append(task)

    def _ended(self, cancelled: bool) -> None:
        self._running = False
        if cancelled:  # the window is closing (TaskRunner.cancel_all): nothing more to warm
            self._svc = None
            return
        self._kick()  # the embedder became ready meanwhile: now the model's first run
