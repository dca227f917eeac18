"""Non-modal, dismissible message banners (errors, warnings, notices) shown above the content.

Why banners and not dialogs: a server that is down or a locked database should not block the window; the
user reads what happened and what to do, and keeps working (keyword search still works, for instance).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolButton, QVBoxLayout, QWidget

LEVELS = ("info", "success", "warning", "error")
_ICONS = {"info": "ℹ", "success": "✓", "warning": "⚠", "error": "⛔"}


class Banner(QFrame):
    """One message: icon, text (may be rich text), optional action buttons, a close button."""

    dismissed = Signal()

    def __init__(
        self,
        text: str,
        level: str = "info",
        actions: list[tuple[str, Callable[[], None]]] | None = None,
        key: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("Banner")
        self.setProperty("level", level if level in LEVELS else "info")
        self.key = key
        self.level = level
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 6, 6)
        lay.setSpacing(8)
        icon = QLabel(_ICONS.get(level, "ℹ"))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        lay.addWidget(icon)
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.label, 1)
        self.buttons: list[QPushButton] = []
        for label, cb in actions or []:
            b = QPushButton(label)
            b.setAutoDefault(False)
            b.clicked.connect(lambda _=False, cb=cb: self._run(cb))
            lay.addWidget(b, 0, Qt.AlignmentFlag.AlignVCenter)
            self.buttons.append(b)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss message")
        close.clicked.connect(self.dismiss)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)

    @property
    def text(self) -> str:
        return self.label.text()

    def _run(self, cb: Callable[[], None]) -> None:
        self.dismiss()
        cb()

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
        self.deleteLater()


class BannerArea(QWidget):
    """A vertical stack of banners. A banner with a ``key`` replaces an earlier one with the same key."""

    MAX = 4

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(4)
        self._banners: list[Banner] = []
        self.setVisible(False)

    def show_message(
        self,
        text: str,
        level: str = "info",
        *,
        key: str | None = None,
        actions: list[tuple[str, Callable[[], None]]] | None = None,
        timeout_ms: int | None = None,
    ) -> Banner:
        if key:
            self.dismiss(key)
        b = Banner(text, level, actions, key, self)
        b.dismissed.connect(lambda b=b: self._forget(b))
        self._banners.append(b)
        self._lay.addWidget(b)
        while len(self._banners) > self.MAX:
            self._banners[0].dismiss()
        self.setVisible(True)
        if timeout_ms:
            QTimer.singleShot(timeout_ms, lambda b=b: b.dismiss() if b in self._banners else None)
        return b

    def dismiss(self, key: str) -> None:
        for b in list(self._banners):
            if b.key == key:
                b.dismiss()

    def banners(self) -> list[Banner]:
        return list(self._banners)

    def texts(self) -> list[str]:
        return [b.text for b in self._banners]

    def _forget(self, b: Banner) -> None:
        if b in self._banners:
            self._banners.remove(b)
        self.setVisible(bool(self._banners))
