"""Test helpers: simulated drops, waiting for jobs and searches, a fake service whose nonsense queries are weak."""

from __future__ import annotations

import warnings

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from .fake_service import FakeService


def drop(window, paths, target=None) -> None:
    """Simulate dragging ``paths`` over ``target`` (default: the window) and dropping them.

    Qt only delivers a Drop through QApplication while a real drag is running, so the DragEnter goes through
    the event system (over ``target``, so Qt's routing to the window is exercised) and the Drop is handed to the
    window's handler.
    """
    target = target or window
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    center = target.rect().center()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(QPoint(center.x(), center.y()), Qt.DropAction.CopyAction, mime,
                                Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted(), "the window should accept a drag of local files"
    ev = QDropEvent(QPointF(center), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    window.dropEvent(ev)
    assert ev.isAccepted()


def wait_job(qtbot, window, timeout: int = 60000):
    """Wait until the current (and queued) indexing jobs are done; return the last summary."""
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=timeout)
    return window.last_summary


def search(qtbot, window, text: str, timeout: int = 30000) -> None:
    """Type a query like a person would and wait for its results to be shown."""
    window.search_bar.box.clear()
    with qtbot.waitSignal(window.search_finished, timeout=timeout, check_params_cb=lambda q: q == text.strip()):
        qtbot.keyClicks(window.search_bar.box, text)


def problem_texts(panel) -> list[str]:
    """The progress panel's problem rows as "path: reason" (what the person reads in the list)."""
    items = (panel.problems.topLevelItem(i) for i in range(panel.problems.topLevelItemCount()))
    return [f"{item.data(0, Qt.ItemDataRole.UserRole)}: {item.text(2)}" for item in items if item is not None]


class WeakFake(FakeService):
    """Every result of a query starting with "zz" is weak (what retrieval's calibration says of nonsense)."""

    def search_outcome(self, query, backend=None, top_k=None, filters=None, *, marks=False):
        out = super().search_outcome(query.removeprefix("zz"), backend, top_k, filters, marks=marks)
        if query.startswith("zz"):
            for r in out.results:
                r.strength = "weak"
        return out
