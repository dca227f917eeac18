"""A thin wrapper over watchdog: one recursive watch per folder, every relevant event handed to a sink.

watchdog picks the platform's native API (inotify, FSEvents, ReadDirectoryChangesW), which blocks in the kernel
while nothing happens: an idle watch costs no CPU. Qt's QFileSystemWatcher is not recursive, hence watchdog.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

Sink = Callable[[str, bool], None]  # (path, is a folder)

# events that say nothing about content: a file opened or closed without writing, a folder's own mtime moving
_QUIET = frozenset({"opened", "closed_no_write"})


class _Handler(FileSystemEventHandler):
    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _QUIET or (event.is_directory and event.event_type in ("modified", "closed")):
            return
        self._sink(os.fsdecode(event.src_path), event.is_directory)
        dest = os.fsdecode(event.dest_path) if event.dest_path else ""
        if dest:
            self._sink(dest, event.is_directory)


# watchdog says that the kernel dropped events (inotify's queue overflowed in a burst such as a big `git checkout`)
# only in its log, under this logger; the handler below turns it into a callback so the watcher can catch up
OVERFLOW_LOGGER = "watchdog.observers"
OVERFLOW_MESSAGE = "Inotify queue overflowed"


class _OverflowLog(logging.Handler):
    def __init__(self, callback: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith(OVERFLOW_MESSAGE):
            self._callback()


class FolderObserver:
    """Recursive watches keyed by folder; safe to call from any thread. ``on_overflow`` is called when the kernel
    dropped events (changes were lost: the caller compares the folders with the index again)."""

    def __init__(self, sink: Sink, observer_factory: Callable[[], BaseObserver] = Observer,
                 on_overflow: Callable[[], None] | None = None) -> None:
        self._handler = _Handler(sink)
        self._observer = observer_factory()
        self._watches: dict[str, ObservedWatch] = {}
        self._lock = threading.Lock()
        self._started = False
        self._overflow = _OverflowLog(on_overflow) if on_overflow is not None else None
        if self._overflow is not None:
            logging.getLogger(OVERFLOW_LOGGER).addHandler(self._overflow)

    def start(self) -> None:
        with self._lock:
            if not self._started:
                self._observer.start()
                self._started = True

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            if self._started:
                self._observer.stop()
                self._observer.join(timeout)
                self._started = False
            self._watches.clear()
        if self._overflow is not None:
            logging.getLogger(OVERFLOW_LOGGER).removeHandler(self._overflow)

    def watch(self, folder: str) -> str | None:
        """Start watching ``folder`` recursively; returns None, or why it cannot be watched."""
        with self._lock:
            if folder in self._watches:
                return None
            try:
                self._watches[folder] = self._observer.schedule(self._handler, folder, recursive=True)
            except OSError as exc:
                return _watch_error(folder, exc)
            return None

    def unwatch(self, folder: str) -> None:
        with self._lock:
            watch = self._watches.pop(folder, None)
            if watch is not None:
                try:
                    self._observer.unschedule(watch)
                except (KeyError, OSError):  # the folder vanished and its emitter already stopped
                    pass

    def watched(self) -> set[str]:
        with self._lock:
            return set(self._watches)


def _watch_error(folder: str, exc: OSError) -> str:
    import errno

    if exc.errno in (errno.ENOSPC, errno.EMFILE):
        return (f"cannot watch {folder}: the system's limit of watched folders is reached (on Linux raise "
                "fs.inotify.max_user_watches); indexing by hand still works")
    if isinstance(exc, FileNotFoundError):
        return f"cannot watch {folder}: it does not exist (unplugged drive or moved?)"
    if isinstance(exc, PermissionError):
        return f"cannot watch {folder}: permission denied"
    return f"cannot watch {folder}: {exc.strerror or exc}"
