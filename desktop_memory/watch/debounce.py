"""Collect file-system events into calm batches: an event storm (a ``git checkout`` of 5,000 files, an editor's
save-via-rename) becomes one update, not thousands.

A batch is released once no event arrived for ``quiet_s`` (the storm is over), or ``max_wait_s`` after its first
event (a file that never stops changing still gets indexed). A batch that has grown past ``storm_paths`` paths is a
bulk operation (a checkout, an unpacked archive, a sync): it waits for quiet up to ``storm_wait_s``, so it becomes
one update even when git takes eight seconds to write it on a busy machine. Paths are deduplicated: a file written
ten times in a burst is indexed once. When nothing is pending the consumer blocks; with ``poll_s`` it wakes that
often with a ("roots", "") request (the watcher then reads the library's folders: one tiny query), else never.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Batch:
    """Changed paths (path → it was reported as a folder) and control requests, released together."""

    changes: dict[str, bool] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (what, folder): "refresh", "catch-up"
    events: int = 0  # raw events folded into ``changes``
    first_event: float = 0.0  # monotonic time of the oldest event in the batch


class Debouncer:
    """Thread-safe: the observer thread calls :meth:`add`, one consumer thread calls :meth:`next_batch`."""

    def __init__(self, quiet_s: float = 0.3, max_wait_s: float = 1.5, *, storm_paths: int = 200,
                 storm_wait_s: float = 20.0, clock: Callable[[], float] = time.monotonic,
                 poll_s: float | None = None) -> None:
        self.quiet_s = max(0.0, quiet_s)
        self.max_wait_s = max(self.quiet_s, max_wait_s)
        self.storm_paths = storm_paths
        self.storm_wait_s = max(self.max_wait_s, storm_wait_s)
        self._clock = clock
        self.poll_s = poll_s
        self._cond = threading.Condition()
        self._batch = Batch()
        self._last_event = 0.0
        self._closed = False
        # set whenever something arrives (or on close): long work on the consumer side (embedding) watches it to
        # step aside, so a fresh edit is indexed within the quiet period, not after minutes of embedding
        self.activity = threading.Event()

    def add(self, path: str, is_dir: bool = False) -> None:
        with self._cond:
            batch = self._batch
            now = self._clock()
            if not batch.changes:
                batch.first_event = now
            batch.changes[path] = batch.changes.get(path, False) or is_dir
            batch.events += 1
            self._last_event = now
            self.activity.set()
            self._cond.notify_all()

    def request(self, what: str, folder: str = "") -> None:
        """A control request for the consumer (handled at once, without waiting for quiet)."""
        with self._cond:
            if (what, folder) not in self._batch.requests:
                self._batch.requests.append((what, folder))
            self.activity.set()
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self.activity.set()
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def pending(self) -> bool:
        with self._cond:
            return bool(self._batch.changes or self._batch.requests)

    def next_batch(self) -> Batch | None:
        """Block until a batch is due and return it; None once closed (pending changes are dropped: the next
        start's catch-up scan finds them)."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                batch = self._batch
                if batch.requests:
                    return self._take()
                if batch.changes:
                    now = self._clock()
                    cap = self.storm_wait_s if len(batch.changes) >= self.storm_paths else self.max_wait_s
                    due = min(self._last_event + self.quiet_s, batch.first_event + cap)
                    if now >= due:
                        return self._take()
                    self._cond.wait(due - now)
                elif self.poll_s is None:
                    self._cond.wait()  # idle: no timeout, no wake-ups
                elif not self._cond.wait(self.poll_s) and not self._closed and not self._batch.requests \
                        and not self._batch.changes:
                    return Batch(requests=[("roots", "")])  # idle for poll_s: time to look at the library again

    def _take(self) -> Batch:
        batch, self._batch = self._batch, Batch()
        self.activity.clear()
        return batch
