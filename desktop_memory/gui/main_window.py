"""The main window: layout and wiring. The work is done by parts with one job each:

* :class:`~.service_host.ServiceHost`: settings (replaced, never edited) and the service's life, embedder state;
* :class:`~.index_jobs.IndexJobController`: the window's view of the core's scheduler (drops, Cancel, Resume);
* :class:`~.search_controller.SearchController`: searches, the stale-result rule, notes;
* :class:`~.context_controller.ContextController`: packing and copying the prompt context;
* :class:`~.library_controller.LibraryController`: the "library changed" signal, stats and the Library tree.

Threading rule: the UI thread never calls the service (except ``apply_settings``, a reference swap). Background
writes are jobs of the service's scheduler (desktop_memory/jobs); other calls go through a TaskRunner: ``jobs``
(open the database, load the embedder) or ``queries`` (search, context, stats, the library, the change stamp), so a
long job never starves a search. Results come back through Qt signals on the UI thread.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from ..config import THEMES, Settings
from ..models import IndexSummary, Stats
from ..service_api import MemoryApi, ServiceFactory
from .banner import BannerArea
from .context_controller import ContextController
from .drop_zone import DropOverlay, FileDropTarget, route_drops_to
from .host_feedback import show_host_feedback
from .index_jobs import IndexJobController
from .job_feedback import JobFeedback, show_context_feedback
from .library_controller import LibraryController
from .library_view import LibraryView
from .machine_labels import machine_of
from .messages import error_text
from .pause_banner import install_pause_banner
from .progress_panel import ProgressPanel
from .query_flow import QueryFlow
from .result_actions import ResultActions
from .search_controller import SearchController
from .search_tab import LibraryState, SearchTab
from .search_view import SearchBar
from .search_warm_up import SearchWarmUp
from .service_host import ServiceHost, default_service_factory
from .status_bar import StatusBar
from .style import app_icon, apply_theme
from .tasks import TaskRunner
from .watch_controller import install_watch
from .window_menus import SHORTCUTS_HTML, build_menus, install_focus_keys, show_about
from .window_size import fit_small_screens
from .window_state import restore_window_state, window_gui_state

if TYPE_CHECKING:
    from .about import AboutDialog  # the dialog (and `platform`) load when About opens
    from .settings.dialog import SettingsDialog

log = logging.getLogger(__name__)

__all__ = ["SHORTCUTS_HTML", "MainWindow", "default_service_factory", "error_text"]


class MainWindow(FileDropTarget, QMainWindow):
    service_ready = Signal()
    quick_search_requested = Signal()  # File ▸ Quick search (the shell shows its popup; also without a tray)
    search_finished = Signal(str)  # the query whose results (or error) are now shown
    context_ready = Signal()
    job_finished = Signal(object)  # IndexSummary, or None when the job failed
    library_refreshed = Signal()
    stats_refreshed = Signal()

    def __init__(self, settings: Settings, *, service_factory: ServiceFactory | None = None,
                 settings_path: Path | None = None) -> None:
        super().__init__()
        self.jobs = TaskRunner(self, max_threads=3, name="jobs")
        self.queries = TaskRunner(self, max_threads=3, name="queries")
        self.host = ServiceHost(settings, self.jobs, service_factory, settings_path, self)
        self.stats: Stats | None = None
        self._closing = False
        self.theme: str = settings.appearance.theme
        self.setWindowTitle("Desktop Memory")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self._build_ui()
        self.index_jobs = IndexJobController(self.jobs, self)
        self.searcher = SearchController(None, self.queries, self)
        self.query_flow = QueryFlow(self.search_bar, self.searcher, self.search_tab, parent=self,
                                    top_k=lambda: self.settings.search.top_k, library=self._library_state)
        self.search_warm_up = SearchWarmUp(self.jobs, self, self)  # the first search's loads, once shown
        self.context = ContextController(self.results_model, self.queries, settings.context.budget_tokens, self)
        self.library_ctl = LibraryController(self.queries, self.library, busy=self.is_busy,
                                             outcomes=lambda: self.index_jobs.outcomes, parent=self)
        self.feedback = JobFeedback(self.index_jobs, self.progress, self.status, self.banners,
                                    reembed=self.reembed_library, settings=self.show_settings, parent=self)
        self.actions_ = ResultActions(self.results_model, self.results_view, banners=self.banners, status=self.status,
                                      copy_context=self.copy_context, settings=lambda: self.settings, parent=self,
                                      settings_page=lambda key: self.show_settings().show_page(key))
        self.context.roots_in_flight = self.index_jobs.folders_in_flight
        self.theme_actions = build_menus(self)
        self._wire()
        self.watch = install_watch(self, self.host, self.library, poke=self.library_ctl.poke,  # live folders
                                   service_ready=self.service_ready,
                                   folders_changed=(self.job_finished, self.index_jobs.removed))
        self.act_pause_watching = self.watch.pause_action
        self.pause_banner = install_pause_banner(self)  # embedding paused or unfinished: a banner with Resume
        restore_window_state(self)
        route_drops_to(self)
        QTimer.singleShot(0, self.open_service)

    # ------------------------------------------------------------------------------------ state, read-only
    @property
    def settings(self) -> Settings:
        return self.host.settings

    @property
    def svc(self) -> MemoryApi | None:
        return self.host.svc

    @property
    def embedder_state(self) -> str:
        return self.host.state

    @property
    def last_summary(self) -> IndexSummary | None:
        return self.index_jobs.last_summary

    def is_indexing(self) -> bool:
        return self.index_jobs.is_running()

    def is_busy(self) -> bool:
        return self.index_jobs.is_running() or bool(self.index_jobs.pending)

    # ---------------------------------------------------------------------------------------------- layout
    def _build_ui(self) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(10, 6, 10, 2)
        outer.setSpacing(6)
        self.search_bar = SearchBar()
        self.banners = BannerArea()
        self.progress = ProgressPanel()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # banners go below the tabs: one appearing never moves the results under the mouse
        for w, stretch in ((self.search_bar, 0), (self.progress, 0), (self.tabs, 1), (self.banners, 0)):
            outer.addWidget(w, stretch)
        self.search_tab = t = SearchTab()
        self.tabs.addTab(t, "&Search")
        self.library = LibraryView()
        self.tabs.addTab(self.library, "&Library")
        # the search tab's parts, by their long-standing names (tests and other views use them)
        self.results_model, self.results_view = t.results_model, t.results_view
        self.results_stack, self.empty_state, self.message = t.results_stack, t.empty_state, t.message
        self.results_info, self.notes, self.preview = t.results_info, t.notes, t.preview
        self.context_panel, self.split, self.right_split = t.context_panel, t.split, t.right_split
        self.context_panel.set_budget(self.settings.context.budget_tokens)
        install_focus_keys(self)
        self.setCentralWidget(central)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        fit_small_screens(self)  # minimum size fits 1024×600 with banners and progress; status messages uncut
        self.overlay = DropOverlay(central)

    def _wire(self) -> None:
        sb, lib, a = self.search_bar, self.library, self.actions_
        sb.search_requested.connect(self.run_search)
        sb.navigate.connect(self.search_tab.navigate)
        self.results_view.open_requested.connect(lambda _row: sb.remember(sb.query()))
        sb.box.textEdited.connect(lambda _t: self.tabs.setCurrentIndex(0))
        sb.box.textEdited.connect(lambda _t: self.query_flow.typed())  # searched ahead as it is typed
        self.empty_state.add_files.connect(self.choose_files)
        self.empty_state.add_folder.connect(self.choose_folder)
        self.preview.open_requested.connect(lambda _p: a.open_row(a.current_row()))  # at the passage's place
        self.preview.reveal_requested.connect(a.reveal_file)
        self.preview.copy_requested.connect(lambda: a.copy_passage(a.current_row()))
        self.context_panel.budget_changed.connect(self.context.set_budget)
        self.context_panel.copy_requested.connect(self.copy_context)
        self.context_panel.include_weak_requested.connect(self.actions_.include_weak)
        lib.reindex_requested.connect(lambda paths: self.add_paths(paths, resume=False))  # F5: what changed; a
        # paused embedding stays paused (the banner offers Resume)
        lib.remove_requested.connect(self.remove_paths)
        lib.include_requested.connect(self.add_paths)  # Include again: named explicitly, read like a drop
        lib.reveal_requested.connect(a.reveal_file)
        lib.open_requested.connect(a.open_file)
        a.machines = lib.model.machines  # a shared library: another machine's files say why they do not open
        lib.compact_requested.connect(lambda: lib.start_compact(self.svc, self.jobs) if self.svc else None)
        lib.compact_finished.connect(lambda text, level: self.banners.show_message(text, level, key="compact"))
        lib.compact_finished.connect(lambda *_: self.library_ctl.poke())
        self.tabs.currentChanged.connect(lambda _i: self.library_ctl.show_view(self.tabs.currentWidget() is lib))
        h = self.host
        show_host_feedback(h, self.banners, self.status, retry_open=self.open_service,
                           settings_page=lambda key: self.show_settings().show_page(key))
        h.opened.connect(self._service_opened)
        h.embedder_state.connect(self._embedder_state)
        h.model_changed.connect(self.feedback.model_changed)
        h.model_changed.connect(self.library_ctl.poke)
        j = self.index_jobs
        j.started.connect(lambda _job: self._show_state())
        j.progress.connect(lambda _p: self.library_ctl.poke())  # a file or a batch of vectors was committed
        j.succeeded.connect(self.job_finished)
        j.failed.connect(lambda _e, _tb: self.job_finished.emit(None))
        j.finished.connect(self._job_finished)
        j.removed.connect(lambda *_: self._job_finished())
        self.library_ctl.stats_ready.connect(self._stats_arrived)
        self.library_ctl.library_refreshed.connect(self.library_refreshed)
        self.library_ctl.library_refreshed.connect(self.search_warm_up.first_screen)
        self.library_ctl.message.connect(lambda text: self.status.showMessage(text, 8000))
        self.query_flow.finished.connect(self.search_finished)
        show_context_feedback(self.context, self.context_panel, self.status, ready=self.context_ready)

    # ------------------------------------------------------------------------------------- window state
    def save_state(self) -> None:
        context = dataclasses.replace(self.settings.context, budget_tokens=self.context_panel.budget.value())
        self.host.replace(dataclasses.replace(self.settings, gui=window_gui_state(self), context=context))

    # ------------------------------------------------------------------------------------- service life
    def open_service(self) -> None:
        self.status.counts.setText("Opening library…")
        self.host.open()

    def _service_opened(self, svc: MemoryApi) -> None:
        for part in (self.searcher, self.context, self.library_ctl, self.index_jobs):
            part.set_service(svc)
        self._show_state()
        self.service_ready.emit()
        self.search_warm_up.service_opened(svc)
        if self.search_bar.query():  # the query restored from the last session
            self.run_search()

    def _embedder_state(self, state: str, _text: str, _tip: str) -> None:
        self.searcher.semantic_loading = state == "loading"
        if state == "ready":
            self.search_warm_up.embedder_ready()
            # results shown while the model loaded were keyword-only: upgrade them now
            if self.search_bar.query() and self.search_bar.current_backend() == "hybrid":
                self.run_search(keep_selection=True)

    def _reopen_service(self) -> None:
        """Another database: the old one's work stops first and the window says so (JobFeedback.switch_database)."""
        self.watch.stop()  # it indexes through the old service: stop before that one closes
        self.feedback.switch_database()
        for part in (self.searcher, self.context, self.library_ctl, self.index_jobs):
            part.set_service(None)
        self.search_tab.clear()
        self.host.reopen()

    # -------------------------------------------------------------------------------------- index jobs
    def add_paths(self, paths: list[str], force: bool = False, resume: bool = True) -> None:
        self.index_jobs.add_paths(paths, force, resume=resume)
        self._show_state()

    def reembed_library(self) -> None:
        self.index_jobs.reembed()

    def reindex_all(self, force: bool = False) -> None:
        """Re-index every folder: only what changed (``force``: read every file again, its own action)."""
        theirs = self.library.model.machines()  # a shared library: other machines' files are theirs to read
        folders = {os.path.dirname(d.path) for d in self.library.model.documents()}
        self.index_jobs.reindex_all(sorted(f for f in folders if machine_of(f, theirs) is None), force)

    def remove_paths(self, paths: list[str]) -> None:
        if self.svc is not None and paths:
            self.feedback.remove(paths)

    def cancel_job(self) -> None:
        self.feedback.cancel()

    def _job_finished(self) -> None:
        """A job ended or files were removed: the Library, the counts and the shown results catch up."""
        self.library_ctl.refresh()
        if self.search_bar.query():
            self.run_search(keep_selection=True)
        self._show_state()

    def _stats_arrived(self, s: Stats) -> None:
        self.stats = s
        self.status.set_stats(s)
        self.search_tab.render_notes(s, self.is_busy())  # the header tells the status bar's very count
        self.progress.set_vectors(s.vectors, s.chunks, paused=self.index_jobs.paused)
        self._show_state()
        self.stats_refreshed.emit()
        self.index_jobs.maybe_resume(s, embedder_ok=self.host.state != "error")
        # while indexing, new documents become keyword-searchable: show them if the list was empty
        if self.is_indexing() and self.search_bar.query() and self.results_model.rowCount() == 0:
            self.run_search()

    # ------------------------------------------------------------------------------------------ search
    def run_search(self, keep_selection: bool = False) -> None:
        self.query_flow.run(keep_selection)

    def _library_state(self) -> LibraryState:
        return LibraryState(open=self.svc is not None, busy=self.is_busy(), stats=self.stats)

    def _show_state(self) -> None:
        self.query_flow.show_state()

    def focus_search(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.search_bar.focus_query()

    def include_weak(self) -> None:
        self.actions_.include_weak()

    def show_about(self) -> AboutDialog:
        self._about = show_about(self)
        return self._about

    def copy_context(self) -> None:
        self.search_bar.remember(self.search_bar.query())
        self.context.copy()

    # ---------------------------------------------------------------------------------------- settings
    def show_settings(self) -> SettingsDialog:
        from .settings import SettingsDialog  # on first use (see settings/__init__.py)

        svc = self.svc  # its model-server probes; without a library the dialog makes its own
        dlg = SettingsDialog(self.settings, self.queries, self, servers=svc.servers if svc is not None else None)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(lambda: self.apply_settings(dlg.result_settings()))
        dlg.open()
        self._settings_dialog = dlg
        return dlg

    def apply_settings(self, new: Settings) -> None:
        """Swap in the dialog's settings (a new object), persist, and react to what changed."""
        change = self.host.apply(new)
        if new.appearance.theme != self.theme:
            self.set_theme(new.appearance.theme)
        if change.backend:
            self.search_bar.set_backend(new.search.backend)
        self.context_panel.set_budget(new.context.budget_tokens)
        self.context.set_budget(new.context.budget_tokens)
        if change.database:
            self._reopen_service()
        elif self.search_bar.query():
            self.run_search(keep_selection=True)

    def set_theme(self, theme: str) -> None:
        self.theme = theme
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        if theme in self.theme_actions:
            self.theme_actions[theme].setChecked(True)
        self.results_view.viewport().update()
        row = self.actions_.current_row()
        self.preview.show_result(self.preview.result, self.results_model.terms,
                                 self.results_model.marked_text(row) or None)
        if theme in THEMES and theme != self.settings.appearance.theme:
            self.host.update(appearance=dataclasses.replace(self.settings.appearance, theme=theme))

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self.banners.arrange()  # one banner in a short window, two in a tall one
        if self.overlay.isVisible():
            self.overlay.cover()

    # ----------------------------------------------------------------------------------------- shutdown
    def closeEvent(self, e: QCloseEvent) -> None:
        self._closing = True
        try:
            self.save_state()
        finally:
            self.shutdown()
        super().closeEvent(e)

    def shutdown(self, wait_ms: int = 15000) -> None:
        """Cancel work, wait for workers (they stop between files), close the database."""
        self.host.closing = True
        self.watch.stop()
        self.library_ctl.stop()
        log.info("quit: stopped %s", self.index_jobs.shutdown() or "nothing")  # within one slice; work done is kept
        self.jobs.cancel_all()
        self.searcher.invalidate()
        self.queries.wait(wait_ms)
        self.jobs.wait(wait_ms)
        self.host.close()
