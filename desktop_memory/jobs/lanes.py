"""The scheduler's two lanes: their threads, the queue they take jobs from, and how one job runs on them.

Why apart from scheduler.py: that module says what may be asked (read, remove, cancel, perform, ...) and the rules
between jobs; this one is the machinery under it: one writer thread (``desktop-memory-writer``) and one embedding
thread (``desktop-memory-embed``) taking the first job of their lane from :class:`~.queue.JobQueue`, the flag a read
or a removal polls to step aside for a job of a higher priority, the burst a run belongs to, and the events told to
listeners. A quiet job (a one-row settings write, queue.py ``QUIET``) runs without events or a burst.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import IndexProgress
from .events import BurstEnded, Done, Dropped, Failed, JobEvent, Progress, Queued, Started, Yielded
from .operations import ProgressFn
from .queue import (
    AUTO,
    BULK,
    CHECK,
    COMPACT,
    EMBED,
    EMBEDDER,
    PERSON,
    QUIET,
    READ,
    REMOVE,
    SETTINGS,
    WATCH,
    WATCHED,
    WRITER,
    Job,
    JobQueue,
)
from .summary import Burst

if TYPE_CHECKING:
    from .operations import LibraryWrites

log = logging.getLogger(__name__)
MIN_SLICE_S = 0.2  # a resumed job works at least this long before stepping aside again (no starvation)


class _StepAside(threading.Event):
    """The cancel flag a read or an embedding polls: set when the job is cancelled or the scheduler stops, and for a
    read when a job of a higher priority waits and this slice has worked for ``MIN_SLICE_S``. (The embedding never
    needs to step aside: it holds the writer only for each slice's commit.)"""

    def __init__(self, lanes: Lanes, job: Job) -> None:
        super().__init__()
        self._lanes, self._job = lanes, job
        self._until = time.monotonic() + (MIN_SLICE_S if job.slices > 1 or job.kind == REMOVE else 0.0)
        self.stepped_aside = False

    def is_set(self) -> bool:
        if self._job.cancel.is_set() or self._lanes.stopping or self._job.stopped:
            return True
        if time.monotonic() < self._until:
            return False
        if self._job.kind == READ and self._lanes.higher_waiting(self._job):
            self.stepped_aside = True
            return True
        # a big removal lets a saved edit in, and a settings write (one row: it must not wait for the whole removal)
        if self._job.kind == REMOVE and (self._lanes.edit_waiting() or self._lanes.settings_waiting()):
            self.stepped_aside = True
            return True
        return False


class Lanes:
    """The writer lane and the embedding lane (threads started on first use) and the state they share."""

    paused: bool  # (the scheduler's: embedding paused by the person)

    def __init__(self, writes: LibraryWrites) -> None:
        self._writes = writes
        self._queue = JobQueue()
        self._cond = threading.Condition()
        self._listeners: list[Callable[[JobEvent], None]] = []
        self._thread: threading.Thread | None = None  # the writer lane
        self._embed_thread: threading.Thread | None = None  # the embedding lane
        self.running: Job | None = None  # on the writer lane
        self.embedding: Job | None = None  # on the embedding lane
        self.stopping = False
        self._burst: Burst | None = None
        self._cancelled_burst = False  # a Cancel came while a job ran: its burst ends when that job stops

    def embed(self, source: str = PERSON) -> Job | None:
        raise NotImplementedError  # (the scheduler's: embedding follows a read by itself)

    # ---------- listening ----------
    def subscribe(self, fn: Callable[[JobEvent], None]) -> Callable[[], None]:
        """Call ``fn(event)`` for every event (jobs/events.py; on the worker thread, or the caller's for
        :class:`Removing`)."""
        with self._cond:
            self._listeners.append(fn)
        return lambda: self._unsubscribe(fn)

    def _unsubscribe(self, fn: Callable[[JobEvent], None]) -> None:
        with self._cond:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def _emit(self, event: JobEvent) -> None:
        with self._cond:
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn(event)
            except Exception:  # a front end's bug must not stop the writer
                log.exception("scheduler listener failed")

    # ---------- state (any thread) ----------
    @property
    def alive(self) -> bool:
        return any(t is not None and t.is_alive() for t in (self._thread, self._embed_thread))

    def on_worker(self) -> bool:
        return threading.current_thread() in (self._thread, self._embed_thread)

    def active(self) -> list[Job]:
        """The jobs running now (writer lane first)."""
        with self._cond:
            return [j for j in (self.running, self.embedding) if j is not None]

    def queued(self) -> list[Job]:
        with self._cond:
            return list(self._queue.jobs)

    def busy(self) -> bool:
        with self._cond:
            return self._busy_locked()

    def _busy_locked(self) -> bool:
        return self.running is not None or self.embedding is not None or bool(self._queue.jobs)

    def _running_locked(self) -> bool:
        """A job runs that belongs to a burst (not a quiet settings write)."""
        return any(j is not None and j.kind not in QUIET for j in (self.running, self.embedding))

    def edit_waiting(self) -> bool:
        """A watch batch (a saved edit) waits for the writer lane."""
        with self._cond:
            return any(j.kind == WATCH for j in self._queue.jobs)

    def settings_waiting(self) -> bool:
        """A settings write (the embedding pause, the model target) waits for the writer lane."""
        with self._cond:
            return any(j.kind == SETTINGS for j in self._queue.jobs)

    def higher_waiting(self, job: Job) -> bool:
        """A job of a higher priority waits for the writer lane (the embedding lane never makes a read wait)."""
        with self._cond:
            first = self._queue.first_priority(lane_of=WRITER)
        return first is not None and first < job.priority

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until nothing runs or waits (tests, benchmarks, the CLI)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy_locked():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
        return True

    # ---------- the worker ----------
    def _submit(self, job: Job) -> Job:
        with self._cond:
            if self.stopping:
                job.dropped = "the library is closed"
                job.finish()
                return job
            merged = self._queue.add(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, args=(WRITER,), name="desktop-memory-writer",
                                                daemon=True)
                self._embed_thread = threading.Thread(target=self._run, args=(EMBEDDER,),
                                                      name="desktop-memory-embed", daemon=True)
                self._thread.start()
                self._embed_thread.start()
            self._cond.notify_all()
        if merged is job and job.kind not in QUIET:
            self._emit(Queued(job))
        return merged

    def _drop(self, job: Job, why: str) -> None:
        job.dropped = why
        job.finish()
        if job.kind not in QUIET:
            self._emit(Dropped(job, why))

    def _run(self, lane: str) -> None:
        while True:
            with self._cond:
                while not self._queue.has(lane) and not self.stopping:
                    self._cond.wait()
                if self.stopping:
                    return
                job = self._queue.next(lane)
                assert job is not None
                self._set_running(lane, job)
                burst: Burst | None = None
                if job.kind not in QUIET:
                    if self._burst is None:  # under the lock: the two lanes start one burst, not two
                        self._burst = Burst()
                    burst = self._burst
                    if job.source != WATCHED:
                        burst.visible = True
            ended: Burst | None = None
            try:
                if burst is None:
                    self._run_quiet(job)
                else:
                    self._run_one(job, burst)
            finally:
                with self._cond:  # deciding that the burst ended and detaching it is one step
                    self._set_running(lane, None)
                    if burst is not None:  # (a quiet job neither ends a burst nor keeps one going)
                        running = self._running_locked()
                        idle = not running and not any(j.kind not in QUIET for j in self._queue.jobs)
                        cancelled = self._cancelled_burst and not running
                        if cancelled:
                            self._cancelled_burst = False
                        if idle or cancelled:
                            ended, self._burst = self._burst, None
                    self._cond.notify_all()
                if ended is not None:
                    self._emit(BurstEnded(ended.summary(cancelled), ended.visible))

    def _set_running(self, lane: str, job: Job | None) -> None:
        if lane == WRITER:
            self.running = job
        else:
            self.embedding = job

    def _run_quiet(self, job: Job) -> None:
        """A one-row settings write: no events, no burst; its waiter (if any) gets its result or its error."""
        job.slices += 1
        try:
            job.result = self._execute(job, job.stop, no_progress, Burst())
        except BaseException as exc:  # closed meanwhile, read-only, locked: the waiter hears it, the writer goes on
            job.error = exc
            log.warning("%s failed", describe(job), exc_info=True)
        job.finish()

    def _run_one(self, job: Job, burst: Burst) -> None:
        job.slices += 1
        self._emit(Started(job))
        step = _StepAside(self, job)

        def progress(p: IndexProgress) -> None:
            self._emit(Progress(job, p))
            if job.on_progress is not None:
                job.on_progress(p)

        try:
            summary = self._execute(job, step, progress, burst)
        except BaseException as exc:  # the job failed; the writer goes on with the next one
            job.error = exc
            job.finish()
            self._emit(Failed(job, traceback.format_exc()))
            return
        if step.stepped_aside and not job.cancel.is_set() and not self.stopping:
            with self._cond:
                if job.kind == REMOVE:
                    self._queue.put_back_after(job, WATCH)  # the edits waiting now go first, then it goes on
                else:
                    self._queue.put_back(job)  # resumes by itself after the job that is waiting
            self._emit(Yielded(job))
            return
        if job.kind == READ and job.cancel.is_set() and job.paths and not self.stopping and not self.paused:
            job.cancel.clear()  # stopped for a removal: the rest of its paths are read after it
            with self._cond:
                self._queue.put_back(job)
            return
        job.result = summary
        if job.operation is not None and job.operation.embed_after(summary):
            self.embed(source=AUTO if job.source == PERSON else WATCHED)
        job.finish()
        self._emit(Done(job, job.summary))

    def _execute(self, job: Job, cancel: threading.Event | None, progress: ProgressFn, burst: Burst) -> Any:
        if job.operation is None:
            raise ValueError(f"a {job.kind} job without an operation")  # every job is built with one
        return job.operation.run(self._writes, job, cancel, progress, burst)

    def _end_burst(self, cancelled: bool) -> None:
        with self._cond:
            burst, self._burst = self._burst, None
        if burst is not None:
            self._emit(BurstEnded(burst.summary(cancelled), burst.visible))


def no_progress(_p: IndexProgress) -> None:
    pass


def describe(job: Job) -> str:
    """A few words for what a job does, for "stopped …" messages."""
    return {READ: "reading files", EMBED: "embedding", REMOVE: "removing files", COMPACT: "compacting",
            WATCH: "indexing changes", SETTINGS: "saving a setting", CHECK: "checking the library",
            BULK: "writing a benchmark's rows"}[job.kind]


__all__ = ["MIN_SLICE_S", "Lanes", "describe", "no_progress"]
