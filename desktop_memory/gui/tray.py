"""The tray icon: Quick search, Show window, Pause watching (when the app watches folders), Quit.

It only emits requests; gui/desktop_integration.py decides what they do. A click on the icon shows the window, a
middle click opens the quick-search popup.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from .style import app_icon


class Tray(QObject):
    quick_requested = Signal()
    show_requested = Signal()
    quit_requested = Signal()
    pause_toggled = Signal(bool)  # True = pause watching
    close_to_tray_toggled = Signal(bool)

    def __init__(self, *, close_to_tray: bool, can_pause: bool = False, parent: QObject | None = None,
                 menu_parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(app_icon(), self)
        self.icon.setToolTip("Desktop Memory")
        # owned by a widget (the window): Qt decides when it goes, never Python's cyclic GC on a worker thread
        self.menu = QMenu(menu_parent)
        self.act_quick = self._action("&Quick search", self.quick_requested.emit)
        self.act_show = self._action("&Show window", self.show_requested.emit)
        self.menu.addSeparator()
        self.act_pause: QAction | None = None
        if can_pause:
            self.act_pause = QAction("&Pause watching", self.menu, checkable=True)
            self.act_pause.toggled.connect(self.pause_toggled.emit)
            self.menu.addAction(self.act_pause)
        self.act_keep = QAction("&Keep running here when the window closes", self.menu, checkable=True)
        self.act_keep.setChecked(close_to_tray)
        self.act_keep.toggled.connect(self.close_to_tray_toggled.emit)
        self.menu.addAction(self.act_keep)
        self.menu.addSeparator()
        self.act_quit = self._action("Q&uit", self.quit_requested.emit)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)

    def _action(self, text: str, slot: Callable[[], None]) -> QAction:
        a = QAction(text, self.menu)
        a.triggered.connect(lambda _=False: slot())
        self.menu.addAction(a)
        return a

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.MiddleClick:
            self.quick_requested.emit()
        elif reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_requested.emit()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def is_visible(self) -> bool:
        return self.icon.isVisible()

    def set_paused(self, paused: bool) -> None:
        if self.act_pause is not None:
            self.act_pause.blockSignals(True)
            self.act_pause.setChecked(paused)
            self.act_pause.blockSignals(False)

    def notify(self, title: str, text: str) -> None:
        if QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, text, app_icon(), 4000)
