"""The main window's menus and shortcuts (every action is also on the window, so shortcuts work without a menu bar)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu

from .context_panel import COPY_SHORTCUT_TEXT
from .style import THEMES

if TYPE_CHECKING:
    from .main_window import MainWindow

SHORTCUTS_HTML = (
    "<b>Keyboard</b>: Ctrl+K / Ctrl+F focus search · ↑/↓ move through results (also from the search box) · "
    "Enter opens the file · Space or Ctrl+I includes/excludes a result · "
    f"{COPY_SHORTCUT_TEXT} copies the prompt context · Ctrl+Alt+C copies the passage · Ctrl+B next backend · "
    "Ctrl+Shift+F filters · Ctrl+1 / Ctrl+2 Search / Library · Ctrl+E context list · Ctrl+O / Ctrl+Shift+O add "
    "files / folder · Ctrl+, settings · F5 / Delete re-index / remove in the Library"
)

Shortcut = str | QKeySequence | QKeySequence.StandardKey


def build_menus(w: MainWindow) -> None:
    mb = w.menuBar()

    def act(menu: QMenu, text: str, slot: Callable[[], object], shortcuts: tuple[Shortcut, ...] = ()) -> QAction:
        a = QAction(text, w)
        if shortcuts:
            a.setShortcuts([QKeySequence(s) for s in shortcuts])
        a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        w.addAction(a)  # shortcuts work even with the menu bar hidden
        return a

    def row() -> int:
        return w.actions_.current_row()

    f = mb.addMenu("&File")
    w.act_add_files = act(f, "Add &files…", w.choose_files, ("Ctrl+O",))
    w.act_add_folder = act(f, "Add f&older…", w.choose_folder, ("Ctrl+Shift+O",))
    f.addSeparator()
    w.act_settings = act(f, "&Settings…", w.show_settings, (QKeySequence.StandardKey.Preferences, "Ctrl+,"))
    f.addSeparator()
    act(f, "&Quit", w.close, (QKeySequence.StandardKey.Quit, "Ctrl+Q"))

    e = mb.addMenu("&Edit")
    w.act_copy_context = act(e, "Copy prompt &context", w.copy_context, (COPY_SHORTCUT_TEXT,))
    act(e, "Copy &passage", lambda: w.actions_.copy_passage(row()), ("Ctrl+Alt+C",))
    act(e, "Copy pa&th", lambda: w.actions_.copy_path(row()), ("Ctrl+Shift+P",))
    e.addSeparator()
    w.act_focus = act(e, "&Find…", w.focus_search, ("Ctrl+K", "Ctrl+F", "Ctrl+L"))
    act(e, "&Include/exclude current result", lambda: w.actions_.toggle_row(row()), ("Ctrl+I",))

    v = mb.addMenu("&View")
    act(v, "&Search", lambda: w.tabs.setCurrentIndex(0), ("Ctrl+1",))
    act(v, "&Library", lambda: w.tabs.setCurrentIndex(1), ("Ctrl+2",))
    act(v, "Show &filters", w.search_bar.filter_btn.toggle, ("Ctrl+Shift+F",))
    act(v, "Next search &backend", w.search_bar.cycle_backend, ("Ctrl+B",))
    act(v, "Focus prompt conte&xt", w.context_panel.items.setFocus, ("Ctrl+E",))
    appearance = v.addMenu("&Appearance")
    grp = QActionGroup(w)
    w.theme_actions = {}
    for t in THEMES:
        a = QAction(t.capitalize(), w, checkable=True)
        a.setChecked(t == w.theme)
        a.triggered.connect(lambda _=False, t=t: w.set_theme(t))
        grp.addAction(a)
        appearance.addAction(a)
        w.theme_actions[t] = a

    lib = mb.addMenu("L&ibrary")
    act(lib, "&Re-index everything", w.reindex_all, ("Ctrl+Shift+R",))
    w.act_reembed = act(lib, "&Embed missing vectors", w.reembed_library)
    w.act_cancel = act(lib, "&Cancel indexing", w.cancel_job)

    h = mb.addMenu("&Help")
    act(h, "&Keyboard shortcuts", lambda: w.banners.show_message(SHORTCUTS_HTML, "info", key="shortcuts"),
        (QKeySequence.StandardKey.HelpContents, "F1"))
