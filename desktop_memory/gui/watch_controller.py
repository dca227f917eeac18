"""The window's side of live folders: runs the core :class:`~desktop_memory.watch.Watcher` and brings its updates
to the UI thread.

The watcher works on its own thread (it indexes through the service's writer there); its callback only emits a
signal, which Qt queues to this object's thread, the UI thread. So a 5,000-file branch switch arrives as ONE
queued update, and no widget is touched from a worker. Pausing is a flag plus a request to the worker: instant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance, Slot

from ..service_api import MemoryApi

if TYPE_CHECKING:  # the watch package (the walk, ignore rules, the indexer) is imported when a watch starts, on
    # the worker that opens the service (service_host.py), not before the window's first paint
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMainWindow

    from ..watch import Watcher, WatchUpdate
    from .library_view import LibraryView
    from .service_host import ServiceHost

# == watch.update's state and kind names (compared here; importing them would import the whole watch package)
STATE_PAUSED, STATE_WATCHING = "paused", "watching"
ERROR, EMBEDDED, CATCH_UP, CHECKING = "error", "embedded", "catch-up", "checking"

PersistFn = Callable[[bool, tuple[str, ...]], None]  # (all paused, paused folders) → save in settings


class WatchController(QObject):
    updated = Signal(object)  # a WatchUpdate, on the UI thread
    status_changed = Signal(str)  # "watching 3 folders" / "watching paused" ...

    _arrived = Signal(object)  # worker thread → UI thread

    def __init__(self, parent: QObject | None = None, *, persist: PersistFn | None = None,
                 factory: Callable[..., Watcher] | None = None) -> None:
        super().__init__(parent)
        self._persist = persist
        self._factory = factory
        self._watcher: Watcher | None = None
        self.last_update: WatchUpdate | None = None
        self.pause_action: QAction | None = None  # Library → Pause watching folders (install_watch)
        self._arrived.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    # ---------- life cycle ----------
    def start(self, service: MemoryApi) -> None:
        """Watch the library of ``service`` (call again after the service was reopened)."""
        self.stop()
        if self._factory is None:
            from ..watch import Watcher

            self._factory = Watcher
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

    @property
    def ready(self) -> bool:
        """The start-up catch-up is done: from now on a change arrives as a "change" update."""
        return self._watcher is not None and self._watcher.ready.is_set()

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


def install_watch(window: QMainWindow, host: ServiceHost, library: LibraryView, *, poke: Callable[[], None],
                  service_ready: SignalInstance, folders_changed: Sequence[SignalInstance]) -> WatchController:
    """Wire live folders into the main window with signals only: the watch starts when the library opens
    (``service_ready``, through ``host``), learns about added/removed folders (``folders_changed``), shows "watching
    N folders" in the window's status bar and each folder's state in ``library`` (whose context menu pauses/resumes
    a folder), adds **Library → Pause watching folders** (the controller's ``pause_action``), calls ``poke`` after a
    change (the Library and the counts catch up), and keeps pause state in settings (through ``host``).

    The window must call ``controller.stop()`` before it closes or replaces its service."""
    import dataclasses

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QLabel, QMenu

    from .window_menus import LIBRARY_MENU

    def persist(paused_all: bool, paused: tuple[str, ...]) -> None:  # settings are replaced, never edited
        watch = dataclasses.replace(host.settings.watch, paused_all=paused_all, paused=paused)
        host.replace(dataclasses.replace(host.settings, watch=watch))

    ctl = WatchController(window, persist=persist)
    label = QLabel("")
    label.setObjectName("Muted")
    label.setToolTip("Folders in the library are watched: changes are indexed as they happen")
    window.statusBar().addPermanentWidget(label)

    def show_states() -> None:
        label.setText(ctl.status_text())
        library.model.set_watch_states(ctl.folder_states())

    def updated(update: WatchUpdate) -> None:
        if update.changed or update.kind in (ERROR, CHECKING):  # CHECKING: a big folder's catch-up, each second
            window.statusBar().showMessage(update.message.splitlines()[0], 8000)
        if update.changed or update.kind in (EMBEDDED, CATCH_UP):
            poke()  # stats and the Library catch up (at most every 0.5 s)

    def start() -> None:
        if host.svc is not None:
            ctl.start(host.svc)

    service_ready.connect(start)
    for changed in folders_changed:  # a folder was added (a job ended) or removed
        changed.connect(lambda *_: ctl.refresh())
    ctl.status_changed.connect(lambda _text: show_states())
    ctl.updated.connect(updated)
    library.watch_pause_requested.connect(lambda folder, pause: ctl.set_paused(pause, folder))
    menu = window.menuBar().findChild(QMenu, LIBRARY_MENU)
    if menu is not None:
        menu.addSeparator()
        pause_all = QAction("Pause &watching folders", window, checkable=True)
        pause_all.setStatusTip("Stop indexing changes in library folders until resumed (then catch up)")
        pause_all.triggered.connect(ctl.set_paused)  # by the user only (not by setChecked below)
        menu.aboutToShow.connect(lambda: pause_all.setChecked(ctl.paused_all))
        menu.addAction(pause_all)
        ctl.pause_action = pause_all
    return ctl
