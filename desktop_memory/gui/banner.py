"""Non-modal, dismissible message banners (errors, warnings, notices) shown above the content.

Why banners and not dialogs: a server that is down or a locked database should not block the window; the
user reads what happened and what to do, and keeps working (keyword search still works, for instance). Compact:
tight margins, and only the newest VISIBLE banners are shown, the others behind one "N more messages" line, so a few
notices never eat the results on a 600-pixel-high screen.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
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
        lay.setContentsMargins(8, 2, 2, 2)
        lay.setSpacing(6)
        icon = QLabel(_ICONS.get(level, "ℹ"))
        lay.addWidget(icon, 0, Qt.AlignmentFlag.AlignVCenter)
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
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignVCenter)

    @property
    def text(self) -> str:
        return self.label.text()

    def resizeEvent(self, e: QResizeEvent) -> None:
        """The text's real height at the width it got (a wrapping label's own hint reserves 2–3 lines): one line of
        text makes a one-line banner; a long one wraps in full, never clipped."""
        super().resizeEvent(e)
        need = max(self.label.heightForWidth(self.label.width()), self.label.fontMetrics().height())
        if need != self.label.minimumHeight() or need != self.label.maximumHeight():
            self.label.setFixedHeight(need)

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
    VISIBLE = 2  # the most severe (newest among equals); the rest behind "+N more"
    SHORT_WINDOW = 700  # px: in a shorter window one banner shows, so the window's minimum still fits the screen

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)  # the stack, and beside it (costing no height) the "N more" toggle
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self._lay = QVBoxLayout()
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(2)
        row.addLayout(self._lay, 1)
        self._banners: list[Banner] = []
        self._expanded = False
        self.more = QToolButton(self)
        self.more.setAutoRaise(True)
        self.more.setObjectName("BannerMore")
        self.more.clicked.connect(self._toggle_more)
        row.addWidget(self.more, 0, Qt.AlignmentFlag.AlignBottom)
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
        self.arrange()
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

    def shown(self) -> list[Banner]:
        """The banners on screen now (the newest VISIBLE unless the person asked for all)."""
        return [b for b in self._banners if not b.isHidden()]

    def arrange(self) -> None:
        """Show the VISIBLE most severe banners (the newest among equals), in the order they came (the window calls
        this when its height changes: one banner in a short window)."""
        visible = 1 if self.window().height() < self.SHORT_WINDOW else self.VISIBLE
        hidden = 0 if self._expanded else max(0, len(self._banners) - visible)
        by_weight = sorted(range(len(self._banners)),
                           key=lambda i: (LEVELS.index(self._banners[i].level) if self._banners[i].level in LEVELS
                                          else 0, i))
        keep = set(by_weight[hidden:])
        for i, b in enumerate(self._banners):
            b.setVisible(i in keep)
        self.more.setVisible(hidden > 0 or (self._expanded and len(self._banners) > visible))
        self.more.setText(f"+{hidden} more" if hidden else "Fewer")
        self.more.setToolTip(f"Show {hidden} older message{'s' if hidden != 1 else ''}" if hidden else
                             "Show only the newest messages")
        self.setVisible(bool(self._banners))

    def _toggle_more(self) -> None:
        self._expanded = not self._expanded
        self.arrange()

    def _forget(self, b: Banner) -> None:
        if b in self._banners:
            self._banners.remove(b)
        if len(self._banners) <= 1:
            self._expanded = False
        self.arrange()
