"""The index-job queue: one job at a time on the jobs runner; drops queue behind it, merge, resume, cancel.

Rules kept here and nowhere else:
* one indexing/embedding job runs at a time (they all take the service's single writer anyway);
* queued index drops with the same ``force`` flag merge into the next job (dropping 5 folders = one job);
* an interrupted embedding queue (pending vectors, no job) resumes once by itself, never after the user
  cancelled or after a model change (the banner offers it instead);
* cancel stops the running job between files and forgets the queue.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from ..errors import UserError
from ..models import FileOutcome, IndexProgress, IndexSummary, Stats
from ..service_api import MemoryApi
from .tasks import Task, TaskContext, TaskRunner

log = logging.getLogger(__name__)


@dataclass
class Job:
    kind: str  # "index" | "embed"
    paths: list[str] = field(default_factory=list)
    force: bool = False


class IndexJobController(QObject):
    started = Signal(object)  # Job (paths merged)
    queue_changed = Signal(int)  # jobs waiting behind the running one
    progress = Signal(object)  # IndexProgress
    succeeded = Signal(object)  # IndexSummary
    failed = Signal(object, str)  # (exception, traceback): the job itself failed
    finished = Signal()  # after succeeded/failed: the queue moves on
    removed = Signal(int, list)  # (documents removed, the paths asked for)
    error = Signal(object, str)  # a quick job (remove, roots) failed

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._svc: MemoryApi | None = None
        self.pending: list[Job] = []
        self.current: Job | None = None
        self._task: Task | None = None
        self.outcomes: dict[str, FileOutcome] = {}
        self.last_summary: IndexSummary | None = None
        self.auto_resume = True  # see the module doc: off after a cancel, a model change, or one resume
        self.closing = False

    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service
        if service is not None and self.pending and self._task is None:
            self._start_next()

    def is_running(self) -> bool:
        return self._task is not None

    # -- requests ----------------------------------------------------------------------------------------
    def add_paths(self, paths: list[str], force: bool = False) -> None:
        """Index files/folders in the background; queued behind a running job."""
        paths = [os.path.abspath(p) for p in paths if p]
        if paths:
            self._enqueue(Job("index", paths, force))

    def reembed(self) -> None:
        """Embed every chunk still missing a vector (after a model change, a failure or an interrupted run)."""
        self._enqueue(Job("embed"))

    def _enqueue(self, job: Job) -> None:
        self.pending.append(job)
        if self._task is None and self._svc is not None:
            self._start_next()
        else:
            self.queue_changed.emit(len(self.pending))

    def cancel(self) -> None:
        self.auto_resume = False  # the user said stop: never restart embedding behind their back
        self.pending.clear()
        self.queue_changed.emit(0)
        if self._task is not None:
            self._task.cancel()

    def maybe_resume(self, stats: Stats, embedder_ok: bool) -> bool:
        """Finish an interrupted embedding queue (crash, quit while embedding) once, in the background."""
        if (self._task is None and not self.pending and stats.pending_vectors and stats.chunks and embedder_ok
                and self.auto_resume):
            self.auto_resume = False
            self.reembed()
            return True
        return False

    def remove_paths(self, paths: list[str]) -> None:
        svc = self._svc
        if svc is None or not paths:
            return

        def done(n: int) -> None:
            for p in paths:
                self.outcomes.pop(p, None)
            self.removed.emit(n, paths)

        self._runner.submit(lambda: svc.remove_paths(paths), name="remove", on_done=done, on_error=self.error.emit)

    def reindex_all(self, fallback: list[str]) -> None:
        """Re-scan every folder that was added (the core's roots), then re-index them (forced)."""
        svc = self._svc
        if svc is None:
            return
        self._runner.submit(svc.roots, name="roots", on_error=self.error.emit,
                            on_done=lambda roots: self.add_paths(list(roots) or fallback, force=True))

    def shutdown(self) -> None:
        self.closing = True
        self.pending.clear()
        if self._task is not None:
            self._task.cancel()

    # -- the running job ---------------------------------------------------------------------------------
    def _start_next(self) -> None:
        svc = self._svc
        if not self.pending or svc is None or self.closing:
            return
        job = self.pending.pop(0)
        if job.kind == "index":  # merge queued drops with the same force flag into this job
            rest = []
            for other in self.pending:
                if other.kind == "index" and other.force == job.force:
                    job.paths += [p for p in other.paths if p not in job.paths]
                else:
                    rest.append(other)
            self.pending = rest

        def run(ctx: TaskContext) -> IndexSummary:  # worker thread
            if job.kind == "embed":
                return svc.embed_pending_summary(progress=ctx.report, cancel=ctx.cancel_event)
            return svc.index_paths(job.paths, progress=ctx.report, cancel=ctx.cancel_event, force=job.force)

        self.current = job
        self._task = self._runner.submit(run, name=f"{job.kind}-job", with_context=True, on_done=self._done,
                                         on_error=self._failed, on_progress=self._progress,
                                         on_finished=self._finished)
        self.started.emit(job)
        self.queue_changed.emit(len(self.pending))

    def _progress(self, p: IndexProgress) -> None:
        if p.last_outcome is not None:
            self.outcomes[p.last_outcome.path] = p.last_outcome
        self.progress.emit(p)

    def _done(self, summary: IndexSummary) -> None:
        self.last_summary = summary
        for o in summary.outcomes:
            self.outcomes[o.path] = o
        self.succeeded.emit(summary)

    def _failed(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("indexing job failed:\n%s", tb)
        self.failed.emit(exc, tb)

    def _finished(self) -> None:
        self._task = None
        self.current = None
        self.finished.emit()
        if self.pending and not self.closing:
            self._start_next()
