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


def shortcut_clashes(owner: QWidget) -> dict[str, list[str]]:
    """{key: [action texts]} for every key bound to more than one of ``owner``'s window-wide actions."""
    by_key: dict[str, list[str]] = {}
    for a in owner.findChildren(QAction):
        if a.shortcutContext() not in (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut):
            continue
        if a.parent() is not owner:
            continue
        for seq in a.shortcuts():
            by_key.setdefault(seq.toString(QKeySequence.SequenceFormat.PortableText), []).append(a.text())
    return {k: v for k, v in by_key.items() if len(v) > 1}


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


def mnemonic(text: str) -> str:
    """The Alt+key letter of a label ("Add f&older…" → "o"), "" when it has none ("&&" is a literal ampersand)."""
    i = 0
    while i < len(text) - 1:
        if text[i] == "&":
            if text[i + 1] != "&":
                return text[i + 1].lower()
            i += 1
        i += 1
    return ""


def mnemonic_clashes(root: QWidget) -> dict[str, dict[str, list[str]]]:
    """{container: {letter: [labels]}} for every Alt+letter used twice in one place: the window itself (its menu
    bar titles, tabs, buttons, group boxes and labels with a buddy) and each of its menus. One letter twice
    makes Alt+letter cycle or pick the wrong one (the Library tab and a "&Library" menu)."""
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QMenu, QMenuBar, QTabBar

    places: dict[str, dict[str, list[str]]] = {}

    def add(place: str, text: str) -> None:
        m = mnemonic(text)
        if m:
            places.setdefault(place, {}).setdefault(m, []).append(text)

    window = "window" if root.objectName() == "" else root.objectName()
    for bar in root.findChildren(QMenuBar):
        for a in bar.actions():
            add(window, a.text())
    for tabs in root.findChildren(QTabBar):
        for i in range(tabs.count()):
            add(window, tabs.tabText(i))
    for w in root.findChildren(QWidget):
        if w.window() is not root:
            continue
        if isinstance(w, QAbstractButton):
            add(window, w.text())
        elif isinstance(w, QGroupBox):
            add(window, w.title())
        elif isinstance(w, QLabel) and w.buddy() is not None:
            add(window, w.text())
    for menu in root.findChildren(QMenu):
        for a in menu.actions():
            add(f"menu {menu.title() or menu.objectName()}", a.text())
    return {place: {k: v for k, v in by.items() if len(v) > 1} for place, by in places.items()
            if any(len(v) > 1 for v in by.values())}
