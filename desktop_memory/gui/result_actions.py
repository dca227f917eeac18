"""What a person can do with a result: open, reveal, copy its passage or path, include/exclude, the row menu.

Errors (a moved file, no application for a type) become banners with a next step, never a dialog.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from PySide6.QtCore import QObject, QPoint
from PySide6.QtWidgets import QMenu, QWidget

from ..config import DesktopSettings, Settings
from ..models import WEAK, SearchResult
from . import desktop
from .banner import BannerArea
from .context_panel import COPY_SHORTCUT_TEXT
from .formatting import short_path
from .machine_labels import machine_of, not_here
from .results_model import ResultsModel, ResultsView
from .status_bar import StatusBar


class ResultActions(QObject):
    def __init__(self, model: ResultsModel, view: ResultsView, *, banners: BannerArea, status: StatusBar,
                 copy_context: Callable[[], None], parent: QWidget,
                 settings: Callable[[], Settings] | None = None,
                 settings_page: Callable[[str], object] | None = None) -> None:
        super().__init__(parent)
        self.model, self.view, self.banners, self.status = model, view, banners, status
        self._copy_context = copy_context
        self._settings = settings
        self._settings_page = settings_page  # opens Settings at a page ("desktop": Opening files)
        self._menu_parent = parent
        # other machines' library folders (a shared library): the window points this at the Library's listing
        self.machines: Callable[[], Mapping[str, str]] = dict
        view.open_requested.connect(self.open_row)
        view.toggle_requested.connect(self.toggle_row)
        view.copy_requested.connect(self.copy_passage)
        view.customContextMenuRequested.connect(self.menu)

    def current_row(self) -> int:
        return self.view.currentIndex().row()

    def open_row(self, row: int) -> None:
        r = self.model.result(row)
        if r:
            self.open_file(r.source, r)

    def _elsewhere(self, path: str, at: SearchResult | None = None) -> bool:
        """A file of another machine (a shared library): said in one sentence instead of opening or revealing."""
        machine = at.machine if at is not None and at.remote else machine_of(path, self.machines())
        if machine is None:
            machine = next((r.machine for r in self.model.results() if r.remote and r.source == path), None)
        if machine is None:
            return False
        self.banners.show_message(not_here(path, machine), "info", key="open")
        return True

    def open_file(self, path: str, at: SearchResult | None = None) -> None:
        """Open ``path``; with a result ``at``, at its line or page (gui/desktop.py: the "open with" setting, a
        known editor/viewer on PATH, or the default app)."""
        if self._elsewhere(path, at):
            return
        if not os.path.exists(path):
            self.banners.show_message(f"{path} no longer exists. Re-index its folder to update the library.",
                                      "warning", key="open")
            return
        if at is not None:
            ds = self._settings().desktop if self._settings else DesktopSettings()
            command = ds.open_pdf_with if at.kind == "pdf" else ds.open_with
            loc = at.location
            how = desktop.open_at(path, at.kind, None if at.kind == "pdf" else loc.line_start, loc.page, command)
        else:
            how = "default" if desktop.open_path(path) else ""
        if not how:
            setting = "Open PDFs at page with" if (at and at.kind == "pdf") or path.lower().endswith(".pdf") \
                else "Open text at line with"
            self.banners.show_message(
                f"No application is set up to open {os.path.basename(path)}. Set a command in Settings ▸ Opening "
                f"files (\"{setting}\"), associate an app with this file type in your system settings, or use "
                "Reveal.", "warning", key="open",
                actions=[*self._setup_action(), ("Reveal", lambda: self.reveal_file(path))],
            )

    def _setup_action(self) -> list[tuple[str, Callable[[], None]]]:
        page = self._settings_page
        if page is None:
            return []

        def open_page() -> None:
            page("desktop")

        return [("Set up opening…", open_page)]

    def reveal_file(self, path: str) -> None:
        if self._elsewhere(path):
            return
        if not desktop.reveal_path(path):
            setting = "Open PDFs at page with" if path.lower().endswith(".pdf") else "Open text at line with"
            self.banners.show_message(
                f"Could not open a file manager for {short_path(path)}. Copy its path (Ctrl+Shift+P), or open it "
                f"directly with a command of your own in Settings ▸ Opening files (\"{setting}\").",
                "warning", key="open", actions=self._setup_action())

    def copy_passage(self, row: int) -> None:
        r = self.model.result(row)
        if r:
            desktop.copy_text(r.text)
            self.status.showMessage("Passage copied", 3000)

    def copy_path(self, row: int) -> None:
        r = self.model.result(row)
        if r:
            desktop.copy_text(r.source)
            self.status.showMessage("Path copied", 3000)

    def toggle_row(self, row: int) -> None:
        """Include/exclude: one write to the model's check state; the context re-packs from it."""
        if self.model.result(row) is not None:
            self.model.set_included(row, not self.model.is_included(row))

    def include_weak(self) -> None:
        """Tick every weak result (they start excluded from the context)."""
        for row in range(self.model.rowCount()):
            r = self.model.result(row)
            if r is not None and r.strength == WEAK and not self.model.is_included(row):
                self.model.set_included(row, True)

    def menu(self, pos: QPoint) -> None:
        idx = self.view.indexAt(pos)
        r = self.model.result(idx.row()) if idx.isValid() else None
        if r is None:
            return
        row = idx.row()
        m = QMenu(self._menu_parent)
        m.addAction("Open", lambda: self.open_row(row))
        m.addAction("Reveal in file manager", lambda: self.reveal_file(r.source))
        m.addSeparator()
        m.addAction("Copy path", lambda: self.copy_path(row))
        m.addAction("Copy passage", lambda: self.copy_passage(row))
        m.addSeparator()
        inc = m.addAction("Include in prompt context", lambda: self.toggle_row(row))
        inc.setCheckable(True)
        inc.setChecked(self.model.is_included(row))
        m.addAction(f"Copy prompt context ({COPY_SHORTCUT_TEXT})", self._copy_context)
        m.exec(self.view.viewport().mapToGlobal(pos))
