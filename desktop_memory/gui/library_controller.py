"""One "library changed" signal, driven by the store's change counters, and the refreshes that hang off it.

How a change is noticed:
* this process wrote (a job reported progress or ended, files were removed, the model changed): the writer
  calls :meth:`LibraryController.poke`, which reads the store's change stamp (``MemoryService.change_stamp``: a few
  counters in ``meta``) at most every ``POKE_MS``; a different stamp emits ``changed`` once;
* another process wrote (a CLI run or a second window on the same file): nothing in this process knows, so an
  idle check of the same stamp runs every ``EXTERNAL_POLL_MS``. That is the only timer, it reads one tiny row
  set on a pooled reader, and it never refreshes anything unless the stamp moved.

The Library asks the store for a listing (store/doc_listing.py): every folder's summary and the files of the folders
open on screen, as many as were loaded; further files come a page at a time as the view asks (``fetchMore``), each
page tagged with the tree it was asked for, so a page of a replaced tree is dropped. A listing answers one query
(filter, problems only, sort): a listing for an older query, or older than the newest asked for (the runner's
"library" channel), never replaces a newer one.

On ``changed`` the status counts (stats) refresh; the Library tree is rebuilt too, except while a job runs and the
Library is not on screen (or was rebuilt less than ``LIBRARY_BUSY_REFRESH_MS`` ago): a rebuild resets the tree
model and Qt then lays out every expanded row through Python calls that compete with the indexing thread for the
GIL (on a 1,000-file folder that stalled the window for hundreds of milliseconds each time). It is then marked
stale and rebuilt when its tab is shown or the job ends.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from ..errors import UserError
from ..models import DocumentInfo, FileOutcome, LibraryListing, LibraryQuery, Stats
from ..service_api import ChangeStamp, MemoryApi
from .library_model import PAGE
from .library_tree import TreeSpec, _Node, build_tree
from .library_view import LibraryView
from .tasks import TaskRunner

_Listing = tuple[LibraryListing, dict[str, FileOutcome], TreeSpec, _Node | None]  # listing, outcomes, spec, tree

log = logging.getLogger(__name__)

POKE_MS = 500  # in-process writes: read the stamp at most this often
EXTERNAL_POLL_MS = 5000  # other processes' writes: an idle read of the stamp
LIBRARY_BUSY_REFRESH_MS = 3000  # while a job runs, the Library tree is rebuilt at most this often (when shown)
REQUERY_MS = 250  # a big library's new filter or sort is asked of the store once typing pauses this long


class LibraryController(QObject):
    changed = Signal(object)  # the new ChangeStamp: documents or vectors changed (by anyone)
    stats_ready = Signal(object)  # Stats
    library_refreshed = Signal()
    message = Signal(str)  # a UserError while refreshing (e.g. the database became unreadable)

    def __init__(self, runner: TaskRunner, view: LibraryView, *, busy: Callable[[], bool],
                 outcomes: Callable[[], dict[str, FileOutcome]], parent: QObject | None = None,
                 external_poll_ms: int = EXTERNAL_POLL_MS) -> None:
        super().__init__(parent)
        self._runner = runner
        self.view = view
        self._busy = busy
        self._outcomes = outcomes
        self._svc: MemoryApi | None = None
        self.stamp: ChangeStamp | None = None
        self.stale = False  # documents changed while the Library was not rebuilt
        self.view_shown = False
        self._clock = QElapsedTimer()
        self._poke = QTimer(self)
        self._poke.setSingleShot(True)
        self._poke.setInterval(POKE_MS)
        self._poke.timeout.connect(self.check)
        self._external = QTimer(self)
        self._external.setInterval(external_poll_ms)
        self._external.timeout.connect(self.check)
        self.changed.connect(self._on_changed)
        view.model.page_loader = self._load_page
        # a big library asks the store again when the filter or sort changes: typed letters are coalesced (a
        # filter reads every path: about 1 s at a million passages, on the worker the searches share)
        self._requery = QTimer(self)
        self._requery.setSingleShot(True)
        self._requery.setInterval(REQUERY_MS)
        self._requery.timeout.connect(self.reload_library)
        view.model.query_changed = self._requery.start

    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service
        self.stamp = None
        if service is None:
            self._external.stop()
            self._poke.stop()
            return
        self._external.start()
        self.refresh()

    def stop(self) -> None:
        self._external.stop()
        self._poke.stop()

    # -- change detection --------------------------------------------------------------------------------
    def poke(self) -> None:
        """This process wrote something: compare the stamp soon (coalesced)."""
        if self._svc is not None and not self._poke.isActive():
            self._poke.start()

    def check(self) -> None:
        svc = self._svc
        if svc is None:
            return
        self._runner.submit(svc.change_stamp, name="change-stamp", channel="stamp", on_done=self._stamp_read,
                            on_error=self._quiet_error)

    def _stamp_read(self, stamp: ChangeStamp) -> None:
        if stamp != self.stamp:
            self.stamp = stamp
            self.changed.emit(stamp)

    def _on_changed(self, _stamp: ChangeStamp) -> None:
        self.refresh_stats()
        if self._library_due():
            self.reload_library()
        else:
            self.stale = True

    # -- refreshes ---------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Everything, now (the service just opened, a job ended)."""
        self.refresh_stats()
        self.reload_library()

    def refresh_stats(self) -> None:
        svc = self._svc
        if svc is not None:
            self._runner.submit(svc.stats, name="stats", channel="stats", on_done=self.stats_ready.emit,
                                on_error=self._quiet_error)

    def show_view(self, shown: bool) -> None:
        """The Library tab was shown or hidden: a stale tree catches up at once."""
        self.view_shown = shown
        if shown and self.stale:
            self.reload_library()

    def _library_due(self) -> bool:
        if not self._busy():
            return True
        if not self.view_shown:
            return False
        return not self._clock.isValid() or self._clock.elapsed() >= LIBRARY_BUSY_REFRESH_MS

    def reload_library(self) -> None:
        svc = self._svc
        if svc is None:
            return
        self.stale = False
        self._clock.start()
        spec = dataclasses.replace(self.view.model.spec)
        outcomes = dict(self._outcomes())
        shown = self.view.expanded_folder_keys()
        pages = {key: PAGE for key in shown}
        pages.update({k: max(n, PAGE) for k, n in self.view.model.loaded_pages(shown).items()})

        def listing() -> _Listing:
            found = svc.library_listing(spec.query(), pages)
            return found, outcomes, spec, build_tree(found, outcomes, spec)  # grouping off the UI thread

        self._runner.submit(listing, name="library-listing", channel="library", on_done=self._listing_arrived,
                            on_error=self._quiet_error)

    def _listing_arrived(self, res: _Listing) -> None:
        listing, outcomes, spec, tree = res
        current = self.view.model.spec
        if spec != current:  # the person re-sorted or filtered meanwhile
            if not listing.complete and listing.query != current.query():
                return  # answers an older query: the newer one is on its way
            tree = None  # a complete listing is re-shaped here for the new spec
        self.view.set_listing(listing, outcomes, tree)
        self.library_refreshed.emit()

    def _load_page(self, generation: int, query: LibraryQuery, key: str, offset: int) -> None:
        """The view scrolled to or opened a folder whose next files are not loaded: ask on a worker."""
        svc = self._svc
        model = self.view.model
        if svc is None:
            model.page_failed(generation, key)
            return

        def arrived(docs: list[DocumentInfo]) -> None:
            model.add_page(generation, key, offset, docs)

        def failed(exc: BaseException, tb: str) -> None:
            model.page_failed(generation, key)
            self._quiet_error(exc, tb)

        self._runner.submit(lambda: svc.library_page(query, key, offset, PAGE), name="library-page",
                            channel=f"library-page:{key}", on_done=arrived, on_error=failed)

    def _quiet_error(self, exc: BaseException, tb: str) -> None:
        log.warning("background refresh failed: %s\n%s", exc, tb)
        if isinstance(exc, UserError):
            self.message.emit(str(exc))


__all__ = ["EXTERNAL_POLL_MS", "LIBRARY_BUSY_REFRESH_MS", "POKE_MS", "LibraryController", "Stats"]
