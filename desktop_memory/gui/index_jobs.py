"""The window's view of the scheduler (desktop_memory/jobs): what it runs, its progress, one summary per burst.

The scheduler is the core's, per service: it runs reads, watch batches, removals, embedding and compaction on one
writer thread in priority order (a removal or a saved edit goes before a read; the embedding runs beside them on
its own thread and takes the writer only to commit each slice). This controller only asks it for work (drops,
Re-index, Remove, Resume, Cancel) and turns its events, re-posted to the UI thread, into the signals the progress
panel and the window listen to. Rules:
* the person's work, and embedding resumed for them, is shown; a watch batch's own small jobs are not (they have
  their status-bar line), unless they join a burst the person started. An embedding the app started by itself
  after a watch batch (the catch-up after a restart: minutes at full CPU) is shown with Cancel as soon as it is
  more than a saved edit's few passages (``SHOW_EMBED_AT``) or runs longer than ``SHOW_EMBED_AFTER_S``;
* an interrupted embedding (vectors missing at start) resumes once by itself, never after the person cancelled and
  never after a model change (the banner offers it): Cancel pauses embedding until the person asks again (a drop,
  Resume; a re-read of the library, F5, reads what changed and keeps the pause);
* drops made before the library is open wait here, merged, and go to the scheduler when it opens.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..errors import Cancelled, UserError
from ..jobs import (
    AUTO,
    EMBED,
    PERSON,
    READ,
    REMOVE,
    WATCHED,
    BurstEnded,
    Done,
    Dropped,
    Failed,
    Job,
    JobEvent,
    Paused,
    Progress,
    Queued,
    Removing,
    Scheduler,
    Started,
    Yielded,
    add_reads,
    describe,
    unhandled,
)
from ..models import FileOutcome, IndexProgress, IndexSummary, Stats
from ..paths import normalise
from ..service_api import MemoryApi
from .removal_status import RemovalStatus
from .tasks import TaskRunner

log = logging.getLogger(__name__)

__all__ = ["SHOW_EMBED_AFTER_S", "SHOW_EMBED_AT", "IndexJobController", "Job", "ResumedRemoval"]

SHOW_EMBED_AT = 64  # passages: a watched embedding this big is shown (a saved note adds a few)
SHOW_EMBED_AFTER_S = 2.0  # ... or one running this long (a slow model, a remote server)


@dataclass(frozen=True)
class ResumedRemoval:
    """The window's own event beside the scheduler's: a removal the scheduler resumed when it was created, before
    this window listened ("Finishing the removal of …"; its later events follow as usual)."""

    job: Job


class IndexJobController(QObject):
    accepted = Signal(int)  # a drop was handed over (number of paths): the panel shows it before it starts
    started = Signal(object)  # Job (the first slice of a shown job)
    queue_changed = Signal(int)  # reads waiting behind the running job
    progress = Signal(object)  # IndexProgress
    succeeded = Signal(object)  # IndexSummary: one per burst, with the burst's real elapsed time
    failed = Signal(object, str)  # (exception, traceback): a job itself failed
    finished = Signal()  # after succeeded/failed: the burst is over
    removed = Signal(int, list)  # (documents removed, the paths asked for)
    removing = Signal(str)  # a removal's progress, one line for the status bar ("Removing 300 of 1,000 documents…")
    error = Signal(object, str)  # a removal failed
    paused_changed = Signal(bool)  # embedding paused by Cancel (True) or resumed (False)
    waiting = Signal(str)  # a write waits for another desktop-memory process's lock (after a few seconds)

    _arrived = Signal(object, object)  # (scheduler, JobEvent): writer thread → UI thread
    _waited = Signal(str)  # the store's busy-wait notice: writer thread → UI thread

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._svc: MemoryApi | None = None
        self._sched: Scheduler | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._waiting: list[Job] = []  # drops before the library opened
        self.current: Job | None = None  # the shown job running now (or last run, during its burst)
        self._shown: set[int] = set()
        self._busy = False
        self._awaiting: set[int] = set()  # jobs asked for whose end has not reached the UI thread yet
        self._removals = RemovalStatus(self.removing.emit, self.removed.emit, self._forget_outcomes)
        self._failed_in_burst = False
        self.burst_read: IndexSummary | None = None  # the reads of the burst shown now
        self.outcomes: dict[str, FileOutcome] = {}
        self.last_summary: IndexSummary | None = None
        self.auto_resume = True  # one resume of an interrupted embedding per session (see the module doc)
        self._watched_embed: tuple[Job, float] | None = None  # a watch batch's embedding running now, since when
        self._promoted: set[int] = set()  # watched embeddings shown with Cancel (see the module doc)
        self.closing = False
        self._arrived.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._waited.connect(self.waiting, Qt.ConnectionType.QueuedConnection)
        self._stop_telling: Callable[[], None] | None = None  # the store's busy-wait notices (set_service)

    # -- the service -------------------------------------------------------------------------------------
    def set_service(self, service: MemoryApi | None) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._svc, self._sched = service, None
        self._busy, self.current, self._shown, self._awaiting = False, None, set(), set()
        self._watched_embed, self._promoted = None, set()
        if service is None:
            return
        if self._stop_telling is None:  # imported here: the store is loaded by now (never before the first paint)
            from ..lock_waits import on_busy_wait

            self._stop_telling = on_busy_wait(self._waited.emit)  # any thread → the UI thread (queued)
        sched = self._sched = service.scheduler
        self._unsubscribe = sched.subscribe(lambda ev: self._arrived.emit(sched, ev))
        resumed = sched.resumed_removal  # started before we listened: said now (its later events follow)
        if resumed is not None:
            said = Done(resumed, resumed.summary) if resumed.finished else ResumedRemoval(resumed)
            self._arrived.emit(sched, said)
        waiting, self._waiting = self._waiting, []
        for job in waiting:
            self._awaiting.add(sched.read(job.paths, job.force).id)

    @property
    def scheduler(self) -> Scheduler | None:
        return self._sched

    @property
    def pending(self) -> list[Job]:
        if self._sched is None:
            return list(self._waiting)
        return [j for j in self._sched.queued() if j.source != WATCHED]

    def is_running(self) -> bool:
        """Shown work runs or waits: from the first job the scheduler takes until its burst's summary arrived."""
        sched = self._sched
        if self._busy or self._awaiting or sched is None:
            return self._busy or bool(self._awaiting)
        return any(job.source != WATCHED or job.id in self._promoted for job in sched.active())

    @property
    def paused(self) -> bool:
        return self._sched is not None and self._sched.paused

    def queued_reads(self) -> int:
        return sum(1 for j in self.pending if j.kind == READ)

    def folders_in_flight(self) -> list[str]:
        """Folders being read or waiting to be read (not yet recorded as library roots)."""
        jobs = [j for j in [self.current, *self.pending] if j is not None and j.kind == READ]
        return [p for j in jobs for p in j.paths if os.path.isdir(p)]

    # -- requests ----------------------------------------------------------------------------------------
    def add_paths(self, paths: list[str], force: bool = False, resume: bool = True) -> None:
        """Read files/folders in the background (keyword-searchable at once); their embedding follows. A drop ends
        a pause (new work); ``resume=False`` (a re-read of the library, F5) keeps it."""
        paths = [normalise(p) for p in paths if p]
        if not paths:
            return
        if self._sched is None:
            for job in self._waiting:
                if job.force == force:
                    job.paths += [p for p in paths if p not in job.paths]
                    return
            self._waiting.append(Job(READ, paths, force=force))
            return
        self._awaiting.add(self._sched.read(paths, force, resume=resume).id)
        self.accepted.emit(len(paths))
        if resume:
            self.paused_changed.emit(False)
        self.queue_changed.emit(self.queued_reads())

    def reembed(self, auto: bool = False) -> None:
        """Embed every passage still missing a vector (Resume, Embed missing vectors, after a model change)."""
        if self._sched is not None:
            job = self._sched.embed(source=AUTO if auto else PERSON)
            if job is not None:
                self._awaiting.add(job.id)
            if not auto:
                self.paused_changed.emit(False)

    def cancel(self) -> None:
        """Stopped means stopped: the running read/embedding stops within one slice and embedding stays paused."""
        self.auto_resume = False
        self._waiting.clear()
        if self._sched is not None and (self.is_running() or bool(self.pending)):
            self._busy = True  # until the cancelled burst's summary arrives (the job stops within one slice)
        self._awaiting.clear()
        if self._sched is not None:
            self._sched.cancel()
        self.queue_changed.emit(0)
        self.paused_changed.emit(True)

    def maybe_resume(self, stats: Stats, embedder_ok: bool) -> bool:
        """Finish an interrupted embedding (crash, quit while embedding) once, in the background."""
        sched = self._sched
        if (sched is None or not self.auto_resume or not embedder_ok or not stats.pending_vectors or not stats.chunks
                or sched.paused):  # (queued behind whatever runs: at most one embedding is ever queued)
            return False
        self.auto_resume = False
        watched = self._watched_embed
        if watched is not None and not watched[0].finished:
            self._promote(watched[0])  # the catch-up's embedding does this work already: show it, with Cancel
        self.reembed(auto=True)
        return True

    def remove_paths(self, paths: list[str]) -> None:
        """Final: the scheduler drops their queued reads, stops a read of them, unwatches them, removes them first."""
        if self._sched is not None and paths:
            self._sched.remove(list(paths))

    def reindex_all(self, fallback: list[str], force: bool = False) -> None:
        """Every folder that was added (the core's roots): only what changed (F5), or everything (``force``)."""
        svc = self._svc
        if svc is None:
            return
        self._runner.submit(svc.roots, name="roots", on_error=self.error.emit,
                            on_done=lambda roots: self.add_paths(list(roots) or fallback, force=force, resume=False))

    def shutdown(self) -> str:
        """Quit: stop the running job within one slice and forget the queue. Returns what was stopped."""
        self.closing = True
        if self._stop_telling is not None:
            self._stop_telling()
            self._stop_telling = None
        self._waiting.clear()
        sched, self._sched = self._sched, None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        return sched.stop() if sched is not None else ""

    def stop_for_switch(self) -> str:
        """Another database: the old library's work stops first (within one slice). Returns what was stopped."""
        stopped = self.shutdown()
        self.closing = False
        self._busy, self.current = False, None
        return stopped

    # -- events from the scheduler (UI thread) -----------------------------------------------------------
    @Slot(object, object)
    def _deliver(self, sched: Scheduler, ev: JobEvent | ResumedRemoval) -> None:
        if sched is not self._sched or self.closing:
            return  # an old library's scheduler, or quitting
        match ev:
            case Done(job=job) | Failed(job=job) | Dropped(job=job):
                self._awaiting.discard(job.id)
        match ev:
            case ResumedRemoval(job=job):
                self._removals.resumed(job)
            case Progress(job=job, progress=prog) if job.kind == REMOVE:
                self._removals.progress(job, prog)
            case Done(job=job, summary=summary) if job.kind == REMOVE:
                self._removals.done(job, summary.removed)
            case Failed(job=job) if isinstance(job.error, Cancelled):
                pass  # a compaction the person cancelled: the Library's button says so (library_view.start_compact)
            case Failed(job=job, traceback=tb) if job.kind == REMOVE:
                self.error.emit(job.error, tb)
            case BurstEnded(summary=summary, visible=visible):
                self._burst_ended(summary, visible)
            case Paused(paused=paused):
                self.paused_changed.emit(paused)
            case Dropped():
                if not self._busy and not self._awaiting:
                    self.finished.emit()  # dropped before it ran (its folder was removed): nothing is shown running
            case Queued() | Removing():
                pass  # a job is shown when it starts; a removal was asked for here (remove_paths)
            case Started() | Progress() | Yielded() | Done() | Failed():
                self._job_event(ev)
            case _:
                unhandled(ev)

    def _job_event(self, ev: Started | Progress | Yielded | Done | Failed) -> None:
        """A read's or an embedding's life: shown when it is the person's (or joins their burst)."""
        job = ev.job
        if job.kind == EMBED and job.source == WATCHED:
            self._watch_embedding(ev)
        if job.source == WATCHED and not self._busy:
            return
        match ev:
            case Started() if job.kind in (READ, EMBED):
                self._busy = True
                self.current = job
                if job.id not in self._shown:
                    self._shown.add(job.id)
                    self.started.emit(job)
                self.queue_changed.emit(self.queued_reads())
            case Progress(progress=prog) if self._busy:
                self._progress(prog)
            case Done(summary=summary) if job.kind == READ:
                for o in summary.outcomes:
                    self.outcomes[o.path] = o
                self.burst_read = add_reads(self.burst_read, summary)
            case Failed(traceback=tb) if self._busy:
                self._failed_in_burst = True
                exc = job.error or RuntimeError(describe(job) + " failed")
                if not isinstance(exc, UserError):
                    log.error("%s failed:\n%s", describe(job), tb)
                self.failed.emit(exc, tb)

    def _watch_embedding(self, ev: Started | Progress | Yielded | Done | Failed) -> None:
        """A watch batch's embedding: remembered while it runs, shown once it is more than a saved edit's."""
        match ev:
            case Started(job=job):
                self._watched_embed = (job, time.monotonic())
            case Done(job=job) | Failed(job=job) | Yielded(job=job):
                if self._watched_embed is not None and self._watched_embed[0] is job:
                    self._watched_embed = None
            case Progress(job=job, progress=prog) if job.id not in self._promoted:
                since = self._watched_embed[1] if self._watched_embed is not None else time.monotonic()
                if prog.chunks_to_embed >= SHOW_EMBED_AT or time.monotonic() - since >= SHOW_EMBED_AFTER_S:
                    self._promote(job)

    def _promote(self, job: Job) -> None:
        """Show a watched embedding as the window's own job: the panel with Cancel, "Cancel indexing" enabled."""
        if job.id in self._promoted:
            return
        self._promoted.add(job.id)
        if job.id in self._shown:
            return  # part of a burst the person started: shown already
        self._busy = True
        self.current = job
        self._shown.add(job.id)
        self.started.emit(job)
        self.queue_changed.emit(self.queued_reads())

    def _forget_outcomes(self, paths: list[str]) -> None:
        for p in paths:
            self.outcomes.pop(p, None)

    def _progress(self, p: IndexProgress) -> None:
        if p.last_outcome is not None:
            self.outcomes[p.last_outcome.path] = p.last_outcome
        self.progress.emit(p)

    def _burst_ended(self, summary: IndexSummary, visible: bool) -> None:
        shown = self._busy
        visible = visible or bool(self._promoted)  # a watched embedding shown with Cancel ends with its summary
        self._promoted = set()
        self._busy = False
        self.burst_read = None
        failed, self._failed_in_burst = self._failed_in_burst, False
        if not (visible and shown):
            return
        for o in summary.outcomes:
            self.outcomes[o.path] = o
        if not failed:
            self.last_summary = summary
            self.succeeded.emit(summary)
        self.finished.emit()
        self.current = None
