"""Checks over a built window's keys, for the tests: no key bound twice window-wide, no Alt+letter used twice in
one place (gui/keys.py keeps the window's own key plumbing)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget


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
