"""Keep the library's folders in sync with the disk: watch, debounce, and index through the service.

Thread model: watchdog's observer thread only records changed paths in the :class:`Debouncer`. ONE worker thread
(``desktop-memory-watch``) takes the batches and hands each to the service's scheduler (desktop_memory/jobs) as a
watch job, which runs before any read waiting there (a running read steps aside between files; the embedding
holds the writer only for each slice's commit) and is *planned when it runs*, against the library's folders as
stored in the database: a folder removed meanwhile (here, by the CLI, by MCP) is never indexed again. The job
calls the service's ``index_paths`` / ``remove_paths``: the same incremental path as a manual re-index (content
hash, vector reuse, one transaction per document). Embedding what a batch added is the scheduler's job too. Front
ends get :class:`WatchUpdate` values through a callback, on the worker thread (the GUI re-posts them to its UI
thread).

Which folders: the library's roots in the database, read again every ``ROOTS_POLL_S`` (a folder added or removed by
another process is followed) and at once when this process removes one (the scheduler's ``removing`` event).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..jobs import AUTO, EMBED, REMOVE, WATCHED, Done, Job, JobEvent, Removing
from ..models import IndexSummary
from ..paths import is_inside, normalise
from .batch import index_batch
from .debounce import Batch, Debouncer
from .observer import FolderObserver
from .plan import Plan, catch_up_plan, outermost, plan_changes
from .report import removal_names, summary_update
from .update import (
    CATCH_UP,
    CHANGE,
    CHECKING,
    EMBEDDED,
    ERROR,
    STATE_ERROR,
    STATE_MISSING,
    STATE_PAUSED,
    STATE_WATCHING,
    WATCHING,
    WatchUpdate,
)

if TYPE_CHECKING:
    from ..service_api import MemoryApi

log = logging.getLogger(__name__)
UpdateFn = Callable[[WatchUpdate], None]
StateFn = Callable[[bool, tuple[str, ...]], None]  # (all paused, paused folders): persist it
MISSING_RECHECK_S = 30.0  # while a folder is missing (unplugged drive), look for it again this often
ROOTS_POLL_S = 2.0  # an idle watch reads the library's folders this often (another process may add or remove one)


OVERFLOW_CATCH_UP_S = 2.0  # after the kernel dropped events: wait this long, then compare every folder again


class _Either(threading.Event):
    """Set when either flag is: the watcher stops, or the scheduler stops the job (quit, switching database)."""

    def __init__(self, a: threading.Event, b: threading.Event) -> None:
        super().__init__()
        self._a, self._b = a, b

    def is_set(self) -> bool:
        return self._a.is_set() or self._b.is_set()


class Watcher:
    """Watches every folder of the library (or only ``folders``), pausable per folder and for all."""

    def __init__(self, service: MemoryApi, *, folders: Sequence[str] | None = None,
                 on_update: UpdateFn | None = None, on_state: StateFn | None = None, embed: bool = True,
                 observer: FolderObserver | None = None) -> None:
        ws = service.settings.watch
        self._service = service
        self._only = [normalise(f) for f in folders] if folders is not None else None
        self._on_update = on_update
        self._on_state = on_state
        self._lock = threading.RLock()
        # folders named on the command line are watched whatever the app paused
        self._paused_all = bool(ws.paused_all) and folders is None
        self._paused: set[str] = {normalise(f) for f in ws.paused} if folders is None else set()
        self._library: list[str] = []
        # folders forgotten by a removal, counted: a sync whose read of the library began before one must not
        # bring it back from that stale read (the removal's own commit may land just after it)
        self._forgets = 0
        self._forgotten: list[str] = []
        self._errors: dict[str, str] = {}
        self._debouncer = Debouncer(ws.quiet_ms / 1000, ws.max_wait_ms / 1000, poll_s=ROOTS_POLL_S)
        self._observer = observer or FolderObserver(self._debouncer.add, on_overflow=self._overflowed)
        self._overflow_timer: threading.Timer | None = None
        self._cancel = threading.Event()
        self._job_cancel: threading.Event = self._cancel  # the running watch job's flag (see _in_writer)
        self._job_summary = IndexSummary()
        self._thread: threading.Thread | None = None
        self._scheduler = service.scheduler
        if not embed:  # `desktop-memory watch --no-embed`: this process's scheduler reads, it does not embed
            self._scheduler.auto_embed = False
        self._unsubscribe: Callable[[], None] | None = None
        self._removals_said: set[int] = set()  # removals finished by the scheduler whose end was said
        self._recheck: threading.Timer | None = None
        self.ready = threading.Event()  # set once the first catch-up is done (tests, benchmarks, the GUI wait on it)
        self._watching_reported = -1
        # the database itself may sit in a watched folder: its own writes are not changes to index
        db = str(getattr(service, "db_path", None) or service.settings.resolved_db_path())
        self._exclude = frozenset({db, db + "-wal", db + "-shm", db + "-journal"})  # our own writes

    # ---------- control (any thread) ----------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._observer.start()
        self._unsubscribe = self._scheduler.subscribe(self._scheduler_event)
        resumed = self._scheduler.resumed_removal  # finished at start, before we listened: said, like any removal
        if resumed is not None:
            self._say_removal(resumed, "finishing")
            if resumed.finished:  # (its own "done" may come too: said once)
                self._say_removal(resumed, "finished")
        self._thread = threading.Thread(target=self._run, name="desktop-memory-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching; a batch being indexed stops after its current document (committed work is kept)."""
        self._cancel.set()
        self._debouncer.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._recheck is not None:
            self._recheck.cancel()
        with self._lock:
            if self._overflow_timer is not None:
                self._overflow_timer.cancel()
        self._observer.stop()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _overflowed(self) -> None:
        """The kernel dropped events in a burst (a big branch switch): once the burst has had time to end, every
        folder is compared with the index (the same size/mtime catch-up as at start), so nothing stays stale."""
        with self._lock:
            if self._overflow_timer is not None and self._overflow_timer.is_alive():
                return  # one catch-up per burst
            timer = threading.Timer(OVERFLOW_CATCH_UP_S, self._debouncer.request, args=("catch-up",))
            timer.daemon = True
            self._overflow_timer = timer
        timer.start()

    def refresh(self) -> None:
        """The library's folders changed (added or removed): watch what is there now."""
        self._debouncer.request("refresh")

    def pause(self, folder: str | None = None) -> None:
        """Pause one folder's watch, or all (``folder=None``). Changes meanwhile are caught up on resume."""
        with self._lock:
            if folder is None:
                self._paused_all = True
            else:
                self._paused.add(normalise(folder))
        self._state_changed()

    def resume(self, folder: str | None = None) -> None:
        """Resume one folder (and, for ``None``, every folder): a catch-up scan finds what changed meanwhile."""
        with self._lock:
            if folder is None:
                self._paused_all = False
                self._paused.clear()
            else:
                self._paused.discard(normalise(folder))
        self._state_changed()

    def _state_changed(self) -> None:
        with self._lock:
            state = (self._paused_all, tuple(sorted(self._paused)))
        if self._on_state is not None:
            self._on_state(*state)
        self._debouncer.request("refresh")

    @property
    def paused_all(self) -> bool:
        with self._lock:
            return self._paused_all

    def folder_states(self) -> dict[str, str]:
        """Each library folder this watcher cares about → watching / paused / missing / error."""
        with self._lock:
            return {f: self._state_locked(f) for f in self._library}

    def watching_count(self) -> int:
        return sum(1 for s in self.folder_states().values() if s == STATE_WATCHING)

    def _state_locked(self, folder: str) -> str:
        if self._paused_all or folder in self._paused:
            return STATE_PAUSED
        if folder in self._errors:
            return STATE_ERROR
        if not os.path.isdir(folder):
            return STATE_MISSING
        return STATE_WATCHING

    def _active(self) -> list[str]:
        with self._lock:
            return [f for f in self._library if self._state_locked(f) in (STATE_WATCHING, STATE_ERROR)]

    # ---------- the worker thread ----------
    def _run(self) -> None:
        try:
            self._guarded(self._add_named_folders)
            self._guarded(self._sync_and_catch_up, False)
            self.ready.set()
            while True:
                batch = self._debouncer.next_batch()
                if batch is None:
                    return
                self._guarded(self._handle, batch)
        except Exception as exc:  # the thread must say why it stopped, never die silently
            self._emit(WatchUpdate(ERROR, f"watching stopped: {type(exc).__name__}: {exc}"))
            raise
        finally:
            self.ready.set()

    def _guarded(self, fn: Callable[..., None], *args: object) -> None:
        """One failed batch (database busy for too long, disk full) is reported; watching goes on."""
        if self._cancel.is_set():
            return
        try:
            fn(*args)
        except Exception as exc:
            log.warning("watch: %s", exc, exc_info=True)
            self._emit(WatchUpdate(ERROR, f"{exc} — these changes are caught up at the next start",
                                   watching=self.watching_count()))

    def _in_writer(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` as a watch job of the scheduler (on its writer thread, before any read or embedding)
        and wait for it; its error is raised here."""

        def work(cancel: threading.Event) -> IndexSummary:
            self._job_cancel = _Either(self._cancel, cancel)
            self._job_summary = IndexSummary()
            try:
                fn(*args)
            finally:
                self._job_cancel = self._cancel
            return self._job_summary  # what it added: the scheduler embeds it next

        job = self._scheduler.watch_batch(work, label=getattr(fn, "__name__", "watch"))
        while not job.finished and not self._cancel.is_set():
            job.wait(0.5)
        if job.error is not None:
            raise job.error

    def _handle(self, batch: Batch) -> None:
        whats = {what for what, _ in batch.requests}
        if whats - {"roots"}:  # after lost events ("catch-up"), every folder is compared, not only new ones
            self._sync_and_catch_up("catch-up" in whats)
        elif whats:
            self._follow_roots()
        if batch.changes:
            self._in_writer(self._apply, batch)

    def _follow_roots(self) -> None:
        """The library's folders as stored now: one another process added or removed is followed."""
        roots = [normalise(r) for r in self._service.roots()]
        if self._only is not None:
            roots = [r for r in roots if r in self._only]
        with self._lock:
            same = sorted(roots) == sorted(self._library)
        if not same:
            self._sync_and_catch_up(False)
        job = self._scheduler.finish_stalled_removal()  # one killed beside us is finished now, not at the next start
        if job is not None:
            self._say_removal(job, "finishing", "another process left unfinished")

    def _say_removal(self, job: Job, phase: str, why: str = "left unfinished") -> None:
        """A removal this process finishes by itself is said, with its size, then its end (issue 30 item 5)."""
        if phase == "finished":
            if job.id not in self._removals_said:
                self._removals_said.add(job.id)
                self._emit(WatchUpdate(CATCH_UP, f"finished the removal of {removal_names(job.paths)}: "
                                       f"{job.summary.removed:,} documents removed", removed=job.summary.removed,
                                       watching=self.watching_count()))
            return
        try:
            left = self._service.stats().removing_documents
        except Exception:  # a library that cannot be read just now: said without the count
            left = 0
        files = f" ({left:,} files)" if left else ""
        self._emit(WatchUpdate(CATCH_UP, f"finishing a removal {why}: {removal_names(job.paths)}{files}…",
                               watching=self.watching_count()))

    def _scheduler_event(self, event: JobEvent) -> None:
        """From the scheduler: a folder is being removed (stop watching it now), or an embedding finished."""
        match event:
            case Removing(paths=paths):
                self._forget(list(paths))
            case Done(job=job) if job.kind == REMOVE and job.source == AUTO:
                self._say_removal(job, "finished")
            case Done(job=job, summary=s) if job.kind == EMBED:
                if s.embed_error:
                    self._emit(WatchUpdate(ERROR, f"embedding stopped: {s.embed_error} (keyword search works)",
                                           watching=self.watching_count()))
                elif s.chunks_embedded:
                    self._emit(WatchUpdate(EMBEDDED, f"embedded {s.chunks_embedded} chunks ({s.embed_s:.2f} s)",
                                           chunks_embedded=s.chunks_embedded, elapsed_s=s.embed_s,
                                           watching=self.watching_count()))
            case _:
                pass  # the watcher's own batches report through their summaries (batch.py)

    def _forget(self, paths: list[str]) -> None:
        """Removed from the library: unwatched in the same step (the removal itself follows in the writer)."""
        gone = [normalise(p) for p in paths]
        with self._lock:
            self._forgets += 1
            self._forgotten = [*self._forgotten[-63:], *gone]
            before = len(self._library)
            self._library = [f for f in self._library if not any(is_inside(f, g) for g in gone)]
            changed = len(self._library) != before
        if not changed:
            return
        for folder in self._observer.watched():
            if any(is_inside(folder, g) for g in gone):
                self._observer.unwatch(folder)
        count = self.watching_count()
        self._watching_reported = count
        self._emit(WatchUpdate(WATCHING, f"watching {count} folder{'s' * (count != 1)}", watching=count))
        self.refresh()

    def _add_named_folders(self) -> None:
        """``watch FOLDER`` on a folder not in the library yet: index it first (that adds it)."""
        if not self._only:
            return
        known = set(self._service.roots())
        for folder in self._only:  # a folder inside a library folder is part of the library already
            if any(is_inside(folder, k) for k in known) or not os.path.isdir(folder):
                continue
            t0 = time.perf_counter()
            summary = self._scheduler.read([folder], source=WATCHED).wait()
            if summary is None:
                continue
            self._emit(self._summary_update(CATCH_UP, summary, removed_paths=[], events=0, t0=t0,
                                            prefix=f"added {folder}: "))

    def _sync(self) -> list[str]:
        """Bring the watches in line with the library and the pause state; returns the newly watched folders."""
        with self._lock:
            forgets = self._forgets
        roots = [normalise(r) for r in self._service.roots()]
        if self._only is not None:  # the named folders that are in the library (or inside one of its folders)
            roots = [f for f in self._only if any(is_inside(f, r) for r in roots)]
        with self._lock:
            if self._forgets != forgets:  # a removal forgot folders while we read: that read may predate it
                roots = [r for r in roots if not any(is_inside(r, g) for g in self._forgotten)]
            self._library = roots
        if self._debouncer.closed:
            return []
        want = outermost(self._active())
        have = self._observer.watched()
        for folder in have - set(want):
            self._observer.unwatch(folder)
        added: list[str] = []
        for folder in want:
            if folder in have:
                continue
            problem = self._observer.watch(folder)
            with self._lock:
                if problem:
                    self._errors[folder] = problem
                else:
                    self._errors.pop(folder, None)
            if problem:
                self._emit(WatchUpdate(ERROR, problem, watching=self.watching_count()))
            else:
                added.append(folder)
        self._recheck_missing()
        count = self.watching_count()
        if count != self._watching_reported:
            self._watching_reported = count
            paused = sum(1 for s in self.folder_states().values() if s == STATE_PAUSED)
            extra = f" ({paused} paused)" if paused else ""
            self._emit(WatchUpdate(WATCHING, f"watching {count} folder{'s' * (count != 1)}{extra}", watching=count))
        return added

    def _recheck_missing(self) -> None:
        """A missing folder (unplugged drive) gets no event when it comes back: look again every 30 s while one
        is missing; nothing runs otherwise."""
        missing = any(s == STATE_MISSING for s in self.folder_states().values())
        if missing and (self._recheck is None or not self._recheck.is_alive()) and not self._debouncer.closed:
            self._recheck = threading.Timer(MISSING_RECHECK_S, self.refresh)
            self._recheck.daemon = True
            self._recheck.start()

    def _sync_and_catch_up(self, every_folder: bool = False) -> None:
        """On this watcher's thread, not the writer's: the walk of a 50,000-file folder takes seconds, and only
        what it finds changed becomes a watch job (``_index_planned``), so edits and reads never wait for a walk."""
        added = self._sync()
        for folder in self._active():
            if not (every_folder or any(is_inside(folder, top) for top in added)):
                continue
            if self._cancel.is_set():
                return
            self._catch_up(folder)

    def _catch_up(self, folder: str) -> None:
        """Compare the folder with the index (size and mtime; nothing is opened) and index only what differs.

        The indexed files come from a range of the path index (only this folder's rows); the walk reports how far
        it got every second (``CHECKING``: the CLI prints it, the window's status bar shows it)."""
        t0 = time.perf_counter()
        known = self._service.indexed_under(folder)

        def walked(files: int) -> None:
            self._emit(WatchUpdate(CHECKING, f"checking {folder}: {files:,} of about {len(known):,} files…",
                                   elapsed_s=time.perf_counter() - t0, watching=self.watching_count()))

        plan = catch_up_plan(folder, known, self._service.settings.ingest, progress=walked, cancel=self._cancel,
                             excluded=self._service.exclusions())  # what the person removed stays out
        if plan is None:
            return  # stopped: the next start catches up
        scan_s = time.perf_counter() - t0
        if not plan:
            self._emit(WatchUpdate(CATCH_UP, f"{folder} is up to date (checked {plan.checked} files in {scan_s:.2f} s)",
                                   elapsed_s=scan_s, watching=self.watching_count()))
            return
        self._in_writer(self._index_planned, folder, plan, t0)

    def _index_planned(self, folder: str, plan: Plan, t0: float) -> None:
        """The writer's part of a catch-up, planned on the watcher's thread: only while the folder is still in
        the library as stored now (a folder removed since the walk is never indexed again)."""
        roots = [normalise(r) for r in self._service.roots()]
        if not any(is_inside(folder, r) for r in roots):
            return
        summary = self._index(plan)
        self._emit(self._summary_update(CATCH_UP, summary, removed_paths=plan.remove, events=0, t0=t0,
                                        prefix=f"caught up {folder}: "))

    def _apply(self, batch: Batch) -> None:
        t0 = time.perf_counter()
        self._sync()  # a folder removed from the library (here or by another process) is no longer indexed
        plan = plan_changes(batch.changes, self._active(), self._service.settings.ingest, self._exclude,
                            self._service.exclusions())  # an edit in a removed folder does not bring it back
        if not plan:
            return
        summary = self._index(plan)
        update = self._summary_update(CHANGE, summary, removed_paths=plan.remove, events=batch.events, t0=t0)
        if update.changed:
            self._emit(update)

    def _index(self, plan: Plan) -> IndexSummary:
        """Index first, remove second: a renamed file's chunks find their old twins still in the index and take
        their vectors over (duplicate promotion), so a rename costs no embedding."""
        summary = IndexSummary()
        if plan.index:
            summary = index_batch(self._service, plan.index, self._job_cancel)  # one bad entry skips itself
            self._job_summary.chunks_added += summary.chunks_added
        if plan.remove and not self._job_cancel.is_set():
            removed = self._service.remove_paths(plan.remove)
            summary.removed += removed
        return summary

    # ---------- reporting ----------
    def _summary_update(self, kind: str, summary: IndexSummary, *, removed_paths: Sequence[str], events: int,
                        t0: float, prefix: str = "") -> WatchUpdate:
        with self._lock:
            library = list(self._library)
        return summary_update(kind, summary, library, removed_paths=removed_paths, events=events,
                              elapsed=time.perf_counter() - t0, watching=self.watching_count(), prefix=prefix)

    def _emit(self, update: WatchUpdate) -> None:
        if self._on_update is None:
            return
        try:
            self._on_update(update)
        except Exception:  # a front end's bug must not stop the watch
            log.exception("watch update callback failed")
