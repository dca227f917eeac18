"""Keep the library's folders in sync with the disk: watch, debounce, and index through the service.

Thread model: watchdog's observer thread only records changed paths in the :class:`Debouncer`. ONE worker thread
(``desktop-memory-watch``) takes the batches and calls the service's ``index_paths`` / ``remove_paths`` /
``embed_pending_summary``: the same incremental path as a manual re-index (content hash, vector reuse, one
transaction per document), through the service's writer, never a connection of its own per event. Front ends get
:class:`WatchUpdate` values through a callback, on the worker thread (the GUI re-posts them to its UI thread).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..models import IndexSummary
from .debounce import Batch, Debouncer
from .observer import FolderObserver
from .plan import Plan, catch_up_plan, is_inside, plan_changes
from .update import (
    CATCH_UP,
    CHANGE,
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
SHOWN_PATHS = 3  # file names in one update line
MISSING_RECHECK_S = 30.0  # while a folder is missing (unplugged drive), look for it again this often
EMBED_MIN_S = 0.5  # embedding works at least this long before stepping aside for new changes (no starvation)


def _norm(folder: str) -> str:
    return os.path.abspath(os.path.expanduser(folder))


def outermost(folders: Iterable[str]) -> list[str]:
    """The folders not inside another one of them: one recursive watch each covers the rest."""
    result: list[str] = []
    for f in sorted(set(folders), key=len):
        if not any(is_inside(f, top) for top in result):
            result.append(f)
    return sorted(result)


OVERFLOW_CATCH_UP_S = 2.0  # after the kernel dropped events: wait this long, then compare every folder again


class _StepAside(threading.Event):
    """The cancel flag embedding polls between slices: set once a new change is waiting and the round has worked
    for ``min_s`` (so a file rewritten every 100 ms cannot starve embedding), or when the watcher stops."""

    def __init__(self, debouncer: Debouncer, min_s: float) -> None:
        super().__init__()
        self._debouncer = debouncer
        self._until = time.monotonic() + min_s

    def is_set(self) -> bool:
        if super().is_set() or self._debouncer.closed:
            return True
        return self._debouncer.activity.is_set() and time.monotonic() >= self._until


class Watcher:
    """Watches every folder of the library (or only ``folders``), pausable per folder and for all."""

    def __init__(self, service: MemoryApi, *, folders: Sequence[str] | None = None,
                 on_update: UpdateFn | None = None, on_state: StateFn | None = None, embed: bool = True,
                 observer: FolderObserver | None = None) -> None:
        ws = service.settings.watch
        self._service = service
        self._only = [_norm(f) for f in folders] if folders is not None else None
        self._on_update = on_update
        self._on_state = on_state
        self._embed = embed
        self._lock = threading.RLock()
        # folders named on the command line are watched whatever the app paused
        self._paused_all = bool(ws.paused_all) and folders is None
        self._paused: set[str] = {_norm(f) for f in ws.paused} if folders is None else set()
        self._library: list[str] = []
        self._errors: dict[str, str] = {}
        self._debouncer = Debouncer(ws.quiet_ms / 1000, ws.max_wait_ms / 1000)
        self._observer = observer or FolderObserver(self._debouncer.add, on_overflow=self._overflowed)
        self._overflow_timer: threading.Timer | None = None
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._embed_due = False
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
        self._thread = threading.Thread(target=self._run, name="desktop-memory-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching; a batch being indexed stops after its current document (committed work is kept)."""
        self._cancel.set()
        self._debouncer.close()
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
                self._paused.add(_norm(folder))
        self._state_changed()

    def resume(self, folder: str | None = None) -> None:
        """Resume one folder (and, for ``None``, every folder): a catch-up scan finds what changed meanwhile."""
        with self._lock:
            if folder is None:
                self._paused_all = False
                self._paused.clear()
            else:
                self._paused.discard(_norm(folder))
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
            self._guarded(self._sync_and_catch_up)
            self.ready.set()
            while True:
                batch = self._debouncer.next_batch()
                if batch is None:
                    return
                self._guarded(self._handle, batch)
                if self._embed_due and not self._debouncer.pending():
                    self._guarded(self._embed_pending)
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

    def _handle(self, batch: Batch) -> None:
        if batch.requests:  # after lost events ("catch-up"), every folder is compared, not only new ones
            self._sync_and_catch_up(every_folder=any(what == "catch-up" for what, _ in batch.requests))
        if batch.changes:
            self._apply(batch)

    def _add_named_folders(self) -> None:
        """``watch FOLDER`` on a folder not in the library yet: index it first (that adds it)."""
        if not self._only:
            return
        known = set(self._service.roots())
        for folder in self._only:  # a folder inside a library folder is part of the library already
            if any(is_inside(folder, k) for k in known) or not os.path.isdir(folder):
                continue
            t0 = time.perf_counter()
            summary = self._service.index_paths([folder], cancel=self._cancel, embed=False)
            self._embed_due = True
            self._emit(self._summary_update(CATCH_UP, summary, removed_paths=[], events=0, t0=t0,
                                            prefix=f"added {folder}: "))

    def _sync(self) -> list[str]:
        """Bring the watches in line with the library and the pause state; returns the newly watched folders."""
        roots = [_norm(r) for r in self._service.roots()]
        if self._only is not None:  # the named folders that are in the library (or inside one of its folders)
            roots = [f for f in self._only if any(is_inside(f, r) for r in roots)]
        with self._lock:
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
        added = self._sync()
        for folder in self._active():
            if not (every_folder or any(is_inside(folder, top) for top in added)):
                continue
            if self._cancel.is_set():
                return
            self._catch_up(folder)

    def _catch_up(self, folder: str) -> None:
        """Compare the folder with the index (size and mtime; nothing is opened) and index only what differs."""
        t0 = time.perf_counter()
        prefix = folder.rstrip(os.sep) + os.sep
        known = {d.path: (d.size, d.mtime) for d in self._service.documents() if d.path.startswith(prefix)}
        plan = catch_up_plan(folder, known, self._service.settings.ingest)
        scan_s = time.perf_counter() - t0
        if not plan:
            self._emit(WatchUpdate(CATCH_UP, f"{folder} is up to date (checked {len(known)} files in {scan_s:.2f} s)",
                                   elapsed_s=scan_s, watching=self.watching_count()))
            return
        summary = self._index(plan)
        self._emit(self._summary_update(CATCH_UP, summary, removed_paths=plan.remove, events=0, t0=t0,
                                        prefix=f"caught up {folder}: "))

    def _apply(self, batch: Batch) -> None:
        t0 = time.perf_counter()
        self._sync()  # a folder removed from the library (here or by another process) is no longer indexed
        plan = plan_changes(batch.changes, self._active(), self._service.settings.ingest, self._exclude)
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
            summary = self._service.index_paths(plan.index, cancel=self._cancel, embed=False)
            self._embed_due = self._embed_due or summary.chunks_added > 0
        if plan.remove and not self._cancel.is_set():
            removed = self._service.remove_paths(plan.remove)
            summary.removed += removed
        return summary

    def _embed_pending(self) -> None:
        if not self._embed:
            self._embed_due = False
            return
        t0 = time.perf_counter()
        summary = self._service.embed_pending_summary(cancel=_StepAside(self._debouncer, EMBED_MIN_S))
        self._embed_due = summary.cancelled  # stepped aside for new changes: finish after them
        if summary.embed_error:
            self._emit(WatchUpdate(ERROR, f"embedding stopped: {summary.embed_error} (keyword search works)",
                                   watching=self.watching_count()))
        if summary.chunks_embedded:
            elapsed = time.perf_counter() - t0
            self._emit(WatchUpdate(EMBEDDED, f"embedded {summary.chunks_embedded} chunks ({elapsed:.2f} s)",
                                   chunks_embedded=summary.chunks_embedded, elapsed_s=elapsed,
                                   watching=self.watching_count()))

    # ---------- reporting ----------
    def _summary_update(self, kind: str, summary: IndexSummary, *, removed_paths: Sequence[str], events: int,
                        t0: float, prefix: str = "") -> WatchUpdate:
        touched = [o.path for o in summary.outcomes if o.status in ("indexed", "failed", "skipped")]
        touched += list(removed_paths) if summary.removed else []
        parts = [f"{name} {n}" for name, n in (("indexed", summary.indexed), ("removed", summary.removed),
                                                 ("failed", summary.failed), ("skipped", summary.skipped)) if n]
        elapsed = time.perf_counter() - t0
        shown = ", ".join(self._display(p) for p in touched[:SHOWN_PATHS])
        more = f" (+{len(touched) - SHOWN_PATHS} more)" if len(touched) > SHOWN_PATHS else ""
        what = ", ".join(parts) or "no changes"
        detail = f": {shown}{more}" if shown else ""
        from_events = f"{events} events, " if events else ""
        message = f"{prefix}{what}{detail} ({from_events}{elapsed:.2f} s)"
        for o in summary.outcomes:
            if o.status == "failed":
                message += f"\n  failed {self._display(o.path)}: {o.reason}"
        return WatchUpdate(kind, message, indexed=summary.indexed, removed=summary.removed,
                           unchanged=summary.unchanged, skipped=summary.skipped, failed=summary.failed,
                           events=events, paths=tuple(touched), elapsed_s=elapsed, watching=self.watching_count())

    def _display(self, path: str) -> str:
        with self._lock:
            holders = [f for f in self._library if is_inside(path, f)]
        if not holders:
            return path
        root = max(holders, key=len)
        return os.path.join(os.path.basename(root), os.path.relpath(path, root))

    def _emit(self, update: WatchUpdate) -> None:
        if self._on_update is None:
            return
        try:
            self._on_update(update)
        except Exception:  # a front end's bug must not stop the watch
            log.exception("watch update callback failed")
