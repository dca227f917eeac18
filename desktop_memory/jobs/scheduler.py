"""One scheduler for every write to the library: reads, watch batches, removals, embedding and compaction.

Why: the writer is one connection under one lock. When each front end ran its own long job on it, a saved edit
waited behind minutes of embedding, a removal waited behind it too, Cancel stopped one job while another part
restarted embedding, and a removed folder came back through a catch-up already planned. Here one writer thread
(``desktop-memory-writer``) runs the jobs of :mod:`.queue` in priority order, and one embedding thread
(``desktop-memory-embed``) runs the embedding, which holds the writer only to commit each slice of ``EMBED_SLICE``
passages (ingest/pipeline.py ``embed_queue``): the model's minutes belong to no transaction, so a saved
edit or a removal commits between two slices instead of waiting behind the embedding. The window,
``desktop-memory watch``, the CLI's one-shot commands, MCP's ``index_path`` and the benchmarks all submit to it
(through the service, which waits for a job where its caller must), and read its state. The GUI shows that state;
it does not own it. Each job carries its operation (:mod:`.operations`): the scheduler decides when a job runs,
never what it does, and knows the library only through the :class:`~.operations.LibraryWrites` protocol.

Rules kept here and nowhere else:
* **Step aside, then resume.** A running read polls a flag between files (and embedding slices); when a job of a
  higher priority waits (a setting, a removal, a watch batch), it stops there (work so far is committed), goes
  back into the queue and resumes by itself after the other job. The embedding takes turns with every job at each
  slice's commit.
* **Cancel means stopped.** :meth:`cancel` stops the running read or embedding within one slice (a slice computed
  when Cancel came is dropped, so the vector count does not move after it), forgets the queued ones and pauses
  embedding: nothing starts it again until the person asks (a drop, Re-index, Resume).
* **Removal is final.** :meth:`remove` drops the queued reads of the folder, stops a running read of it, tells the
  watchers at once (listeners), then removes it first thing. Watch batches plan when they run, against the roots
  stored in the database, so nothing planned before the removal can bring it back. A big removal goes in slices
  (service ``remove_paths``): between them it steps aside for a waiting watch batch (a saved edit) and goes on
  right after it; one the app quit in the middle of is recorded in the library and finished first thing when the
  next scheduler is created. The person's removal (not a watch batch's "file gone") excludes what lies inside a
  library folder (store/folders.py); a person's read names paths explicitly and so includes them again.
* **One summary per burst.** From the first job after idle to the next idle (or a cancel): reads and embedding in
  one :class:`IndexSummary` whose ``elapsed_s`` is the wall-clock time of the whole burst.

* **Settings first.** The two one-row settings writes (the embedding pause, the model a library builds) are jobs
  of the top priority (queue.py ``SETTINGS``): a running read or removal steps aside for one at its next slice,
  and the embedding commits between slices anyway, so a pause or a model switch is written within a slice, never
  after the whole job. They run quietly (no events, no burst), and one still queued at quit is written then.

Events reach listeners on the worker thread (the GUI re-posts them to its UI thread). The lanes' threads, the step-
aside flag and the running of one job are in :mod:`.lanes`.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import Cancelled
from ..paths import is_inside
from .events import Paused, Removing
from .lanes import Lanes, describe, no_progress
from .operations import Compact, EmbedPending, ProgressFn, ReadPaths, RemovePaths, RunWatchBatch, SetEmbeddingPaused
from .queue import (
    AUTO,
    CANCELLABLE,
    COMPACT,
    EMBED,
    PERSON,
    READ,
    REMOVE,
    SETTINGS,
    WATCH,
    WATCHED,
    YIELDING,
    Job,
    WatchWork,
)
from .summary import Burst

if TYPE_CHECKING:
    from .operations import LibraryWrites

log = logging.getLogger(__name__)


class Scheduler(Lanes):
    """Runs the library's writes in priority order: one writer lane, one embedding lane (threads started on first
    use, lanes.py); see the module doc."""

    def __init__(self, writes: LibraryWrites, *, auto_embed: bool = True) -> None:
        super().__init__(writes)
        self.auto_embed = auto_embed
        self.paused = self._paused_earlier()  # embedding paused by the person's Cancel (kept in the library)
        self._removal_seen: tuple[tuple[str, ...], int] | None = None  # finish_stalled_removal's last look
        self.resumed_removal: Job | None = None  # the start-up finish, for a front end that subscribes after it
        self._finish_interrupted_removals()

    # ---------- the person's pause, kept in the library ----------
    def _paused_earlier(self) -> bool:
        try:
            return self._writes.embedding_paused()
        except Exception:  # a library that cannot be read yet: the first job will say why
            log.warning("could not read whether embedding was paused", exc_info=True)
            return False

    def _set_paused(self, paused: bool) -> None:
        """Pause or resume now; the library remembers it through a settings job (Cancel is pressed on the UI
        thread, and a write may wait on another process's lock: the caller never waits). Settings jobs run in the
        order asked, so the last change wins."""
        if paused == self.paused:
            return
        self.paused = paused
        self._submit(Job(SETTINGS, source=AUTO, operation=SetEmbeddingPaused(paused)))

    def _finish_interrupted_removals(self) -> None:
        """A removal the app quit in the middle of is finished first thing (removal is final, issue 20)."""
        try:
            pending = self._writes.pending_removals()
            erasing = self._writes.erasing_unfinished()
        except Exception:  # a library that cannot be read yet: the first job will say why
            log.warning("could not read the pending removals", exc_info=True)
            return
        if pending or erasing:  # (no paths: only the erasing of what was removed is left)
            self.resumed_removal = self._submit(Job(REMOVE, list(pending), source=AUTO, operation=RemovePaths()))

    def finish_stalled_removal(self) -> Job | None:
        """A removal another process began while this one runs, and was killed in (`remove` beside the window or
        `watch`): its intent is recorded, and no document of it left since the last look. The watcher asks every
        few seconds; a stalled one is finished here, as a start would (before: only the next start did, and its
        text stayed in the file meanwhile). A removal still making progress is left to the process doing it."""
        try:
            pending = self._writes.pending_removals()
            seen = (tuple(pending), self._writes.removing_documents()) if pending else None
        except Exception:  # a library that cannot be read just now: the next look tries again
            log.warning("could not read the pending removals", exc_info=True)
            return None
        last, self._removal_seen = self._removal_seen, seen
        if seen is None or seen != last:
            return None
        with self._cond:
            ours = [j for j in (self.running, *self._queue.jobs) if j is not None and j.kind == REMOVE]
        if ours:  # this process is removing already (queued behind a slice, or running)
            return None
        self._removal_seen = None
        return self._submit(Job(REMOVE, list(pending), source=AUTO, operation=RemovePaths()))

    # ---------- asking for work (any thread) ----------
    def read(self, paths: list[str], force: bool = False, source: str = PERSON, resume: bool = True) -> Job:
        """Read files/folders (keyword-searchable at once); embedding follows by itself. A person's read ends a
        pause (they asked for new work), except a re-read of the library (F5, ``resume=False``): it reads what
        changed, and the pause stays until the person resumes."""
        if source == PERSON and resume:
            self._set_paused(False)
        # named by the person: a path they removed and name exactly again is included again
        return self._submit(Job(READ, list(paths), force=force, source=source,
                                operation=ReadPaths(include_excluded=source == PERSON)))

    def watch_batch(self, work: WatchWork, label: str = "") -> Job:
        return self._submit(Job(WATCH, source=WATCHED, work=work, label=label, operation=RunWatchBatch(work)))

    def embed(self, source: str = PERSON) -> Job | None:
        """Embed every passage still without a vector. Only the person's request ends a pause."""
        if source == PERSON:
            self._set_paused(False)
            self._emit(Paused(False))
        elif self.paused or not self.auto_embed:
            return None
        return self._submit(Job(EMBED, source=source, operation=EmbedPending()))

    def compact(self) -> Job:
        return self._submit(Job(COMPACT, operation=Compact()))

    def remove(self, paths: list[str]) -> Job:
        """Remove files or folders from the index, final: queued reads of them are dropped, a running read of them
        stops within one file, watchers hear it now (``removing``), and the removal runs before anything else."""
        with self._cond:
            dropped = self._queue.without_folders(paths)
            running = self.running
            if running is not None and running.kind == READ and running.touches(paths):
                running.paths = [p for p in running.paths if not any(is_inside(p, f) for f in paths)]
                running.cancel.set()  # stops within one file; the rest of its paths are read after the removal
        # the person's removal (final), queued first: whatever the watchers do next waits for it
        removal = self._submit(Job(REMOVE, list(paths), operation=RemovePaths(exclude=True)))
        for job in dropped:
            self._drop(job, "its folder was removed")
        self._emit(Removing(tuple(paths)))
        return removal

    def submit(self, job: Job) -> Job:
        """Queue a job built by a front end (its operation says what it does); returns the job that will do it (a
        queued one it merged into). Unlike :meth:`read` and :meth:`embed`, a pause is left as it is."""
        return self._submit(job)

    def wait_for(self, job: Job, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Any:
        """Wait for ``job`` and return its result (its error is raised): ``progress`` gets its progress from now
        on, and ``cancel`` (the waiter's Ctrl+C) stops it for good. A job that never ran raises Cancelled."""
        if progress is not None:
            job.on_progress = progress
        if cancel is not None:
            job.stop = cancel
        while not job.finished:
            job.wait(0.1)  # (a timeout: the waiter's signal handlers run meanwhile)
        if job.dropped:
            raise Cancelled(f"{describe(job)} did not run: {job.dropped}")
        return job.wait()

    def perform(self, job: Job, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Any:
        """Submit ``job`` and wait for it (a one-shot command, MCP, a benchmark). Asked from a job already running
        on a lane (a watch batch's reads), it runs right there: queued, it would wait for the job that waits for it."""
        if self.on_worker():
            assert job.operation is not None
            job.stop = cancel
            return job.operation.run(self._writes, job, cancel, progress or no_progress, Burst())
        return self.wait_for(self.submit(job), progress, cancel)

    def cancel(self) -> Job | None:
        """The person's Cancel: the running read/embedding stops within one slice, queued reads, embedding and
        compaction are forgotten, and embedding stays paused until asked for again. Removals and watch batches go
        on (they are not what the person is cancelling). Returns the job that is stopping, if any."""
        self._set_paused(True)
        with self._cond:
            gone = self._queue.take(lambda j: j.kind not in CANCELLABLE)
            stopping = [j for j in (self.running, self.embedding) if j is not None and j.kind in YIELDING]
            for job in stopping:
                job.cancel.set()
            self._cancelled_burst = bool(stopping)
            if not stopping and self._burst is None and any(j.source != WATCHED for j in gone):
                self._burst = Burst(visible=True)  # cancelled before it started: still one (empty) summary
        for job in gone:
            self._drop(job, "cancelled")
        self._emit(Paused(True))
        if not stopping:
            self._end_burst(cancelled=True)
        return stopping[-1] if stopping else None

    def wait_embedding_stopped(self, timeout: float = 60.0) -> bool:
        """Block until no embedding runs (after :meth:`cancel`, before the vectors are reset for a new model)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.embedding is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
        return True

    def stop(self, timeout: float = 30.0) -> str:
        """Quit or switch database: stop the running job within one slice, forget the queue, end the thread.
        Returns what was stopped, for the front end to say ("" when nothing ran)."""
        with self._cond:
            self.stopping = True
            gone = self._queue.take(lambda j: j.kind == SETTINGS)  # (a setting asked before the quit is kept)
            running = [j for j in (self.running, self.embedding) if j is not None]
            for job in running:
                job.cancel.set()
            self._cond.notify_all()
        for job in gone:
            self._drop(job, "the library was closed")
        for thread in (self._thread, self._embed_thread):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        settings = self._queue.take(lambda _j: False)
        if not self.alive:  # one row each, on this thread now that the lanes are done: a pause is not lost at quit
            for job in settings:
                self._run_quiet(job)
        for job in settings:
            if not job.finished:
                self._drop(job, "the library was closed")
        names = [describe(j) for j in running + gone if j.kind != WATCH]
        return ", ".join(dict.fromkeys(names))


__all__ = ["Scheduler", "describe"]
