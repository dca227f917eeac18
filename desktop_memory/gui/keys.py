"""Keyboard plumbing for the window: shortcuts without duplicates, Esc back to the search box, tab order.

Why dedupe: Qt treats one key bound twice (``StandardKey.Quit`` *and* "Ctrl+Q" are the same key on X11, and
``HelpContents`` is F1) as an "Ambiguous shortcut overload" and then does nothing at all on that key.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget


def unique_shortcuts(shortcuts: Iterable[str | QKeySequence | QKeySequence.StandardKey]) -> list[QKeySequence]:
    """The key sequences for ``shortcuts`` (standard keys expanded for this platform), each once, in order."""
    out: list[QKeySequence] = []
    seen: set[str] = set()
    for sc in shortcuts:
        seqs = QKeySequence.keyBindings(sc) if isinstance(sc, QKeySequence.StandardKey) else [QKeySequence(sc)]
        for seq in seqs:
            text = seq.toString(QKeySequence.SequenceFormat.PortableText)
            if text and text not in seen:
                seen.add(text)
                out.append(seq)
    return out


def install_escape(widgets: Sequence[QWidget], back: Callable[[], None]) -> None:
    """Esc in any of ``widgets`` goes back to the search box (one predictable way out)."""
    for w in widgets:
        a = QAction("Back to search", w)
        a.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        a.triggered.connect(lambda _=False: back())
        w.addAction(a)


def set_tab_order(chain: Sequence[QObject]) -> None:
    """Tab visits ``chain`` in order (left to right, top to bottom as the window reads)."""
    widgets = [w for w in chain if isinstance(w, QWidget)]
    for a, b in itertools.pairwise(widgets):
        QWidget.setTabOrder(a, b)
