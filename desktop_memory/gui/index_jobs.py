"""The index-job queue: one job at a time on the jobs runner; drops queue behind it, merge, resume, cancel.

Rules kept here and nowhere else:
* one indexing/embedding job runs at a time (they all take the service's single writer anyway);
* read first, then embed (job_queue.py): an index job only reads (keyword-searchable in seconds); one embedding
  job runs behind every queued read, and steps aside (keeping its vectors) when a new folder is dropped; the
  reads and the embedding of one burst end in one summary;
* queued index drops with the same ``force`` flag merge into the next job (dropping 5 folders = one job);
* an interrupted embedding queue (pending vectors, no job) resumes once by itself, never after the user
  cancelled or after a model change (the banner offers it instead);
* cancel stops the running job between files and forgets the queue.
"""

from __future__ import annotations

import inspect
import logging
import os

from PySide6.QtCore import QObject, Signal

from ..errors import UserError
from ..models import FileOutcome, IndexProgress, IndexSummary, Stats
from ..service_api import MemoryApi
from .job_queue import Job, JobQueue, add_reads, merge_summaries
from .tasks import Task, TaskContext, TaskRunner

log = logging.getLogger(__name__)

__all__ = ["IndexJobController", "Job"]


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
        self.queue = JobQueue()
        self.current: Job | None = None
        self.burst_read: IndexSummary | None = None  # the reads since the last summary shown
        self._preempting = False  # the running automatic embedding was stopped for a new read
        self._task: Task | None = None
        self.outcomes: dict[str, FileOutcome] = {}
        self.last_summary: IndexSummary | None = None
        self.auto_resume = True  # see the module doc: off after a cancel, a model change, or one resume
        self.closing = False

    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service
        if service is not None and self.pending and self._task is None:
            self._start_next()

    @property
    def pending(self) -> list[Job]:
        return self.queue.pending

    def is_running(self) -> bool:
        return self._task is not None

    def queued_reads(self) -> int:
        return sum(1 for j in self.queue.pending if j.kind == "index")

    def folders_in_flight(self) -> list[str]:
        """Folders being read or waiting to be read (not yet recorded as library roots)."""
        jobs = [j for j in [self.current, *self.queue.pending] if j is not None and j.kind == "index"]
        return [p for j in jobs for p in j.paths if os.path.isdir(p)]

    def _reads_only(self) -> bool:
        svc = self._svc
        return svc is not None and "embed" in inspect.signature(svc.index_paths).parameters

    # -- requests ----------------------------------------------------------------------------------------
    def add_paths(self, paths: list[str], force: bool = False) -> None:
        """Index files/folders in the background; queued behind a running job."""
        paths = [os.path.abspath(p) for p in paths if p]
        if not paths:
            return
        self.queue.add_index(paths, force)
        if self._task is not None and self.queue.should_preempt(self.current):
            self._preempting = True  # reading comes first: the embedding stops between batches, resumes after
            self._task.cancel()
        self._kick()

    def reembed(self, auto: bool = False) -> None:
        """Embed every chunk still missing a vector (after a model change, a failure or an interrupted run).
        ``auto``: the queue's own idea (a new read may preempt it), not the person's request."""
        self.queue.add_embed(auto=auto)
        self._kick()

    def _kick(self) -> None:
        if self._task is None and self._svc is not None:
            self._start_next()
        else:
            self.queue_changed.emit(self.queued_reads())

    def cancel(self) -> None:
        self.auto_resume = False  # the user said stop: never restart embedding behind their back
        self._preempting = False
        self.queue.clear()
        self.queue_changed.emit(0)
        if self._task is not None:
            self._task.cancel()

    def maybe_resume(self, stats: Stats, embedder_ok: bool) -> bool:
        """Finish an interrupted embedding queue (crash, quit while embedding) once, in the background."""
        if (self._task is None and not self.pending and stats.pending_vectors and stats.chunks and embedder_ok
                and self.auto_resume):
            self.auto_resume = False
            self.reembed(auto=True)
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
        self.queue.clear()
        if self._task is not None:
            self._task.cancel()

    # -- the running job ---------------------------------------------------------------------------------
    def _start_next(self) -> None:
        svc = self._svc
        if not self.pending or svc is None or self.closing:
            return
        job = self.queue.next()  # queued drops with the same force flag are already merged into it
        if job is None:
            return
        read_only = job.kind == "index" and self._reads_only()

        def run(ctx: TaskContext) -> IndexSummary:  # worker thread
            if job.kind == "embed":
                return svc.embed_pending_summary(progress=ctx.report, cancel=ctx.cancel_event)
            if read_only:
                return svc.index_paths(job.paths, progress=ctx.report, cancel=ctx.cancel_event, force=job.force,
                                       embed=False)
            return svc.index_paths(job.paths, progress=ctx.report, cancel=ctx.cancel_event, force=job.force)

        self.current = job
        self._task = self._runner.submit(run, name=f"{job.kind}-job", with_context=True, on_done=self._done,
                                         on_error=self._failed, on_progress=self._progress,
                                         on_finished=self._finished)
        self.started.emit(job)
        self.queue_changed.emit(self.queued_reads())

    def _progress(self, p: IndexProgress) -> None:
        if p.last_outcome is not None:
            self.outcomes[p.last_outcome.path] = p.last_outcome
        self.progress.emit(p)

    def _done(self, summary: IndexSummary) -> None:
        for o in summary.outcomes:
            self.outcomes[o.path] = o
        job = self.current
        if job is not None and job.kind == "index" and self._reads_only():
            # read only: keyword-searchable now; the vectors come next, after any other queued read
            self.burst_read = add_reads(self.burst_read, summary)
            if not summary.cancelled and not self.closing:
                self.queue.add_embed(auto=True)
                return
            summary = self.burst_read
        elif job is not None and job.kind == "embed" and self._preempting:
            self._preempting = False
            if not self.closing:
                self.queue.add_embed(auto=True)  # resumes after the new read, from where it stopped
                return
        elif job is not None and job.kind == "embed" and job.auto and self.burst_read is not None:
            summary = merge_summaries(self.burst_read, summary)
        self.burst_read = None
        self.last_summary = summary
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
