"""The main window's menus and shortcuts (every action is also on the window, so shortcuts work without a menu bar)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu

from ..config import THEMES
from . import desktop
from .context_panel import COPY_SHORTCUT_TEXT
from .keys import install_escape, set_tab_order, unique_shortcuts
from .library_model import PathRole

if TYPE_CHECKING:
    from .about import AboutDialog  # the dialog (and `platform`) load when About opens
    from .main_window import MainWindow

SHORTCUTS_HTML = (
    "<b>Keyboard</b>: Ctrl+K / Ctrl+F focus search · Enter searches · ↓/↑ move into and through the results · "
    "Enter (in the list) opens the file at the passage · Space or Ctrl+I includes/excludes a result · "
    "Esc back to the search box · "
    f"{COPY_SHORTCUT_TEXT} copies the prompt context · Ctrl+Alt+C copies the passage · Ctrl+Shift+P copies the "
    "path (of the result, or of the Library row) · Ctrl+Shift+Space quick search · Ctrl+B next backend · "
    "Ctrl+Shift+F filters · Ctrl+1 / Ctrl+2 Search / Library · Ctrl+E context list · Ctrl+O / Ctrl+Shift+O add "
    "files / folder · Ctrl+, settings · F5 / Delete re-index / remove in the Library · Ctrl+Q quit"
)

Shortcut = str | QKeySequence | QKeySequence.StandardKey


LIBRARY_MENU = "LibraryMenu"  # object name of the Library menu


def build_menus(w: MainWindow) -> dict[str, QAction]:
    """Build the menu bar; returns the Appearance menu's theme actions (the window checks the current one)."""
    mb = w.menuBar()

    def act(menu: QMenu, text: str, slot: Callable[[], object], shortcuts: tuple[Shortcut, ...] = ()) -> QAction:
        a = QAction(text, w)
        if shortcuts:
            # each key once: a key bound twice (StandardKey.Quit *and* "Ctrl+Q" on X11) is "ambiguous" to Qt
            a.setShortcuts(unique_shortcuts(shortcuts))
        a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        w.addAction(a)  # shortcuts work even with the menu bar hidden
        return a

    def row() -> int:
        return w.actions_.current_row()

    f = mb.addMenu("&File")
    act(f, "Add &files…", w.choose_files, ("Ctrl+O",))
    act(f, "Add f&older…", w.choose_folder, ("Ctrl+Shift+O",))
    f.addSeparator()
    act(f, "Q&uick search…", w.quick_search_requested.emit, ("Ctrl+Shift+Space",))
    act(f, "&Settings…", w.show_settings, (QKeySequence.StandardKey.Preferences, "Ctrl+,"))
    f.addSeparator()
    act(f, "&Quit", w.close, (QKeySequence.StandardKey.Quit, "Ctrl+Q"))

    e = mb.addMenu("&Edit")
    act(e, "Copy prompt &context", w.copy_context, (COPY_SHORTCUT_TEXT,))
    act(e, "Copy &passage", lambda: w.actions_.copy_passage(row()), ("Ctrl+Alt+C",))
    act(e, "Copy pa&th", lambda: copy_path(w), ("Ctrl+Shift+P",))
    e.addSeparator()
    act(e, "&Find…", w.focus_search, ("Ctrl+K", "Ctrl+F", "Ctrl+L"))
    act(e, "&Include/exclude current result", lambda: w.actions_.toggle_row(row()), ("Ctrl+I",))
    act(e, "Include &weak matches", w.include_weak)

    v = mb.addMenu("&View")
    act(v, "&Search", lambda: w.tabs.setCurrentIndex(0), ("Ctrl+1",))
    act(v, "&Library", lambda: w.tabs.setCurrentIndex(1), ("Ctrl+2",))
    act(v, "Show &filters", w.search_bar.filter_btn.toggle, ("Ctrl+Shift+F",))
    act(v, "Next search &backend", w.search_bar.cycle_backend, ("Ctrl+B",))
    act(v, "Focus prompt conte&xt", lambda: focus_context_list(w), ("Ctrl+E",))
    appearance = v.addMenu("&Appearance")
    grp = QActionGroup(w)
    theme_actions: dict[str, QAction] = {}
    for t in THEMES:
        a = QAction(t.capitalize(), w, checkable=True)
        a.setChecked(t == w.theme)
        a.triggered.connect(lambda _=False, t=t: w.set_theme(t))
        grp.addAction(a)
        appearance.addAction(a)
        theme_actions[t] = a

    lib = mb.addMenu("L&ibrary")
    lib.setObjectName(LIBRARY_MENU)  # found by name (install_watch adds to it), not by its label
    act(lib, "&Re-index everything (changed files)", w.reindex_all, ("Ctrl+Shift+R",))
    act(lib, "Re-read every &file", lambda: w.reindex_all(force=True))
    act(lib, "&Embed missing vectors", w.reembed_library)
    cancel = act(lib, "&Cancel indexing", w.cancel_job)
    cancel.setEnabled(w.is_indexing())  # only while something runs or waits (the scheduler's events say when)
    w.index_jobs.accepted.connect(lambda _n: cancel.setEnabled(w.is_indexing()))
    w.index_jobs.started.connect(lambda _job: cancel.setEnabled(True))
    w.index_jobs.finished.connect(lambda: cancel.setEnabled(w.is_indexing()))

    h = mb.addMenu("&Help")
    act(h, "&Keyboard shortcuts", lambda: w.banners.show_message(SHORTCUTS_HTML, "info", key="shortcuts"),
        (QKeySequence.StandardKey.HelpContents, "F1"))
    act(h, "Use in chat apps (&MCP)…", lambda: show_mcp_setup(w))
    act(h, "&About Desktop Memory", w.show_about)  # the window keeps the dialog alive
    return theme_actions


def install_focus_keys(w: MainWindow) -> None:
    """Esc in a result/context/preview widget goes back to the search box; Tab follows the reading order."""
    sb, cp, pv = w.search_bar, w.context_panel, w.preview
    install_escape([w.results_view, cp.items, cp.block, pv.browser], w.focus_search)
    set_tab_order([sb.box, sb.recent_btn, sb.backend, sb.filter_btn, sb.kind, sb.path, sb.age, w.results_view,
                   pv.open_btn, pv.reveal_btn, pv.copy_btn, pv.browser, cp.budget, cp.items, cp.block,
                   cp.weak_btn, cp.copy_btn])


def copy_path(w: MainWindow) -> None:
    """Ctrl+Shift+P: the path of what the person is looking at: the Library's current row on the Library tab, the
    current result elsewhere."""
    if w.tabs.currentWidget() is w.library:
        idx = w.library.tree.currentIndex()
        path = idx.siblingAtColumn(0).data(PathRole) if idx.isValid() else None
        if path:
            desktop.copy_text(str(path))
            w.status.showMessage(f"Path copied: {path}", 3000)
        else:
            w.status.showMessage("Select a file or folder in the Library first.", 3000)
        return
    w.actions_.copy_path(w.actions_.current_row())


def focus_context_list(w: MainWindow) -> None:
    """Ctrl+E: the context's passage list, with a current row so ↓ and Space work at once."""
    w.tabs.setCurrentIndex(0)
    items = w.context_panel.items
    if items.model() is not None and items.model().rowCount() and not items.currentIndex().isValid():
        items.setCurrentIndex(items.model().index(0, 0))
    items.setFocus(Qt.FocusReason.ShortcutFocusReason)


def show_about(w: MainWindow) -> AboutDialog:
    from .about import AboutDialog

    model_id = ""
    if w.svc is not None and w.host.state == "ready":
        try:
            model_id = w.svc.embedder_model_id()
        except Exception:  # the About box never fails over a model it cannot name
            model_id = ""
    dlg = AboutDialog(w.settings, w.stats, model_id, w)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.open()
    return dlg


def show_mcp_setup(w: MainWindow) -> None:
    from .mcp_dialog import McpDialog

    s = w.settings  # a shared library's URL as the settings hold it (never with a password: docs/SHARED.md)
    McpDialog(s.db_url.strip() if s.db_url.strip() else s.resolved_db_path(), w).exec()
