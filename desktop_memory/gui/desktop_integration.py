"""The app's place on the desktop around the main window: the tray icon, the quick-search popup and the requests
of a second `desktop-memory-gui` (single instance).

``install_shell`` is called once by gui/app.py after the window is built. It listens for a second
`desktop-memory-gui` (gui/single_instance.py), answers ``quick`` with the popup, ``show`` with the window (and
indexes any paths it was given), adds the tray icon when the desktop has a tray, and keeps the app in the tray when
the window closes if the person chose that ([tray] close_to_tray, off by default). What it uses of the window is
:class:`ShellWindow`, nothing more.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QEvent, QObject, QTimer, SignalInstance
from PySide6.QtWidgets import QApplication, QStatusBar, QSystemTrayIcon, QWidget

from .quick_popup import QuickPopup
from .search_controller import SearchController, SearchRequest
from .tasks import TaskRunner
from .tray import Tray

if TYPE_CHECKING:
    from .context_panel import ContextPanel
    from .instance_server import InstanceServer
    from .service_host import ServiceHost
    from .watch_controller import WatchController

log = logging.getLogger(__name__)


class ShellWindow(Protocol):
    """What the tray, the popup and a second instance's requests use of the main window (gui/main_window.py)."""

    @property
    def host(self) -> ServiceHost: ...  # the settings (read, and replaced for close-to-tray) and the open library

    @property
    def searcher(self) -> SearchController: ...  # whether the model still loads (the popup says keyword-only)

    @property
    def context_panel(self) -> ContextPanel: ...  # the one token budget, the window's

    @property
    def watch(self) -> WatchController: ...  # the tray's Pause watching

    @property
    def service_ready(self) -> SignalInstance: ...

    @property
    def quick_search_requested(self) -> SignalInstance: ...  # File ▸ Quick search

    def add_paths(self, paths: list[str]) -> None: ...  # a second instance's `desktop-memory-gui FILE…`

    def save_state(self) -> None: ...  # before hiding in the tray

    # the window as a widget: shown, hidden, closed, its Close event filtered
    def statusBar(self) -> QStatusBar: ...

    def isMinimized(self) -> bool: ...

    def showNormal(self) -> None: ...

    def show(self) -> None: ...

    def hide(self) -> None: ...

    def raise_(self) -> None: ...

    def activateWindow(self) -> None: ...

    def close(self) -> bool: ...


def _as_widget(window: ShellWindow) -> QWidget:
    """The window as a Qt widget: the parent of what the shell makes (they live as long as it does), whose Close
    event the shell filters."""
    assert isinstance(window, QWidget), "the shell surrounds a real window"
    return window


class DesktopShell(QObject):
    def __init__(self, app: QApplication, window: ShellWindow, server: InstanceServer | None = None, *,
                 tray: bool = True) -> None:
        widget = _as_widget(window)
        super().__init__(widget)
        self.app = app
        self.window = window
        self._widget = widget
        self.server = server
        self.popup: QuickPopup | None = None
        self._quitting = False
        self._told = False  # the "still running in the tray" message is shown once
        self.tray: Tray | None = None
        if tray and QSystemTrayIcon.isSystemTrayAvailable():
            watcher = window.watch
            self.tray = Tray(close_to_tray=window.host.settings.tray.close_to_tray, can_pause=True,
                             parent=self, menu_parent=widget)
            self.tray.quick_requested.connect(self.show_quick)
            self.tray.show_requested.connect(self.show_window)
            self.tray.quit_requested.connect(self.quit)
            self.tray.close_to_tray_toggled.connect(self._set_close_to_tray)
            self.tray.set_paused(watcher.paused_all)
            self.tray.pause_toggled.connect(watcher.set_paused)
            watcher.status_changed.connect(lambda _text: self._sync_pause(watcher))
            self.tray.show()
        if server is not None:
            server.message.connect(self.handle)
        window.quick_search_requested.connect(self.show_quick)  # File ▸ Quick search: reachable without a tray
        widget.installEventFilter(self)

    def _sync_pause(self, watcher: WatchController) -> None:
        if self.tray is not None:  # paused from the window (File → Pause watching): the tray's tick follows
            self.tray.set_paused(watcher.paused_all)

    # ------------------------------------------------------------------ requests from a second process
    def handle(self, msg: dict[str, Any]) -> None:
        cmd = msg.get("cmd")
        if cmd == "quick":
            self.show_quick()
        elif cmd == "show":
            self.show_window()
            raw = msg.get("paths")  # checked by the server's schema; a list of absolute paths, never a string
            paths = [p for p in raw if isinstance(p, str) and os.path.isabs(p)] if isinstance(raw, list) else []
            if paths:
                self.window.add_paths(paths)
        else:
            log.info("single instance: unknown request %r", cmd)

    def show_quick(self) -> QuickPopup:
        if self.popup is None:
            # its own worker runner: the window's channels (search, context) stay the window's
            self._runner = runner = TaskRunner(None, max_threads=2, name="quick")
            # owned by the window (a Tool window still shows while the window hides in the tray): Qt, not Python's
            # cyclic GC, decides when it goes, so it is never destroyed from a worker thread
            self.popup = QuickPopup(runner, self._request, self.window.host.settings.context.budget_tokens,
                                    self._widget)
            runner.setParent(self.popup)
            self.popup.copied.connect(self._copied)
            self.popup.budget_raised.connect(self.window.context_panel.budget.setValue)  # one budget, the window's
            # typed while the library was still opening (a cold `--quick` start): search once it is open
            self.window.service_ready.connect(self._library_opened)
        self.popup.set_service(self.window.host.svc)
        self.popup.context.set_budget(self.window.context_panel.budget.value())
        self.popup.summon()
        return self.popup

    def _request(self, query: str) -> SearchRequest:
        """A popup search as the window would run it: the app's backend and top-k, no filters, keyword-only
        (and saying so) while the model loads."""
        assert self.popup is not None
        self.popup.set_service(self.window.host.svc)
        self.popup.searcher.semantic_loading = self.window.searcher.semantic_loading
        s = self.window.host.settings.search
        return SearchRequest(query, backend=s.backend, top_k=s.top_k)

    def _library_opened(self) -> None:
        if self.popup is not None:
            self.popup.set_service(self.window.host.svc)
            if self.popup.isVisible() and self.popup.box.text().strip():
                self.popup.run_search()

    def show_window(self) -> None:
        w = self.window
        if w.isMinimized():
            w.showNormal()
        w.show()
        w.raise_()
        w.activateWindow()

    def _copied(self, what: str) -> None:
        if what == "context":
            self.window.statusBar().showMessage("Context block copied from quick search: paste it into your chat.",
                                                5000)

    # ------------------------------------------------------------------ closing and quitting
    def _set_close_to_tray(self, on: bool) -> None:
        s = self.window.host.settings  # replaced, never edited (ServiceHost.replace also saves it)
        self.window.host.replace(dataclasses.replace(s, tray=dataclasses.replace(s.tray, close_to_tray=on)))

    def keeps_running(self) -> bool:
        return (not self._quitting and self.tray is not None and self.tray.is_visible()
                and self.window.host.settings.tray.close_to_tray)

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self._widget and e.type() == QEvent.Type.Close:
            window = self.window
            if self.keeps_running():
                e.ignore()
                window.save_state()
                window.hide()
                if not self._told and self.tray is not None:
                    self._told = True
                    self.tray.notify("Desktop Memory is still running",
                                     "Quick search and the window are in the tray menu; Quit there to stop it.")
                return True
            self._quitting = True
            self.close()
            QTimer.singleShot(0, self.app.quit)  # the popup or a hidden window must not keep the app alive
        return super().eventFilter(obj, e)

    def quit(self) -> None:
        self._quitting = True
        self.window.close()

    def close(self) -> None:
        if self.popup is not None:
            self.popup.hide()
            self.popup.searcher.clear()  # no search starts after this (a pending debounce included)
            self.popup.set_service(None)
            self._runner.wait(5000)  # before the window closes the service under it
        if self.tray is not None:
            self.tray.hide()
        if self.server is not None:
            self.server.close()


def install_shell(app: QApplication, window: ShellWindow, *, quick: bool = False) -> DesktopShell:
    """Tray, popup and single-instance server around ``window``; ``quick`` opens the popup now."""
    from .single_instance import make_server

    server = make_server(window.host.settings.resolved_db_path(), _as_widget(window))
    shell = DesktopShell(app, window, server)
    if quick:
        shell.show_quick()
    return shell
