"""The main window: wires the views to the MemoryService through worker tasks.

Threading rule: the UI thread never calls the service. Every call goes through one of two TaskRunners:
``jobs`` (opening the database, loading the embedder, indexing / embedding, removing) and ``queries``
(search, context packing, stats, the library list), so a long index job can never starve a search. Results come
back through Qt signals; searches and context builds run on "latest wins" channels.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QElapsedTimer, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeySequence,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..config import Settings, save_settings
from ..errors import EmbedderError, UserError
from ..models import FileOutcome, IndexProgress, IndexSummary, SearchResult, Stats
from . import desktop
from .about import AboutDialog
from .banner import BannerArea
from .context_panel import COPY_SHORTCUT_TEXT, ContextPanel
from .drop_zone import DropOverlay, EmptyState, local_paths, route_drops_to
from .formatting import counted, query_terms, short_path
from .job_queue import Job, JobQueue, add_reads, merge_summaries
from .keys import install_escape, set_tab_order, unique_shortcuts
from .library_view import LibraryView, TreeSpec, build_tree
from .preview_panel import PreviewPanel
from .progress_panel import ProgressPanel
from .results_model import ResultDelegate, ResultsModel, ResultsView
from .search_shown import SearchShown, results_header, run_search_for_display, semantic_note
from .search_view import SearchBar
from .settings_dialog import SettingsDialog
from .status_bar import StatusBar
from .style import THEMES, app_icon, apply_theme
from .tasks import Task, TaskRunner

log = logging.getLogger(__name__)

ServiceFactory = Callable[[Settings], Any]
REFRESH_MS = 700  # library/stats refresh period while a job runs
LIBRARY_BUSY_REFRESH_MS = 3000  # ...but the Library tree is rebuilt at most this often (and only when shown)


def default_service_factory(settings: Settings) -> Any:
    """Import lazily: the core pulls numpy/sqlite-vec; importing it on a worker keeps start-up instant."""
    from ..service import MemoryService

    return MemoryService(settings)


def error_text(exc: BaseException) -> str:
    """A UserError's message as-is; anything else is a bug: a short, honest sentence."""
    if isinstance(exc, UserError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}: {exc}). Details are in the log."


class MainWindow(QMainWindow):
    service_ready = Signal()
    search_finished = Signal(str)  # the query whose results are now shown
    context_ready = Signal()
    job_finished = Signal(object)  # IndexSummary
    library_refreshed = Signal()
    stats_refreshed = Signal()

    def __init__(
        self,
        settings: Settings,
        *,
        service_factory: ServiceFactory | None = None,
        settings_path: Path | None = None,
        probe=None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.settings_path = settings_path
        self._factory = service_factory or default_service_factory
        self._probe = probe
        self.svc: Any = None
        self.jobs = TaskRunner(self, max_threads=3, name="jobs")
        self.queries = TaskRunner(self, max_threads=3, name="queries")
        self.embedder_state = "loading"
        self.stats: Stats | None = None
        self.last_summary: IndexSummary | None = None
        self._job: Task | None = None
        self._job_kind = ""
        self._job_spec: Job | None = None
        self._pending = JobQueue()  # reads ahead of the embedding (gui/job_queue.py)
        self._burst_read: IndexSummary | None = None  # the reads since the last summary shown
        self._preempting = False  # the running automatic embedding was stopped for a new read
        self._outcomes: dict[str, FileOutcome] = {}
        self._context_pending = False
        self._copy_when_ready = False
        self._search_started = 0.0
        self._shown_query: str | None = None
        self._closing = False
        self._resumed_embedding = False
        self._search_notes: list[str] = []
        self._library_stale = False  # documents changed while the Library was not rebuilt (see _library_due)
        self._library_clock = QElapsedTimer()
        self.theme = str(settings.gui.get("theme", "system"))
        if self.theme not in THEMES:
            self.theme = "system"

        self.setWindowTitle("Desktop Memory")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self._build_ui()
        self._build_menus()
        self._restore_state()

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh_library_and_stats)
        route_drops_to(self)
        QTimer.singleShot(0, self.open_service)

    # ======================================================================================== UI
    def _build_ui(self) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(10, 10, 10, 4)
        outer.setSpacing(8)
        self.search_bar = SearchBar()
        outer.addWidget(self.search_bar)
        # banners go below the tabs (added after them): one appearing never moves the results under the mouse
        self.banners = BannerArea()
        self.progress = ProgressPanel()
        outer.addWidget(self.progress)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        outer.addWidget(self.tabs, 1)
        outer.addWidget(self.banners)

        # --- search tab: results | (preview / context)
        search_tab = QWidget()
        st = QVBoxLayout(search_tab)
        st.setContentsMargins(0, 6, 0, 0)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setChildrenCollapsible(False)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.setSpacing(4)
        head = QHBoxLayout()
        self.results_info = QLabel("")
        self.results_info.setObjectName("Muted")
        head.addWidget(self.results_info, 1)
        ll.addLayout(head)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.notes.setObjectName("Muted")
        self.notes.hide()
        ll.addWidget(self.notes)
        self.results_stack = QStackedWidget()
        self.empty_state = EmptyState()
        self.empty_state.add_files.connect(self.choose_files)
        self.empty_state.add_folder.connect(self.choose_folder)
        self.message = QLabel("")
        self.message.setObjectName("EmptyHint")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.results_model = ResultsModel(self)
        self.results_view = ResultsView()
        self.results_view.setModel(self.results_model)
        self.results_view.setItemDelegate(ResultDelegate(self.results_view))
        self.results_stack.addWidget(self.empty_state)
        self.results_stack.addWidget(self.message)
        self.results_stack.addWidget(self.results_view)
        ll.addWidget(self.results_stack, 1)
        self.split.addWidget(left)
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.setChildrenCollapsible(False)
        self.preview = PreviewPanel()
        self.context_panel = ContextPanel()
        self.context_panel.set_budget(self.settings.context.budget_tokens)
        self.right_split.addWidget(self.preview)
        self.right_split.addWidget(self.context_panel)
        self.right_split.setSizes([300, 400])
        self.split.addWidget(self.right_split)
        self.split.setStretchFactor(0, 5)
        self.split.setStretchFactor(1, 4)
        st.addWidget(self.split)
        self.tabs.addTab(search_tab, "&Search")

        self.library = LibraryView()
        self.tabs.addTab(self.library, "&Library")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(central)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self.overlay = DropOverlay(central)

        # signals
        sb = self.search_bar
        sb.search_requested.connect(self.run_search)
        sb.navigate.connect(self._navigate_results)
        sb.accept_current.connect(self._accept_from_search_box)
        sb.box.textEdited.connect(lambda _t: self.tabs.setCurrentIndex(0))
        sel = self.results_view.selectionModel()
        sel.currentRowChanged.connect(self._current_result_changed)
        self.results_view.open_requested.connect(self._open_row)
        self.results_view.toggle_requested.connect(self._toggle_row)
        self.results_view.copy_requested.connect(self._copy_row_passage)
        self.results_view.customContextMenuRequested.connect(self._results_menu)
        self.preview.open_requested.connect(lambda _p: self._open_row(self.results_view.currentIndex().row()))
        self.preview.reveal_requested.connect(self.reveal_file)
        self.preview.copy_requested.connect(lambda: self._copy_row_passage(self.results_view.currentIndex().row()))
        self.context_panel.budget_changed.connect(lambda _v: self.update_context())
        self.context_panel.include_toggled.connect(self._include_toggled)
        self.context_panel.copy_requested.connect(self.copy_context)
        self.context_panel.include_weak_requested.connect(self.include_weak)
        self.progress.cancel_requested.connect(self.cancel_job)
        self.library.reindex_requested.connect(lambda paths: self.add_paths(paths, force=True))
        self.library.remove_requested.connect(self.remove_paths)
        self.library.reveal_requested.connect(self.reveal_file)
        self.library.open_requested.connect(self.open_file)
        self.library.compact_requested.connect(
            lambda: self.svc is not None and self.library.start_compact(self.svc, self.jobs))
        self.library.compact_finished.connect(lambda text, level: self.banners.show_message(text, level, key="compact"))
        install_escape([self.results_view, self.context_panel.items, self.context_panel.block, self.preview.browser],
                       self.focus_search)
        set_tab_order([self.search_bar.box, self.search_bar.recent_btn, self.search_bar.backend,
                       self.search_bar.filter_btn,
                       self.search_bar.kind, self.search_bar.path, self.search_bar.age, self.results_view,
                       self.preview.open_btn, self.preview.reveal_btn, self.preview.copy_btn, self.preview.browser,
                       self.context_panel.budget, self.context_panel.items, self.context_panel.block,
                       self.context_panel.weak_btn, self.context_panel.copy_btn])
        self._show_state()

    def _build_menus(self) -> None:
        mb = self.menuBar()

        def act(menu: QMenu, text: str, slot, shortcuts=(), tip: str = "") -> QAction:
            a = QAction(text, self)
            if shortcuts:
                a.setShortcuts(unique_shortcuts(shortcuts))
            if tip:
                a.setStatusTip(tip)
            a.triggered.connect(lambda _=False: slot())
            menu.addAction(a)
            self.addAction(a)  # shortcuts work even with the menu bar hidden
            return a

        f = mb.addMenu("&File")
        self.act_add_files = act(f, "Add &files…", self.choose_files, ["Ctrl+O"])
        self.act_add_folder = act(f, "Add f&older…", self.choose_folder, ["Ctrl+Shift+O"])
        f.addSeparator()
        self.act_settings = act(f, "&Settings…", self.show_settings, [QKeySequence.StandardKey.Preferences, "Ctrl+,"])
        f.addSeparator()
        act(f, "&Quit", self.close, [QKeySequence.StandardKey.Quit, "Ctrl+Q"])

        e = mb.addMenu("&Edit")
        self.act_copy_context = act(e, "Copy prompt &context", self.copy_context, [COPY_SHORTCUT_TEXT])
        act(e, "Copy &passage", lambda: self._copy_row_passage(self.results_view.currentIndex().row()), ["Ctrl+Alt+C"])
        act(e, "Copy pa&th", lambda: self._copy_row_path(self.results_view.currentIndex().row()), ["Ctrl+Shift+P"])
        e.addSeparator()
        self.act_focus = act(e, "&Find…", self.focus_search, ["Ctrl+K", "Ctrl+F", "Ctrl+L"])
        act(e, "&Include/exclude current result", lambda: self._toggle_row(self.results_view.currentIndex().row()),
            ["Ctrl+I"])
        act(e, "Include &weak matches", self.include_weak)

        v = mb.addMenu("&View")
        act(v, "&Search", lambda: self.tabs.setCurrentIndex(0), ["Ctrl+1"])
        act(v, "&Library", lambda: self.tabs.setCurrentIndex(1), ["Ctrl+2"])
        act(v, "Show &filters", lambda: self.search_bar.filter_btn.toggle(), ["Ctrl+Shift+F"])
        act(v, "Next search &backend", self.search_bar.cycle_backend, ["Ctrl+B"])
        act(v, "Focus prompt conte&xt", self.focus_context_list, ["Ctrl+E"])
        appearance = v.addMenu("&Appearance")
        grp = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for t in THEMES:
            a = QAction(t.capitalize(), self, checkable=True)
            a.setChecked(t == self.theme)
            a.triggered.connect(lambda _=False, t=t: self.set_theme(t))
            grp.addAction(a)
            appearance.addAction(a)
            self.theme_actions[t] = a

        lib = mb.addMenu("L&ibrary")
        act(lib, "&Re-index everything", self.reindex_all, ["Ctrl+Shift+R"])
        self.act_reembed = act(lib, "&Embed missing vectors", self.reembed_library)
        self.act_cancel = act(lib, "&Cancel indexing", self.cancel_job)

        h = mb.addMenu("&Help")
        act(h, "&Keyboard shortcuts", self.show_shortcuts, [QKeySequence.StandardKey.HelpContents, "F1"])
        act(h, "Use in chat apps (&MCP)…", self.show_mcp_setup)
        act(h, "&About Desktop Memory", self.show_about)

    # ==================================================================== persistence of window state
    def _restore_state(self) -> None:
        g = self.settings.gui
        geo = g.get("geometry")
        if isinstance(geo, str) and geo:
            self.restoreGeometry(QByteArray.fromBase64(geo.encode()))
        else:
            self.resize(1280, 800)
        for key, splitter in (("split", self.split), ("right_split", self.right_split)):
            st = g.get(key)
            if isinstance(st, str) and st:
                splitter.restoreState(QByteArray.fromBase64(st.encode()))
        if "split" not in g:
            self.split.setSizes([700, 560])
        self.search_bar.set_backend(self.settings.search.backend)
        if isinstance(g.get("search"), dict):
            self.search_bar.restore(g["search"])
        if g.get("backend") in ("hybrid", "keyword", "bm25", "dense"):
            self.search_bar.set_backend(g["backend"])
        recent = g.get("recent_queries")
        self.search_bar.set_recent([str(q) for q in recent] if isinstance(recent, list) else [])
        last = g.get("last_query")
        if isinstance(last, str) and last.strip():  # the last search comes back; it runs once the library is open
            self.search_bar.box.blockSignals(True)
            self.search_bar.box.setText(last)
            self.search_bar.box.blockSignals(False)

    def save_state(self) -> None:
        g = self.settings.gui
        g["geometry"] = bytes(self.saveGeometry().toBase64()).decode()
        g["split"] = bytes(self.split.saveState().toBase64()).decode()
        g["right_split"] = bytes(self.right_split.saveState().toBase64()).decode()
        g["search"] = self.search_bar.state()
        g["last_query"] = self.search_bar.query()
        self.search_bar.remember(self.search_bar.query())
        g["recent_queries"] = self.search_bar.recent()
        g["backend"] = self.search_bar.current_backend()
        g["theme"] = self.theme
        self.settings.context.budget_tokens = self.context_panel.budget.value()
        self.persist_settings()

    def persist_settings(self) -> None:
        try:
            save_settings(self.settings, self.settings_path)
        except OSError as exc:
            self.banners.show_message(
                f"Could not save settings: {exc}. Check that the config folder is writable.", "warning",
                key="settings-save",
            )

    # ============================================================================= service life
    def open_service(self) -> None:
        """Open (or create) the database on a worker; the window is usable (and shows state) meanwhile."""
        self.status.counts.setText("Opening library…")
        self.jobs.submit(
            lambda: self._factory(self.settings), name="open-service", channel="open",
            on_done=self._service_opened, on_error=self._service_failed,
        )

    def _service_opened(self, svc: Any) -> None:
        if self._closing:
            svc.close()
            return
        self.svc = svc
        self.banners.dismiss("store")
        for notice in svc.take_notices():  # e.g. the library made owner-only (private_files.py)
            self.banners.show_message(notice, "info", key="privacy")
        self._show_state()
        self.service_ready.emit()
        self.refresh_library_and_stats()
        self.load_embedder()
        if self.search_bar.query():  # the query restored from the last session
            self.run_search()
        if self._pending and self._job is None:
            self._start_next_job()

    def _service_failed(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("opening the database failed:\n%s", tb)
        self.status.counts.setText("No library open")
        self.banners.show_message(
            f"Cannot open the database {self.settings.resolved_db_path()}: {error_text(exc)}",
            "error", key="store",
            actions=[("Retry", self.open_service), ("Choose location…", self.show_settings)],
        )

    def load_embedder(self) -> None:
        if self.svc is None:
            return
        svc = self.svc
        kind = self.settings.embedder.kind
        what = "Ollama " + self.settings.embedder.ollama_model if kind == "ollama" else "local model"
        self._set_embedder_state("loading", f"Embedder: loading {what}…")
        self.jobs.submit(
            svc.load_embedder, name="load-embedder", channel="embedder",
            on_done=lambda _r: self._embedder_loaded(svc), on_error=self._embedder_failed,
        )

    def _embedder_loaded(self, svc: Any) -> None:
        model = getattr(getattr(svc, "embedder", None), "model_id", "") or ""
        self._set_embedder_state("ready", f"Embedder: ready · {model}" if model else "Embedder: ready")
        self.banners.dismiss("embedder")
        # results shown while the model loaded were keyword-only: upgrade them now
        if self.search_bar.query() and self.search_bar.current_backend() == "hybrid":
            self.run_search(keep_selection=True)

    def _embedder_failed(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("embedder failed to load:\n%s", tb)
        state = "Embedder: unreachable" if self.settings.embedder.kind == "ollama" else "Embedder: unavailable"
        self._set_embedder_state("error", state, error_text(exc))
        self.banners.show_message(
            f"Semantic search is off: {error_text(exc)} Keyword search still works.", "warning", key="embedder",
            actions=[("Retry", self.load_embedder), ("Settings…", self.show_settings)],
        )

    def _set_embedder_state(self, state: str, text: str, tip: str = "") -> None:
        self.embedder_state = state
        self.status.set_embedder(state, text, tip)

    # ============================================================================= indexing jobs
    def add_paths(self, paths: list[str], force: bool = False) -> None:
        """Index files/folders in the background; queued behind a running job (one job at a time)."""
        paths = [os.path.abspath(p) for p in paths if p]
        if not paths:
            return
        self._pending.add_index(paths, force)
        if self._job is None and self.svc is not None:
            self._start_next_job()
        else:
            if not self.progress.isVisible():
                self.progress.start(len(paths))
            if self._job is not None and self._pending.should_preempt(self._job_spec):
                # reading comes first: the automatic embedding stops between batches and resumes after
                self._preempting = True
                self._job.cancel()
            self.progress.set_queued(self._queued_reads())
        self._show_state()

    def _queued_reads(self) -> int:
        return sum(1 for j in self._pending.pending if j.kind == "index")

    def reindex_all(self) -> None:
        """Re-scan every folder that was added (the core's roots), on a worker, then re-index them."""
        if self.svc is None:
            return
        svc = self.svc
        fallback = sorted({os.path.dirname(d.path) for d in self.library.model.documents()})

        def roots() -> list[str]:
            return list(svc.roots()) if hasattr(svc, "roots") else []

        self.queries.submit(roots, name="roots", on_done=lambda r: self.add_paths(list(r) or fallback, force=True),
                            on_error=self._job_error_banner)

    def reembed_library(self, auto: bool = False) -> None:
        self._pending.add_embed(auto=auto)
        if self._job is None and self.svc is not None:
            self._start_next_job()

    def remove_paths(self, paths: list[str]) -> None:
        if self.svc is None or not paths:
            return
        svc = self.svc
        n = len(paths)
        self.status.showMessage(f"Removing {n} item{'s' if n != 1 else ''} from the index…")

        def done(removed: int) -> None:
            self.status.showMessage(f"Removed {removed} document{'s' if removed != 1 else ''} from the index "
                                    "(files on disk are untouched)", 6000)
            for p in paths:
                self._outcomes.pop(p, None)
            self.refresh_library_and_stats()
            if self.search_bar.query():
                self.run_search(keep_selection=True)

        self.jobs.submit(lambda: svc.remove_paths(paths), name="remove", on_done=done, on_error=self._job_error_banner)

    def _start_next_job(self) -> None:
        if not self._pending or self.svc is None:
            return
        job = self._pending.next()
        assert job is not None
        kind, paths, force = job.kind, list(job.paths), job.force
        svc = self.svc
        self._job_kind = kind
        self._job_spec = job
        # reading only (vectors come from the embedding job queued behind every read), when the service can
        read_only = kind == "index" and "embed" in inspect.signature(svc.index_paths).parameters
        continuing = kind == "embed" and job.auto and self._burst_read is not None
        self.progress.start(len(paths), keep_bar=continuing)
        self.progress.set_queued(self._queued_reads())
        if continuing:
            n = self._burst_read.indexed + self._burst_read.unchanged if self._burst_read else 0
            self.progress.searchable_files = n
            self.progress.title.setText(f"Embedding · {counted(n, 'file')} searchable by keyword")
        elif kind == "embed":
            self.progress.title.setText("Embedding the library…" if job.auto else "Re-embedding the library…")
        if kind == "embed":
            def fn(ctx):
                runner = getattr(svc, "embed_pending_summary", None)
                if runner is not None:
                    return runner(progress=ctx.report, cancel=ctx.cancel_event)
                n = svc.embed_pending(progress=ctx.report, cancel=ctx.cancel_event)
                return IndexSummary(chunks_embedded=n)
        elif read_only:
            def fn(ctx):
                return svc.index_paths(paths, progress=ctx.report, cancel=ctx.cancel_event, force=force, embed=False)
        else:
            def fn(ctx):
                return svc.index_paths(paths, progress=ctx.report, cancel=ctx.cancel_event, force=force)
        self._job = self.jobs.submit(
            fn, name=f"{kind}-job", with_context=True,
            on_done=self._job_done, on_error=self._job_failed, on_progress=self._job_progress,
            on_finished=self._job_finished,
        )
        self._show_state()

    def _job_progress(self, p: IndexProgress) -> None:
        self.progress.update_progress(p)
        if p.chunks_to_embed:
            self.status.set_semantic_progress(p.chunks_embedded, p.chunks_to_embed)
        if p.last_outcome is not None:
            self._outcomes[p.last_outcome.path] = p.last_outcome
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _job_done(self, summary: IndexSummary) -> None:
        for o in summary.outcomes:
            self._outcomes[o.path] = o
        job = self._job_spec
        if job is not None and job.kind == "index" and "embed" in inspect.signature(self.svc.index_paths).parameters:
            # read only: keyword-searchable now; the vectors come next, after any other queued read
            self._burst_read = add_reads(self._burst_read, summary)
            if not summary.cancelled and not self._closing:
                self._pending.add_embed(auto=True)
                return
            summary = self._burst_read
        elif job is not None and job.kind == "embed" and self._preempting:
            self._preempting = False
            if not self._closing:
                self._pending.add_embed(auto=True)  # resumes after the new read, from where it stopped
                return
        elif job is not None and job.kind == "embed" and job.auto and self._burst_read is not None:
            summary = merge_summaries(self._burst_read, summary)
        self._burst_read = None
        self.last_summary = summary
        self.progress.finish(summary)
        if job is not None and job.kind == "embed" and not job.auto:
            self.progress.title.setText(
                f"Re-embedded {counted(summary.chunks_embedded, 'chunk')}"
                + (" (cancelled)" if summary.cancelled else ""))
        if summary.embed_error:
            self.banners.show_message(
                f"Files are keyword-searchable, but vectors could not be made: {summary.embed_error}",
                "warning", key="embed-error",
                actions=[("Retry embedding", self.reembed_library), ("Settings…", self.show_settings)],
            )
        self.job_finished.emit(summary)

    def _job_failed(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("indexing job failed:\n%s", tb)
        self.progress.fail(error_text(exc))
        self._job_error_banner(exc, tb)
        self.job_finished.emit(None)

    def _job_error_banner(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("background job failed:\n%s", tb)
        msg = error_text(exc)
        hint = ""
        if "locked" in msg.lower():
            hint = " Another program (or another copy of this app) is writing to the database; try again when it is done."
        self.banners.show_message(msg + hint, "error", key="job-error")

    def _job_finished(self) -> None:
        self._job = None
        self.refresh_library_and_stats()
        if self.search_bar.query():
            self.run_search(keep_selection=True)
        if self._pending and not self._closing:
            self._start_next_job()
        self._show_state()

    def cancel_job(self) -> None:
        # the user said stop: never restart embedding behind their back (Library → Embed missing vectors does)
        self._resumed_embedding = True
        self._preempting = False
        self._pending.clear()
        self.progress.set_queued(0)
        if self._job is not None:
            self._job.cancel()
            self.progress.cancelling()

    def is_indexing(self) -> bool:
        return self._job is not None

    # ============================================================================= library / stats
    def refresh_library_and_stats(self) -> None:
        if self.svc is None:
            return
        svc = self.svc
        self.queries.submit(svc.stats, name="stats", channel="stats", on_done=self._stats_arrived,
                            on_error=self._quiet_error)
        if self._job is not None and not self._library_due():
            self._library_stale = True  # rebuilt when its tab is shown, or when the job ends
        else:
            self._reload_library()
        if self._job is not None and not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _library_due(self) -> bool:
        """While a job runs, rebuild the Library only when it is on screen, and at most every few seconds.

        A rebuild resets the tree model, and Qt then lays out every expanded row through Python calls that
        compete with the indexing thread for the GIL: on a 1,000-file folder that stalled the window for
        hundreds of milliseconds each time. Counts in the status bar still refresh every REFRESH_MS."""
        if self.tabs.currentWidget() is not self.library:
            return False
        return not self._library_clock.isValid() or self._library_clock.elapsed() >= LIBRARY_BUSY_REFRESH_MS

    def _tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.library and self._library_stale and self.svc is not None:
            self._reload_library()

    def _reload_library(self) -> None:
        svc = self.svc
        if svc is None:
            return
        self._library_stale = False
        self._library_clock.start()
        spec = dataclasses.replace(self.library.model.spec)
        outcomes = dict(self._outcomes)

        def documents() -> tuple[list, dict, TreeSpec, object]:
            docs = svc.documents()
            return docs, outcomes, spec, build_tree(docs, outcomes, spec)  # grouping/sorting off the UI thread

        self.queries.submit(documents, name="documents", channel="library", on_done=self._documents_arrived,
                            on_error=self._quiet_error)

    def _stats_arrived(self, s: Stats) -> None:
        self.stats = s
        self.status.set_stats(s)
        self._render_notes()
        if self._job is None:
            self.progress.set_unembedded(s.pending_vectors)
        self._show_state()
        self.stats_refreshed.emit()
        if self._job is None and s.pending_vectors and s.chunks and not self._pending and self.embedder_state != "error":
            # a previous run was interrupted (crash, quit while embedding): finish the queue in the background
            if not self._resumed_embedding:
                self._resumed_embedding = True
                self.reembed_library(auto=True)
        # while indexing, new documents become keyword-searchable: show them if the list was empty
        if self._job is not None and self.search_bar.query() and self.results_model.rowCount() == 0:
            self.run_search()

    def _documents_arrived(self, res: tuple) -> None:
        docs, outcomes, spec, tree = res
        if spec != self.library.model.spec:  # the user re-sorted or filtered meanwhile
            tree = None
        self.library.set_documents(docs, outcomes, tree)
        self.library_refreshed.emit()

    def _quiet_error(self, exc: BaseException, tb: str) -> None:
        log.warning("background refresh failed: %s\n%s", exc, tb)
        if isinstance(exc, UserError):
            self.status.showMessage(str(exc), 8000)

    # ============================================================================= search
    def run_search(self, keep_selection: bool = False) -> None:
        q = self.search_bar.query()
        if not q:
            self.queries.invalidate("search")
            self.results_model.clear()
            self._shown_query = None
            self.preview.show_result(None)
            self.context_panel.set_results([], [])
            self.results_info.setText("")
            self.notes.hide()
            self._show_state()
            return
        if self.svc is None:
            self.results_info.setText("Opening the library…")
            return
        svc = self.svc
        backend = self.search_bar.current_backend()
        notes: list[str] = []
        if backend == "hybrid" and self.embedder_state == "loading":
            backend = "keyword"  # do not wait for the model: keyword results now, semantic joins when it is ready
            notes.append("Semantic model still loading: showing keyword results; they will refresh when it is ready.")
        filters = self.search_bar.filters()
        top_k = self.settings.search.top_k
        keep = None
        if keep_selection:
            cur = self.results_model.result(self.results_view.currentIndex().row())
            keep = cur.chunk_id if cur else None

        def fn() -> SearchShown:
            return run_search_for_display(svc, q, backend, top_k, filters)

        self._search_started = time.perf_counter()
        if self.results_model.rowCount() == 0:
            self.results_info.setText("Searching…")
        self.queries.submit(
            fn, name="search", channel="search",
            on_done=lambda res: self._search_done(q, res, notes, keep),
            on_error=lambda exc, tb: self._search_failed(q, exc, tb),
        )

    def _search_done(self, q: str, res: SearchShown, notes: list[str], keep: int | None) -> None:
        results = res.results
        ms = (time.perf_counter() - self._search_started) * 1000
        terms = query_terms(q)
        self.results_model.set_results(q, terms, results, res.marked)
        self._shown_query = q
        backend = self.search_bar.current_backend()
        self.results_info.setText(results_header(results, res.weak, backend, ms))
        self._search_notes = notes + [n_.capitalize() if n_ else n_ for n_ in res.notes]
        self._render_notes()
        n = len(results)
        self.context_panel.set_results(results, [self.results_model.is_included(i) for i in range(n)])
        if results:
            row = self.results_model.row_of_chunk(keep) if keep is not None else -1
            self.results_view.setCurrentIndex(self.results_model.index(max(0, row)))
            self.results_view.scrollTo(self.results_model.index(max(0, row)))
        else:
            self.preview.show_result(None)
        self._show_state()
        self.update_context()
        self.search_finished.emit(q)

    def _search_failed(self, q: str, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("search failed:\n%s", tb)
        self.results_model.clear()
        self._shown_query = q
        self.context_panel.set_results([], [])
        self.preview.show_result(None)
        self.results_info.setText("Search failed")
        msg = error_text(exc)
        if isinstance(exc, EmbedderError):
            msg += " Switch to Hybrid or Keyword search, or fix the embedder in Settings."
        self.message.setText(msg)
        self.results_stack.setCurrentWidget(self.message)
        self.search_finished.emit(q)

    def _show_state(self) -> None:
        """Pick what the results area shows: drop target, a hint, or the list."""
        q = self.search_bar.query()
        docs = sum(self.stats.documents.values()) if self.stats else 0
        indexed = self.stats.documents.get("indexed", 0) if self.stats else 0
        first_run = not q and docs == 0 and self._job is None and not self._pending and self.svc is not None
        # a brand-new library: the drop target gets the whole width (preview/context have nothing to show)
        self.right_split.setVisible(not first_run)
        if self.results_model.rowCount():
            self.results_stack.setCurrentWidget(self.results_view)
        elif first_run:
            self.results_stack.setCurrentWidget(self.empty_state)
        else:
            if not q:
                if self.svc is None:
                    text = "Opening your library…"
                elif self._job is not None:
                    text = "Indexing… you can search already: files are keyword-searchable as soon as they are read."
                else:
                    text = f"Type to search {indexed:,} document{'s' if indexed != 1 else ''}.\n\nCtrl+K focuses the search box from anywhere."
            elif self._shown_query == q:
                text = f"No results for “{q}”."
                if self.search_bar.active_filter_count():
                    text += "\nTry removing some filters."
            else:
                text = "Searching…"
            self.message.setText(text)
            self.results_stack.setCurrentWidget(self.message)

    def _current_result_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        self.preview.show_result(self.results_model.result(cur.row()), self.results_model.terms,
                                 self.results_model.marked_text(cur.row()) or None)

    def _render_notes(self) -> None:
        """Lane notes of the shown search plus the semantic coverage, from the latest stats (so the header and
        the status bar always tell the same count)."""
        extra = semantic_note(self.stats, self._job is not None, self.search_bar.current_backend())
        all_notes = [*self._search_notes, *([extra] if extra and self._shown_query else [])]
        self.notes.setText("\n".join(all_notes))
        self.notes.setVisible(bool(all_notes))

    def include_weak(self) -> None:
        """Tick every weak result (left out of the context by default)."""
        for row in range(self.results_model.rowCount()):
            r = self.results_model.result(row)
            if r is not None and r.strength == "weak" and not self.results_model.is_included(row):
                self.results_model.set_included(row, True)
                self.context_panel.set_included(r.chunk_id, True)
        self.update_context()

    def _navigate_results(self, key: int) -> None:
        """↓/↑/PgDn/PgUp in the search box: move through the results *and* into the list, so the next Space
        toggles the result (instead of typing a space into the query) and Enter opens it."""
        n = self.results_model.rowCount()
        if not n:
            return
        self.results_view.setFocus(Qt.FocusReason.OtherFocusReason)
        row = self.results_view.currentIndex().row()
        page = max(1, self.results_view.viewport().height() // max(1, self.results_view.sizeHintForRow(0)))
        delta = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_PageDown: page, Qt.Key.Key_PageUp: -page}.get(
            Qt.Key(key), 0)
        row = min(n - 1, max(0, row + delta))
        self.results_view.setCurrentIndex(self.results_model.index(row))

    def _accept_from_search_box(self) -> None:
        row = self.results_view.currentIndex().row()
        if row >= 0:
            self._open_row(row)

    def focus_search(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.search_bar.focus_query()

    def focus_context_list(self) -> None:
        """Ctrl+E: the context's passage list, with a current row so ↓ and Space work at once."""
        self.tabs.setCurrentIndex(0)
        items = self.context_panel.items
        if items.count() and items.currentRow() < 0:
            items.setCurrentRow(0)
        items.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def show_about(self) -> AboutDialog:
        dlg = AboutDialog(self.settings, self.stats, getattr(getattr(self.svc, "embedder", None), "model_id", ""),
                          self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        self._about = dlg
        return dlg

    # ============================================================================= results actions
    def _open_row(self, row: int) -> None:
        r = self.results_model.result(row)
        if r:
            self.search_bar.remember(self.search_bar.query())
            self.open_file(r.source, r)

    def open_file(self, path: str, at: SearchResult | None = None) -> None:
        """Open ``path``; with a result ``at``, at its line or page (gui/desktop.py: the "open with" setting, a
        known editor/viewer, or the default app)."""
        if not os.path.exists(path):
            self.banners.show_message(f"{path} no longer exists. Re-index its folder to update the library.",
                                      "warning", key="open")
            return
        if at is not None:
            ds = getattr(self.settings, "desktop", None)
            command = (getattr(ds, "open_pdf_with", "") if at.kind == "pdf" else getattr(ds, "open_with", "")) or ""
            loc = at.location
            how = desktop.open_at(path, at.kind, None if at.kind == "pdf" else loc.line_start, loc.page, command)
        else:
            how = "default" if desktop.open_path(path) else ""
        if not how:
            self.banners.show_message(
                f"No application is set up to open {os.path.basename(path)}. "
                "Associate one with this file type in your system settings, or use Reveal.", "warning", key="open",
                actions=[("Reveal", lambda: self.reveal_file(path))],
            )

    def reveal_file(self, path: str) -> None:
        if not desktop.reveal_path(path):
            self.banners.show_message(f"Could not open the file manager for {short_path(path)}.", "warning",
                                      key="open")

    def _copy_row_passage(self, row: int) -> None:
        r = self.results_model.result(row)
        if r:
            desktop.copy_text(r.text)
            self.status.showMessage("Passage copied", 3000)

    def _copy_row_path(self, row: int) -> None:
        r = self.results_model.result(row)
        if r:
            desktop.copy_text(r.source)
            self.status.showMessage("Path copied", 3000)

    def _toggle_row(self, row: int) -> None:
        r = self.results_model.result(row)
        if r is None:
            return
        on = not self.results_model.is_included(row)
        self.results_model.set_included(row, on)
        self.context_panel.set_included(r.chunk_id, on)
        self.update_context()

    def _include_toggled(self, chunk_id: int, on: bool) -> None:
        row = self.results_model.row_of_chunk(chunk_id)
        if row >= 0:
            self.results_model.set_included(row, on)
            self.update_context()

    def _results_menu(self, pos: QPoint) -> None:
        idx = self.results_view.indexAt(pos)
        if not idx.isValid():
            return
        row = idx.row()
        r = self.results_model.result(row)
        if r is None:
            return
        m = QMenu(self)
        m.addAction("Open", lambda: self._open_row(row))
        m.addAction("Reveal in file manager", lambda: self.reveal_file(r.source))
        m.addSeparator()
        m.addAction("Copy path", lambda: self._copy_row_path(row))
        m.addAction("Copy passage", lambda: self._copy_row_passage(row))
        m.addSeparator()
        inc = m.addAction("Include in prompt context", lambda: self._toggle_row(row))
        inc.setCheckable(True)
        inc.setChecked(self.results_model.is_included(row))
        m.addAction(f"Copy prompt context ({COPY_SHORTCUT_TEXT})", self.copy_context)
        m.exec(self.results_view.viewport().mapToGlobal(pos))

    # ============================================================================= context
    def update_context(self) -> None:
        """Re-pack the included results under the budget (worker; latest wins)."""
        if self.svc is None:
            return
        included = self.results_model.included_results()
        budget = self.context_panel.budget.value()
        self.settings.context.budget_tokens = budget
        if not self.results_model.rowCount():
            self.context_panel.set_report(None)
            return
        svc = self.svc
        self._context_pending = True
        self.context_panel.copy_btn.setEnabled(False)
        busy = [p for j in [self._job_spec, *self._pending.pending] if j is not None and j.kind == "index"
                for p in j.paths if os.path.isdir(p)] if self._job is not None else []
        takes_roots = "extra_roots" in inspect.signature(svc.build_context).parameters
        extra = {"extra_roots": busy} if busy and takes_roots else {}
        self.queries.submit(
            lambda: svc.build_context(included, budget, **extra), name="context", channel="context",
            on_done=self._context_done, on_error=self._context_failed,
        )

    def _context_done(self, report) -> None:
        self._context_pending = False
        self.context_panel.set_report(report)
        self.context_ready.emit()
        if self._copy_when_ready:
            self._copy_when_ready = False
            self.copy_context()

    def _context_failed(self, exc: BaseException, tb: str) -> None:
        self._context_pending = False
        self._copy_when_ready = False
        log.error("building the context failed:\n%s", tb)
        self.context_panel.set_report(None)
        self.status.showMessage(f"Could not build the context: {error_text(exc)}", 8000)

    def copy_context(self) -> None:
        """Put exactly the shown block on the clipboard (waits for a pending re-pack first)."""
        if self._context_pending:
            self._copy_when_ready = True
            return
        text = self.context_panel.text()
        if not text:
            self.status.showMessage("Nothing to copy: search first, and keep at least one passage included.", 5000)
            return
        desktop.copy_text(text)
        self.search_bar.remember(self.search_bar.query())
        rep = self.context_panel.report
        n = len(rep.items) if rep else 0
        self.status.showMessage(f"Copied {n} passage{'s' if n != 1 else ''} ({rep.tokens_used if rep else 0:,} tokens) "
                                "to the clipboard: paste it into your chat.", 5000)
        self.context_panel.flash_copied()

    # ============================================================================= settings
    def show_settings(self) -> SettingsDialog:
        kwargs = {"probe": self._probe} if self._probe else {}
        dlg = SettingsDialog(self.settings, self.queries, self, theme=self.theme, **kwargs)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(lambda: self.apply_settings(dlg.result_settings(), dlg.chosen_theme()))
        dlg.open()
        self._settings_dialog = dlg
        return dlg

    def apply_settings(self, new: Settings, theme: str | None = None) -> None:
        """Apply a settings result: in place (the service shares the object), persist, react to changes."""
        old = self.settings
        db_changed = old.resolved_db_path() != new.resolved_db_path()
        embedder_changed = vars(old.embedder) != vars(new.embedder)
        backend_changed = old.search.backend != new.search.backend
        for name in ("search", "context", "chunking", "ingest", "desktop"):
            vars(getattr(old, name)).update(vars(getattr(new, name)))
        old.db_path = new.db_path
        if theme and theme != self.theme:
            self.set_theme(theme)
        if backend_changed:
            self.search_bar.set_backend(new.search.backend)
        self.context_panel.set_budget(new.context.budget_tokens)
        if db_changed:
            old.embedder = new.embedder
            self.persist_settings()
            self.reopen_service()
            return
        if embedder_changed:
            self.change_embedder(new.embedder)
        self.persist_settings()
        if self.search_bar.query():
            self.run_search(keep_selection=True)

    def change_embedder(self, es) -> None:
        if self.svc is None:
            self.settings.embedder = es
            return
        svc = self.svc
        self._set_embedder_state("loading", "Embedder: switching…")

        def done(changed: bool) -> None:
            self.settings.embedder = es
            self.persist_settings()
            if changed:
                self._resumed_embedding = True  # the banner offers re-embedding; do not start it behind the user's back
                self.banners.show_message(
                    "The embedding model changed, so the old vectors were cleared (two models are never mixed). "
                    "Keyword search works now; semantic search returns after re-embedding.",
                    "info", key="reembed", actions=[("Re-embed now", self.reembed_library)],
                )
            self.load_embedder()
            self.refresh_library_and_stats()

        def failed(exc: BaseException, tb: str) -> None:
            self._embedder_failed(exc, tb)

        self.jobs.submit(lambda: svc.set_embedder_settings(es), name="set-embedder", on_done=done, on_error=failed)

    def reopen_service(self) -> None:
        old = self.svc
        self.svc = None
        self.cancel_job()
        self.results_model.clear()
        self.context_panel.set_results([], [])
        if old is not None:
            self.jobs.submit(old.close, name="close-service")
        self.open_service()

    def set_theme(self, theme: str) -> None:
        self.theme = theme
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        if theme in self.theme_actions:
            self.theme_actions[theme].setChecked(True)
        self.results_view.viewport().update()
        row = self.results_view.currentIndex().row()
        self.preview.show_result(self.preview.result, self.results_model.terms,
                                 self.results_model.marked_text(row) or None)
        self.settings.gui["theme"] = theme

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self, "Add files to your memory", str(Path.home()),
            "Documents (*.md *.markdown *.txt *.pdf *.py *.rs *.js *.ts *.go *.java *.c *.cpp *.h *.rst);;All files (*)",
        )
        if files:
            self.add_paths(files)

    def choose_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Add a folder to your memory", str(Path.home()))
        if d:
            self.add_paths([d])

    def show_shortcuts(self) -> None:
        self.banners.show_message(SHORTCUTS_HTML, "info", key="shortcuts")

    def show_mcp_setup(self) -> None:
        from .mcp_dialog import McpDialog

        McpDialog(self.settings.resolved_db_path(), self).exec()

    # ============================================================================= drag and drop
    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if local_paths(e.mimeData()):
            e.acceptProposedAction()
            self._drag_entered()

    def dragMoveEvent(self, e: QDragMoveEvent) -> None:
        if local_paths(e.mimeData()):
            e.acceptProposedAction()

    def dragLeaveEvent(self, e) -> None:
        self._drag_left()

    def dropEvent(self, e: QDropEvent) -> None:
        paths = local_paths(e.mimeData())
        self._drag_left()
        if paths:
            e.acceptProposedAction()
            self.add_paths(paths)

    def _drag_entered(self) -> None:
        self.overlay.cover()
        self.empty_state.set_dragging(True)

    def _drag_left(self) -> None:
        self.overlay.hide()
        self.empty_state.set_dragging(False)

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        if self.overlay.isVisible():
            self.overlay.cover()

    # ============================================================================= shutdown
    def closeEvent(self, e: QCloseEvent) -> None:
        self._closing = True
        try:
            self.save_state()
        finally:
            self.shutdown()
        super().closeEvent(e)

    def shutdown(self, wait_ms: int = 15000) -> None:
        """Cancel work, wait for workers (they stop between files), close the database."""
        self._refresh_timer.stop()
        self._pending.clear()
        self.jobs.cancel_all()
        self.queries.invalidate("search")
        self.queries.wait(wait_ms)
        self.jobs.wait(wait_ms)
        if self.svc is not None:
            try:
                self.svc.close()
            except Exception:
                log.exception("closing the service")
            self.svc = None


SHORTCUTS_HTML = (
    "<b>Keyboard</b>: Ctrl+K / Ctrl+F focus search · ↑/↓ move through results (also from the search box) · "
    "Enter opens the file · Space or Ctrl+I includes/excludes a result · "
    f"{COPY_SHORTCUT_TEXT} copies the prompt context · Ctrl+Alt+C copies the passage · Ctrl+B next backend · "
    "Ctrl+Shift+F filters · Ctrl+1 / Ctrl+2 Search / Library · Ctrl+E context list · Ctrl+O / Ctrl+Shift+O add "
    "files / folder · Ctrl+, settings · F5 / Delete re-index / remove in the Library"
)
