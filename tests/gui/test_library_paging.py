"""The Library on a library of a few thousand documents (real SQLite, real Qt widgets, real worker threads): the
first screen asks the store for folder summaries only, files come a page at a time as a folder is opened and
scrolled, a refresh keeps what was loaded and selected, and late answers never replace newer ones."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.gui.library_controller import LibraryController
from desktop_memory.gui.library_model import PAGE
from desktop_memory.gui.library_view import LibraryView
from desktop_memory.gui.tasks import TaskRunner
from desktop_memory.models import DocumentInfo, LibraryListing, LibraryQuery
from desktop_memory.service import MemoryService
from tests.support.listing import build_library


class Counting:
    """The real service, recording what the Library asks of it (and able to hold one listing back)."""

    def __init__(self, svc: MemoryService) -> None:
        self.svc = svc
        self.calls: list[tuple[str, Any]] = []
        self.hold: threading.Event | None = None  # set: the next listing waits for it

    def __getattr__(self, name: str) -> Any:
        return getattr(self.svc, name)

    def documents(self) -> list[DocumentInfo]:
        self.calls.append(("documents", None))
        return self.svc.documents()

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing:
        hold, self.hold = self.hold, None
        self.calls.append(("listing", (query, dict(pages))))
        if hold is not None:
            hold.wait(30)
        return self.svc.library_listing(query, pages, eager_limit)

    def library_page(self, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
        self.calls.append(("page", (key, offset, limit)))
        return self.svc.library_page(query, key, offset, limit)

    def rows_read(self) -> int:
        return sum(c[1][2] for c in self.calls if c[0] == "page")


@pytest.fixture(scope="module")
def big_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("paging") / "lib.db"
    build_library(db, 3000).close()
    return db


@pytest.fixture
def library_ui(qtbot, big_library: Path):
    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder

    svc = MemoryService(Settings(db_path=str(big_library)), db_path=big_library, embedder=HashEmbedder(16))
    api = Counting(svc)
    runner = TaskRunner(max_threads=2)
    view = LibraryView()
    qtbot.addWidget(view)
    view.resize(1100, 600)
    view.show()
    ctl = LibraryController(runner, view, busy=lambda: False, outcomes=dict)
    ctl.set_service(api)  # type: ignore[arg-type]  # the counting proxy forwards everything else
    qtbot.waitUntil(lambda: view.model.rowCount() > 0, timeout=20000)
    yield view, ctl, api
    ctl.set_service(None)
    runner.wait(10000)
    svc.close()


def _folder(view: LibraryView, path: str):
    return next(idx for idx in view.model.folder_indexes() if view.model.node(idx).path == path)


def test_first_screen_is_folder_summaries_only(library_ui) -> None:
    view, _ctl, api = library_ui
    assert [c[0] for c in api.calls] == ["listing"]  # no documents(), no page: nothing below the folders
    assert view.model.document_count() == len(api.svc.documents())
    assert view.row_count_visible() == 0
    big = view.model.node(_folder(view, "/lib/a"))
    assert big.own_files > PAGE and big.loaded == 0 and big.status.startswith(f"{big.files:,} files")
    assert view.model.hasChildren(_folder(view, "/lib/a"))


def test_files_page_in_as_a_folder_opens_and_scrolls(qtbot, library_ui) -> None:
    view, _ctl, api = library_ui
    idx = _folder(view, "/lib/a")
    view.tree.expand(idx)  # Qt asks the model to fetch more for an opened folder
    qtbot.waitUntil(lambda: view.model.node(_folder(view, "/lib/a")).loaded >= PAGE, timeout=10000)
    qtbot.wait(200)  # the view may ask once more while its first rows are laid out
    node = view.model.node(_folder(view, "/lib/a"))
    assert node.own_files > 3 * PAGE
    assert api.rows_read() == node.loaded <= 2 * PAGE, api.calls  # a page or two, not the folder's files
    assert all(c[1][1] % PAGE == 0 and c[1][2] == PAGE for c in api.calls if c[0] == "page")
    names = [c.path for c in node.children if c.doc is not None]
    assert names == sorted(names, key=str.lower)
    before = node.loaded
    view.tree.scrollToBottom()  # the end of the loaded rows: Qt fetches the next page
    qtbot.waitUntil(lambda: view.model.node(_folder(view, "/lib/a")).loaded > before, timeout=10000)
    node = view.model.node(_folder(view, "/lib/a"))
    assert api.rows_read() == node.loaded < node.own_files
    assert [c.path for c in node.children if c.doc is not None][:len(names)] == names


def test_refresh_keeps_loaded_rows_and_selection(qtbot, library_ui) -> None:
    view, ctl, api = library_ui
    view.tree.expand(_folder(view, "/lib/a"))
    model = view.model
    qtbot.waitUntil(lambda: model.node(_folder(view, "/lib/a")).loaded >= PAGE, timeout=10000)
    view.tree.scrollToBottom()
    qtbot.waitUntil(lambda: model.node(_folder(view, "/lib/a")).loaded >= 2 * PAGE, timeout=10000)
    qtbot.wait(200)
    loaded = model.node(_folder(view, "/lib/a")).loaded
    folder = _folder(view, "/lib/a")
    target = model.index(model.rowCount(folder) - 5, 0, folder)
    chosen = model.node(target).path
    view.tree.selectionModel().select(target, view.tree.selectionModel().SelectionFlag.ClearAndSelect
                                      | view.tree.selectionModel().SelectionFlag.Rows)
    with qtbot.waitSignal(ctl.library_refreshed, timeout=10000):
        ctl.reload_library()
    assert api.calls[-1][0] == "listing" and api.calls[-1][1][1]["/lib/a/"] == loaded
    assert model.node(_folder(view, "/lib/a")).loaded == loaded
    assert view.tree.isExpanded(_folder(view, "/lib/a"))
    assert view.selected_paths() == [chosen]


def test_a_late_listing_never_replaces_a_newer_one(qtbot, library_ui) -> None:
    view, ctl, api = library_ui
    gate = threading.Event()
    api.hold = gate
    ctl.reload_library()  # an unfiltered listing, held back on its worker
    qtbot.waitUntil(lambda: api.calls[-1][0] == "listing", timeout=5000)
    view.filter_box.setText("doc-0001")  # a big library asks the store again for the filter
    qtbot.waitUntil(lambda: view.model.listing_query().needle == "doc-0001", timeout=10000)
    qtbot.waitUntil(lambda: view.row_count_visible() > 0, timeout=10000)  # its few folders open and page in
    qtbot.wait(200)
    filtered = view.row_count_visible()
    assert filtered and all("doc-0001" in r.lower() for r in view.row_texts())
    with qtbot.assertNotEmitted(ctl.library_refreshed, wait=300):
        gate.set()  # the older listing arrives last: dropped
    assert view.model.listing_query().needle == "doc-0001" and view.row_count_visible() == filtered


def test_a_page_for_a_replaced_tree_is_dropped(qtbot, library_ui) -> None:
    view, ctl, api = library_ui
    model = view.model
    old = model.generation
    docs = api.svc.library_page(LibraryQuery(), "/lib/a/", 0, PAGE)
    with qtbot.waitSignal(ctl.library_refreshed, timeout=10000):
        ctl.reload_library()
    assert model.generation != old
    assert not model.add_page(old, "/lib/a/", 0, docs)  # asked for the tree that was replaced
    assert model.node(_folder(view, "/lib/a")).loaded == 0


def test_a_folder_not_loaded_stands_for_all_its_files_when_removed(qtbot, library_ui) -> None:
    view, _ctl, _api = library_ui
    folder = _folder(view, "/x/y/z")
    files = view.model.node(folder).files
    assert files > 0 and view.model.node(folder).loaded == 0
    sm = view.tree.selectionModel()
    sm.select(folder, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
    assert view.selected_paths() == ["/x/y/z"] and view.selected_file_count() == files
    view.ask_remove()
    assert view.confirm_box is not None and f"{files:,} files" in view.confirm_box.text()
    view.confirm_box.reject()


def test_the_window_does_not_import_the_core_before_its_first_paint() -> None:
    """Start-up: the window's modules import neither numpy, the store, retrieval nor the watch (1.5-2 s of the
    window's start on a loaded machine); the watch controller's copies of the watch's names stay equal."""
    import subprocess
    import sys

    code = ("import sys; from desktop_memory.gui.main_window import MainWindow; "
            "print(sorted(m for m in ('numpy', 'desktop_memory.store', 'desktop_memory.retrieve', "
            "'desktop_memory.watch', 'desktop_memory.service', 'desktop_memory.embed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    from desktop_memory.gui import watch_controller as wc
    from desktop_memory.watch import update

    assert (wc.STATE_PAUSED, wc.STATE_WATCHING, wc.ERROR, wc.EMBEDDED, wc.CATCH_UP) == (
        update.STATE_PAUSED, update.STATE_WATCHING, update.ERROR, update.EMBEDDED, update.CATCH_UP)


def test_typing_a_filter_asks_the_store_once(qtbot, library_ui) -> None:
    """Each letter of a big library's filter would be a scan of every path: letters typed together are one query."""
    view, _ctl, api = library_ui
    before = len(api.calls)
    qtbot.keyClicks(view.filter_box, "doc-0002")
    qtbot.waitUntil(lambda: view.model.listing_query().needle == "doc-0002", timeout=10000)
    listings = [c for c in api.calls[before:] if c[0] == "listing"]
    assert len(listings) == 1 and listings[0][1][0].needle == "doc-0002"
