"""Loads what the first search needs in the background once the window is shown (``MemoryApi.warm_up``).

Why: at a million passages the first search paid for loading the dense lane's code matrices (~100 MB), the keyword
lane's cached counts, a second reader connection, the search threads and the model session's first run: 2 s for
the first search, 0.3 s for the second. The window shows first; the warm-up starts once the library is open and
the window is visible, then again (semantic) when the embedder is ready. It runs on the jobs runner (never the UI
thread), on readers only (never the writer), and the window's shutdown cancels it with the other jobs
(``TaskRunner.cancel_all``: the service stops between steps). A search during the warm-up simply runs: one that
needs the matrices waits for the load in progress instead of loading them a second time.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from ..service_api import MemoryApi
from .tasks import TaskContext, TaskRunner

log = logging.getLogger(__name__)
CHANNEL = "warm-up"
SHOWN_POLL_MS = 100  # how often a service opened before the window was shown looks again


class SearchWarmUp(QObject):
    finished = Signal(bool)  # semantic: whether the model's first run was part of it

    def __init__(self, runner: TaskRunner, window: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._window = window
        self._semantic_done: MemoryApi | None = None  # the service a semantic warm-up already ran for
        self.started = 0  # warm-ups submitted (tests, the window benchmark)

    def start(self, svc: MemoryApi | None, *, semantic: bool = False) -> None:
        """Warm ``svc`` up on a worker, once the window is visible (a newer request replaces a queued one)."""
        if svc is None or (not semantic and self._semantic_done is svc):
            return
        if not self._window.isVisible():  # never before the window is on screen: it must not wait for this
            QTimer.singleShot(SHOWN_POLL_MS, lambda: self.start(svc, semantic=semantic))
            return
        if semantic:
            self._semantic_done = svc
        self.started += 1

        def run(ctx: TaskContext) -> bool:  # worker thread
            svc.warm_up(ctx.cancel_event, semantic=semantic)
            return semantic

        self._runner.submit(run, name="warm-up", channel=CHANNEL, with_context=True, on_done=self.finished.emit,
                            on_error=lambda exc, _tb: log.info("warm-up skipped: %s", exc))
