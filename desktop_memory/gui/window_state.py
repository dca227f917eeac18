"""The window's own state in ``settings.gui``: geometry, splitters, search bar, backend, the last query and
the recent ones.

Saving builds a new ``gui`` dict (and a new settings object, see ServiceHost.replace): nothing is edited in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray

if TYPE_CHECKING:
    from .main_window import MainWindow


def _b64(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode()


def restore_window_state(w: MainWindow) -> None:
    g = w.settings.gui
    geo = g.get("geometry")
    if isinstance(geo, str) and geo:
        w.restoreGeometry(QByteArray.fromBase64(geo.encode()))
    else:
        w.resize(1280, 800)
    for key, splitter in (("split", w.split), ("right_split", w.right_split)):
        st = g.get(key)
        if isinstance(st, str) and st:
            splitter.restoreState(QByteArray.fromBase64(st.encode()))
    if "split" not in g:
        w.split.setSizes([700, 560])
    w.search_bar.set_backend(w.settings.search.backend)
    if isinstance(g.get("search"), dict):
        w.search_bar.restore(g["search"])
    if g.get("backend") in ("hybrid", "keyword", "bm25", "dense"):
        w.search_bar.set_backend(g["backend"])
    recent = g.get("recent_queries")
    w.search_bar.set_recent([str(q) for q in recent] if isinstance(recent, list) else [])
    last = g.get("last_query")
    if isinstance(last, str) and last.strip():  # the last search comes back; it runs once the library is open
        w.search_bar.box.blockSignals(True)
        w.search_bar.box.setText(last)
        w.search_bar.box.blockSignals(False)


def window_gui_state(w: MainWindow) -> dict[str, Any]:
    """A new ``gui`` dict: the old entries plus the window's current state."""
    w.search_bar.remember(w.search_bar.query())
    return {**w.settings.gui, "last_query": w.search_bar.query(), "recent_queries": w.search_bar.recent(),
            "geometry": _b64(w.saveGeometry()), "split": _b64(w.split.saveState()),
            "right_split": _b64(w.right_split.saveState()), "search": w.search_bar.state(),
            "backend": w.search_bar.current_backend()}
