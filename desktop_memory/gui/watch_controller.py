"""The window's side of live folders: runs the core :class:`~desktop_memory.watch.Watcher` and brings its updates
to the UI thread.

The watcher works on its own thread (it indexes through the service's writer there); its callback only emits a
signal, which Qt queues to this object's thread, the UI thread. So a 5,000-file branch switch arrives as ONE
queued update, and no widget is touched from a worker. Pausing is a flag plus a request to the worker: instant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..watch import STATE_PAUSED, STATE_WATCHING, Watcher, WatchUpdate

PersistFn = Callable[[bool, tuple[str, ...]], None]  # (all paused, paused folders) → save in settings


class WatchController(QObject):
    updated = Signal(object)  # a WatchUpdate, on the UI thread
    status_changed = Signal(str)  # "watching 3 folders" / "watching paused" ...

    _arrived = Signal(object)  # worker thread → UI thread

    def __init__(self, parent: QObject | None = None, *, persist: PersistFn | None = None,
                 factory: Callable[..., Watcher] = Watcher) -> None:
        super().__init__(parent)
        self._persist = persist
        self._factory = factory
        self._watcher: Watcher | None = None
        self.last_update: WatchUpdate | None = None
        self._arrived.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    # ---------- life cycle ----------
    def start(self, service: Any) -> None:
        """Watch the library of ``service`` (call again after the service was reopened)."""
        self.stop()
        self._watcher = self._factory(service, on_update=self._arrived.emit, on_state=self._state_changed)
        self._watcher.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the watch; waits at most ``timeout`` for the batch in progress (it stops after one document)."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop(timeout)

    @property
    def running(self) -> bool:
        return self._watcher is not None and self._watcher.running

    def refresh(self) -> None:
        """The library's folders changed (a folder added or removed): watch what is there now."""
        if self._watcher is not None:
            self._watcher.refresh()

    # ---------- pause / resume ----------
    def pause(self, folder: str | None = None) -> None:
        if self._watcher is not None:
            self._watcher.pause(folder)
            self.status_changed.emit(self.status_text())

    def resume(self, folder: str | None = None) -> None:
        if self._watcher is not None:
            self._watcher.resume(folder)
            self.status_changed.emit(self.status_text())

    def set_paused(self, paused: bool, folder: str | None = None) -> None:
        (self.pause if paused else self.resume)(folder)

    @property
    def paused_all(self) -> bool:
        return self._watcher is not None and self._watcher.paused_all

    def is_paused(self, folder: str) -> bool:
        return self.folder_states().get(folder) == STATE_PAUSED

    # ---------- state for the window ----------
    def folder_states(self) -> dict[str, str]:
        """Library folder → watching / paused / missing / error (empty before the first sync)."""
        return self._watcher.folder_states() if self._watcher is not None else {}

    def watching_count(self) -> int:
        return sum(1 for s in self.folder_states().values() if s == STATE_WATCHING)

    def status_text(self) -> str:
        if self._watcher is None:
            return ""
        if self._watcher.paused_all:
            return "watching paused"
        n = self.watching_count()
        return f"watching {n} folder{'s' * (n != 1)}" if n or self.folder_states() else ""

    # ---------- plumbing ----------
    def _state_changed(self, paused_all: bool, paused: tuple[str, ...]) -> None:
        if self._persist is not None:
            self._persist(paused_all, paused)

    @Slot(object)
    def _deliver(self, update: WatchUpdate) -> None:
        self.last_update = update
        self.updated.emit(update)
        self.status_changed.emit(self.status_text())
