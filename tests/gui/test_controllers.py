"""Each part of the window on its own: no MainWindow, just the controller, a TaskRunner and a service."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.gui.context_controller import ContextController
from desktop_memory.gui.index_jobs import IndexJobController
from desktop_memory.gui.library_controller import LibraryController
from desktop_memory.gui.library_view import LibraryView
from desktop_memory.gui.results_model import ResultsModel
from desktop_memory.gui.search_controller import LOADING_NOTE, SearchController, SearchRequest
from desktop_memory.gui.service_host import ServiceHost
from desktop_memory.gui.tasks import TaskRunner
from desktop_memory.jobs import EMBED, READ
from desktop_memory.models import Stats
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import load_settings

from .fake_service import FakeService


@pytest.fixture
def fake(docs_dir):
    svc = FakeService(Settings(), slow_queries={"benchmarks": 1.0})
    svc.index_paths([docs_dir])
    return svc


def test_search_controller_newest_request_wins(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    got: list[str] = []
    ctl.results_ready.connect(lambda resp: got.append(resp.query))
    ctl.search(SearchRequest("benchmarks"))  # slow (1 s)
    gen = ctl.search(SearchRequest("async"))
    qtbot.waitUntil(lambda: got == ["async"], timeout=5000)
    qtbot.waitUntil(lambda: not runner.active(), timeout=5000)  # the slow answer arrives meanwhile, dropped
    assert got == ["async"] and ctl.generation == gen
    assert ctl.last_response is not None and ctl.last_response.results

    # clearing the query drops what is still running
    ctl.search(SearchRequest("benchmarks"))
    ctl.clear()
    qtbot.waitUntil(lambda: not runner.active(), timeout=5000)  # the slow search ended and was dropped
    assert got == ["async"]


def test_search_controller_debounces_and_notes_keyword_fallback(qtbot, runner, fake):
    ctl = SearchController(fake, runner, debounce_ms=50)
    responses = []
    ctl.results_ready.connect(responses.append)
    ctl.semantic_loading = True
    for partial in ("a", "as", "asy", "async"):
        ctl.schedule(SearchRequest(partial))
    qtbot.waitUntil(lambda: bool(responses), timeout=5000)
    qtbot.wait(200)  # deliberate: time for a second (wrong) search to show up; nothing must
    assert [r.query for r in responses] == ["async"]  # one search for the whole burst of typing
    assert fake.search_calls[-1] == "async" and fake.search_calls.count("async") == 1
    assert responses[0].backend == "keyword" and LOADING_NOTE in responses[0].notes


def test_context_controller_reads_inclusion_from_the_model(qtbot, runner, fake):
    model = ResultsModel()
    ctl = ContextController(model, runner, budget=4000)
    ctl.set_service(fake)
    results = fake.search_outcome("async").results
    assert len(results) >= 2
    with qtbot.waitSignal(ctl.report_ready, timeout=5000):
        model.set_results("async", ["async"], results)
    assert [i.chunk_id for i in ctl.report.items] == [r.chunk_id for r in results]
    with qtbot.waitSignal(ctl.report_ready, timeout=5000):  # unticking a row is one model edit
        model.setData(model.index(0), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert results[0].chunk_id not in {i.chunk_id for i in ctl.report.items}
    assert model.included_results() == results[1:]
    copied = []
    ctl.copied.connect(copied.append)
    model.set_included(0, True)  # a re-pack is pending: the copy waits for it, then copies the new block
    ctl.copy()
    qtbot.waitUntil(lambda: bool(copied), timeout=5000)
    assert results[0].chunk_id in {i.chunk_id for i in copied[0].items}


def test_index_jobs_merge_cancel_and_resume_once(qtbot, tmp_path, docs_dir):
    jobs_runner = TaskRunner(max_threads=2)
    svc = FakeService(Settings(), file_delay=0.05)
    ctl = IndexJobController(jobs_runner)
    started, summaries = [], []
    ctl.started.connect(started.append)
    ctl.succeeded.connect(summaries.append)
    for name in ("async.md", "benchmarks.md", "alternatives.md"):
        ctl.add_paths([str(docs_dir / name)])  # queued: no service yet
    assert not ctl.is_running() and len(ctl.pending) == 1 and len(ctl.pending[0].paths) == 3  # merged as queued
    ctl.set_service(svc)
    qtbot.waitUntil(lambda: not ctl.is_running() and not ctl.pending, timeout=10000)
    # three drops, one read; then one embedding behind it (read first, then embed), one summary for the burst
    assert [j.kind for j in started] == [READ, EMBED] and len(started[0].paths) == 3
    assert len(summaries) == 1 and ctl.last_summary is not None and ctl.last_summary.indexed == 3

    ctl.add_paths([str(docs_dir)], force=True)
    ctl.add_paths([str(docs_dir / "async.md")])  # different force flag: not merged
    ctl.cancel()
    qtbot.waitUntil(lambda: not ctl.is_running(), timeout=10000)
    assert not ctl.pending and ctl.last_summary.cancelled and ctl.paused

    stats = Stats({"indexed": 3}, chunks=10, vectors=5, pending_vectors=5, db_path="", db_bytes=0, model_id=None,
                  dim=None)
    assert not ctl.maybe_resume(stats, embedder_ok=True)  # the user cancelled: no resume behind their back
    ctl.auto_resume = True
    assert not ctl.maybe_resume(stats, embedder_ok=True)  # still paused: only the person's Resume ends it
    ctl.reembed()  # Resume
    qtbot.waitUntil(lambda: not ctl.is_running(), timeout=5000)
    assert not ctl.paused
    assert ctl.maybe_resume(stats, embedder_ok=True)
    qtbot.waitUntil(lambda: not ctl.is_running(), timeout=5000)
    assert not ctl.maybe_resume(stats, embedder_ok=True)  # once only
    ctl.set_service(None)
    svc.close()
    jobs_runner.wait(5000)


def test_library_controller_sees_another_process_write(qtbot, runner, tmp_path, docs_dir):
    """Changes come from the store's counters: a write by another connection (another process, here a second
    service on the same file) is noticed by the idle stamp check and refreshes the Library and the counts."""
    db = tmp_path / "lib.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    other = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    view = LibraryView()
    ctl = LibraryController(runner, view, busy=lambda: False, outcomes=dict, external_poll_ms=100)
    changes, stats = [], []
    ctl.changed.connect(changes.append)
    ctl.stats_ready.connect(stats.append)
    try:
        ctl.set_service(svc)
        qtbot.waitUntil(lambda: len(changes) == 1, timeout=5000)  # the first stamp read
        qtbot.wait(400)  # deliberate: four idle checks (every 100 ms) pass and must report nothing
        assert len(changes) == 1  # nothing changed: the idle checks stay quiet
        other.index_paths([docs_dir / "async.md", docs_dir / "benchmarks.md"])
        # the listing and the counts arrive as two answers, in either order: wait for both
        qtbot.waitUntil(lambda: view.model.document_count() == 2 and bool(stats)
                        and stats[-1].documents == {"indexed": 2}, timeout=5000)
        assert len(changes) >= 2
        assert svc.open_connections() <= 4  # the stamp checks reuse pooled readers
    finally:
        ctl.stop()
        runner.wait(5000)
        other.close()
        svc.close()


def test_service_host_replaces_settings_never_edits_them(qtbot, runner, tmp_path):
    original = Settings()
    host = ServiceHost(original, runner, factory=FakeService, settings_path=tmp_path / "s.toml")
    with qtbot.waitSignal(host.opened, timeout=5000):
        host.open()
    snapshot = dataclasses.asdict(original)
    new = dataclasses.replace(original, search=dataclasses.replace(original.search, top_k=7, backend="keyword"))
    change = host.apply(new)
    assert change.backend and not change.database and not change.embedder
    assert host.settings is not original and host.settings.search.top_k == 7
    assert host.svc is not None and host.svc.settings.search.top_k == 7
    assert dataclasses.asdict(original) == snapshot  # what a worker may still be reading is untouched
    assert load_settings(tmp_path / "s.toml").search.top_k == 7
    host.update(gui={"theme": "dark"})
    assert host.settings.gui["theme"] == "dark" and "theme" not in original.gui
    host.close()


def test_context_panel_rows_are_the_results_model(qtbot, fake):
    """Ticking a row in the context panel and pressing Space in the results list edit the same check state."""
    from desktop_memory.gui.context_panel import ContextPanel

    model = ResultsModel()
    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.set_results_model(model)
    results = fake.search_outcome("async").results
    model.set_results("async", ["async"], results)
    rows = panel.items.model()
    assert rows.rowCount() == len(results)
    assert rows.setData(rows.index(1, 0), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert not model.is_included(1) and model.is_included(0)
    model.set_included(1, True)
    assert rows.index(1, 0).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert rows.flags(rows.index(0, 0)) & Qt.ItemFlag.ItemIsUserCheckable
    assert rows.index(0, 0).data().startswith("#1")
