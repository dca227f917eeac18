"""Run blocking core calls on worker threads and hand results back on the UI thread.

Why one module: every slow call (indexing, embedding, searching, model loading, opening the database) goes
through :class:`TaskRunner`, so there is exactly one place that knows about threads. A worker never touches a
widget; it emits signals on a :class:`Task` that lives on the UI thread, and Qt queues them across.

Channels give "latest wins" semantics: submitting on a channel bumps its generation, a queued task whose
generation is no longer the newest is not started at all, and a finished one is dropped silently. That is
how a slow, older search can never overwrite the results of a newer query.

Tests that need a task's result but not its threading build the runner with ``inline=True`` (or flip
``TaskRunner.inline_default`` for runners a window builds itself), like Picard's FakeThreadPool: the job runs on the
calling thread inside ``submit`` and its callbacks have run when ``submit`` returns, so no test waits on a clock.
"""

from __future__ import annotations

import logging
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)


class TaskContext:
    """What a worker function may use: a cancel flag and a thread-safe progress reporter.

    It holds no reference to the Task QObject (only its id, the runner's relay and the cancel event), so no
    Qt object is ever kept alive or released from a worker thread.
    """

    def __init__(self, relay: _Relay, task_id: int, cancel_event: threading.Event,
                 is_stale: Callable[[], bool]) -> None:
        self._relay = relay
        self._id = task_id
        self.cancel_event = cancel_event
        self._is_stale = is_stale

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def report(self, payload: Any) -> None:
        """Send progress to the UI thread (queued signal; safe from any thread)."""
        if not self._is_stale():
            self._relay.progress.emit(self._id, payload)


class Task(QObject):
    """Handle for one submitted job. Its signals are always delivered on the UI thread."""

    done = Signal(object)  # the function's return value
    failed = Signal(object, str)  # (exception, formatted traceback)
    progress = Signal(object)
    finished = Signal()  # after done/failed, or when dropped as stale

    def __init__(self, runner: TaskRunner, task_id: int, name: str, channel: str | None, generation: int) -> None:
        super().__init__(runner)
        self.id = task_id
        self.name = name
        self.channel = channel
        self.generation = generation
        self.cancel_event = threading.Event()
        self.running = True
        # weak: a strong reference would make runner <-> task a cycle, and the cyclic GC may then destroy a
        # parentless runner's QObjects from whichever thread it happens to run on (a worker's: a crash)
        self._runner = weakref.ref(runner)

    def cancel(self) -> None:
        """Ask the worker to stop (it checks ``cancel_event`` between files / batches)."""
        self.cancel_event.set()

    def is_stale(self) -> bool:
        """True when a newer task was submitted on the same channel."""
        runner = self._runner()
        return runner is None or runner.is_stale(self.channel, self.generation)


class _Relay(QObject):
    """One long-lived signal hub per runner: workers emit (task id, payload); Qt queues it to the UI thread."""

    done = Signal(int, object)
    failed = Signal(int, object, str)
    progress = Signal(int, object)
    dropped = Signal(int)


class _Runnable(QRunnable):
    def __init__(self, relay: _Relay, ctx: TaskContext, fn: Callable[..., Any], with_context: bool) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._relay = relay
        self._ctx = ctx
        self._fn: Callable[..., Any] | None = fn  # dropped once run: the task's closure is not kept alive
        self._with_context = with_context

    def run(self) -> None:  # worker thread
        ctx, fn, relay = self._ctx, self._fn, self._relay
        self._fn = None
        if fn is None:  # a QRunnable runs once; nothing to do if Qt ever ran it again
            return
        if ctx._is_stale():
            relay.dropped.emit(ctx._id)
            return
        try:
            result = fn(ctx) if self._with_context else fn()
        except BaseException as exc:
            relay.failed.emit(ctx._id, exc, traceback.format_exc())
        else:
            relay.done.emit(ctx._id, result)


class TaskRunner(QObject):
    """A small thread pool with per-channel generations.

    Use separate runners for long jobs (indexing, model loading) and quick queries (search, stats) so a
    long job can never starve a search of threads.
    """

    inline_default = False  # tests only: what ``inline=None`` means (see the module docstring)

    def __init__(self, parent: QObject | None = None, max_threads: int = 2, name: str = "tasks",
                 inline: bool | None = None) -> None:
        super().__init__(parent)
        self.inline = self.inline_default if inline is None else inline
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._pool.setObjectName(name)
        self._generations: dict[str, int] = {}
        self._live: dict[int, Task] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.progress.connect(self._on_progress)
        self._relay.dropped.connect(self._on_dropped)

    def generation(self, channel: str) -> int:
        with self._lock:
            return self._generations.get(channel, 0)

    def is_stale(self, channel: str | None, generation: int) -> bool:
        return channel is not None and self.generation(channel) != generation

    def invalidate(self, channel: str) -> None:
        """Make every pending/running task on ``channel`` stale (e.g. the query was cleared)."""
        with self._lock:
            self._generations[channel] = self._generations.get(channel, 0) + 1

    def submit(
        self,
        fn: Callable[..., Any],
        *,
        name: str = "",
        channel: str | None = None,
        with_context: bool = False,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException, str], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> Task:
        """Run ``fn()`` (or ``fn(ctx)`` with ``with_context``) on a worker; callbacks run on the UI thread."""
        gen = 0
        if channel is not None:
            with self._lock:
                gen = self._generations.get(channel, 0) + 1
                self._generations[channel] = gen
        self._next_id += 1
        task = Task(self, self._next_id, name or getattr(fn, "__name__", "task"), channel, gen)
        if on_done:
            task.done.connect(on_done)
        if on_error:
            task.failed.connect(on_error)
        if on_progress:
            task.progress.connect(on_progress)
        if on_finished:
            task.finished.connect(on_finished)
        self._live[task.id] = task
        ctx = TaskContext(self._relay, task.id, task.cancel_event, lambda: self.is_stale(channel, gen))
        runnable = _Runnable(self._relay, ctx, fn, with_context)
        if self.inline:  # the calling thread: the relay's signals connect directly, callbacks run before we return
            runnable.run()
        else:
            self._pool.start(runnable)
        return task

    def active(self) -> list[Task]:
        return [t for t in self._live.values() if t.running]

    def cancel_all(self) -> None:
        for t in list(self._live.values()):
            t.cancel()

    def wait(self, msecs: int = -1) -> bool:
        """Block until workers are idle (shutdown and tests only; never during normal UI work)."""
        return self._pool.waitForDone(msecs)

    # -- delivery on the UI thread --------------------------------------------------------------------------
    @Slot(int, object)
    def _on_done(self, task_id: int, result: object) -> None:
        task = self._live.get(task_id)
        if task is None:
            return
        if task.is_stale():
            log.debug("dropping stale result of %s (gen %s)", task.name, task.generation)
        else:
            task.done.emit(result)
        self._finish(task)

    @Slot(int, object, str)
    def _on_failed(self, task_id: int, exc: object, tb: str) -> None:
        task = self._live.get(task_id)
        if task is None:
            return
        if task.is_stale():
            log.debug("dropping stale error of %s: %r", task.name, exc)
        else:
            task.failed.emit(exc, tb)
        self._finish(task)

    @Slot(int, object)
    def _on_progress(self, task_id: int, payload: object) -> None:
        task = self._live.get(task_id)
        if task is not None and task.running and not task.is_stale():
            task.progress.emit(payload)

    @Slot(int)
    def _on_dropped(self, task_id: int) -> None:
        task = self._live.get(task_id)
        if task is not None:
            self._finish(task)

    def _finish(self, task: Task) -> None:
        task.running = False
        task.finished.emit()
        self._live.pop(task.id, None)
        task.deleteLater()  # UI thread: the worker holds no reference to it
