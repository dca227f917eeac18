"""Error states (non-modal, with what to do), the task plumbing and the stall meter."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.errors import StoreError

from .fake_service import FakeService
from .helpers import search, wait_job


def test_store_error_shows_a_banner_not_a_dialog(qtbot, make_window):
    def broken(_s):
        raise StoreError("the database is locked by another program")

    w = make_window(broken, wait_ready=False)
    qtbot.waitUntil(lambda: any("locked" in t for t in w.banners.texts()), timeout=5000)
    banner = w.banners.banners()[0]
    assert banner.level == "error"
    assert [b.text() for b in banner.buttons] == ["Retry", "Choose location…"]
    assert QApplication.activeModalWidget() is None
    # dismissible
    banner.dismiss()
    assert not w.banners.banners()


def test_embedder_unreachable_keeps_keyword_search(qtbot, make_window, docs_dir):
    msg = "Ollama is not reachable at http://127.0.0.1:9: start it with `ollama serve`."
    w = make_window(lambda s: FakeService(s, embedder_error=msg))
    qtbot.waitUntil(lambda: w.embedder_state == "error", timeout=5000)
    assert "Embedder:" in w.status.embedder.text()
    assert any("Semantic search is off" in t and "ollama serve" in t for t in w.banners.texts())
    w.add_paths([str(docs_dir)])
    wait_job(qtbot, w)
    search(qtbot, w, "async")
    assert w.results_model.rowCount() > 0


def test_real_ollama_unreachable_state(qtbot, make_window, hash_factory):
    """With the real service and an Ollama URL nobody listens on, the status bar says 'unreachable'."""
    from desktop_memory.service import MemoryService

    s = Settings(embedder=EmbedderSettings(kind="ollama", ollama_url="http://127.0.0.1:9", ollama_timeout_s=2))
    w = make_window(MemoryService, settings=s)
    qtbot.waitUntil(lambda: w.embedder_state == "error", timeout=30000)
    assert "unreachable" in w.status.embedder.text()
    assert any("Semantic search is off" in t for t in w.banners.texts())


def test_settings_test_connection_lists_models(qtbot, make_window, hash_factory):
    from tests.support.ollama_server import OllamaStub

    w = make_window(hash_factory)
    with OllamaStub(dim=16) as stub:
        dlg = w.show_settings()
        dlg.editor("embedder.kind").set_value("ollama")
        dlg.editor("embedder.ollama_url").set_value(stub.url)
        dlg.editor("embedder.ollama_model").set_value("nomic-embed-text")
        tester = dlg.ollama
        tester.test_btn.click()
        qtbot.waitUntil(lambda: tester.test_result.text().startswith(("✓", "✗")), timeout=15000)
        assert tester.test_result.text().startswith("✓"), tester.test_result.text()
        combo = dlg.editor("embedder.ollama_model").combo
        models = [combo.itemText(i) for i in range(combo.count())]
        assert "nomic-embed-text:latest" in models
        dlg.editor("embedder.ollama_url").set_value("http://127.0.0.1:9")
        tester.test_btn.click()
        qtbot.waitUntil(lambda: tester.test_btn.text() == "Test connection"
                        and tester.test_result.text().startswith("✗"), timeout=30000)
        text = tester.test_result.text()
        assert text.count("ollama serve") == 1, text  # the fix is said once, not twice
        dlg.reject()


def test_changing_the_model_builds_its_vectors_beside(qtbot, make_window, docs_dir):
    w = make_window(FakeService)
    new = Settings(embedder=EmbedderSettings(kind="hash"))  # tested first (instantly), then switched
    w.apply_settings(new)
    qtbot.waitUntil(lambda: any("embedding model changed" in t.lower() for t in w.banners.texts()), timeout=5000)
    assert any(b.key == "reembed" for b in w.banners.banners())
    text = next(t for t in w.banners.texts() if "embedding model changed" in t.lower())
    assert "being built beside" in text and "Cancel keeps the old ones" in text
    assert w.settings.embedder.kind == "hash"


def test_task_runner_latest_wins_and_delivers_on_ui_thread(qtbot):
    from desktop_memory.gui.tasks import TaskRunner

    runner = TaskRunner(max_threads=3)
    got: list[tuple[str, bool]] = []
    ui = QThread.currentThread()

    def work(name: str, delay: float):
        def fn() -> str:
            time.sleep(delay)  # deliberate: a slow worker, so the older task finishes last
            return name
        return fn

    runner.submit(work("old", 0.5), channel="q", on_done=lambda r: got.append((r, QThread.currentThread() is ui)))
    runner.submit(work("new", 0.05), channel="q", on_done=lambda r: got.append((r, QThread.currentThread() is ui)))
    qtbot.waitUntil(lambda: bool(got), timeout=3000)
    qtbot.waitUntil(lambda: not runner.active(), timeout=3000)  # the old one finished too, and was dropped
    assert got == [("new", True)]

    errors: list[str] = []
    runner.submit(lambda: 1 / 0, on_error=lambda exc, tb: errors.append(type(exc).__name__))
    qtbot.waitUntil(lambda: bool(errors), timeout=3000)
    assert errors == ["ZeroDivisionError"]

    progress: list[int] = []
    done = threading.Event()

    def job(ctx):
        for i in range(3):
            ctx.report(i)
        while not ctx.cancelled:
            time.sleep(0.01)  # a worker polling its cancel flag, not a test waiting
        done.set()
        return "cancelled"

    t = runner.submit(job, with_context=True, on_progress=progress.append)
    qtbot.waitUntil(lambda: len(progress) == 3, timeout=3000)
    t.cancel()
    qtbot.waitUntil(done.is_set, timeout=3000)
    runner.wait(3000)
    runner.deleteLater()  # a parentless runner goes on the UI thread, like the app's (parented to the window)
    qtbot.wait(20)  # one pass of the event loop so the deleteLater above runs (nothing to wait for)


def test_stall_meter_measures_a_blocked_event_loop(qtbot):
    from desktop_memory_bench.stall_meter import StallMeter

    with StallMeter(interval_ms=10) as meter:  # deliberate waits: the meter measures the time that passes
        qtbot.wait(100)
        time.sleep(0.2)  # the UI thread is blocked: one ~200 ms stall
        qtbot.wait(100)
    r = meter.report
    assert r is not None
    assert 150 <= r.max_stall_ms <= 400
    assert r.count_over(100) == 1
    assert "max stall" in r.summary()
    assert r.ticks > 5


def test_pump_events_keeps_none_alive(qtbot):
    """Wait loops pump events thousands of times; PySide6 6.12's static processEvents leaks a None reference each
    call (fatal once the count hits zero), so pump_events must not."""
    import sys

    from desktop_memory.gui.event_pump import pump_events

    before = sys.getrefcount(None)
    for i in range(3000):
        pump_events(1 if i % 2 else 0)
    assert sys.getrefcount(None) - before > -100


def test_qt_binding_keeps_none_alive(qtbot):
    """The installed PySide6 must not leak references to None/True/False on void calls and signal emits
    (PySide6 6.12.0 on Python 3.11 does: the app would abort with "none_dealloc" after a few thousand calls)."""
    import sys

    from PySide6.QtCore import QObject, QTimer, Signal
    from PySide6.QtWidgets import QLineEdit

    class Emitter(QObject):
        changed = Signal(bool)

    box, timer, emitter = QLineEdit(), QTimer(), Emitter()
    emitter.changed.connect(lambda _on: None)
    before = [sys.getrefcount(x) for x in (None, True, False)]
    for i in range(2000):
        box.setText(str(i))
        timer.start(1000)
        timer.stop()
        emitter.changed.emit(i % 2 == 0)
    after = [sys.getrefcount(x) for x in (None, True, False)]
    assert all(a - b > -100 for a, b in zip(after, before)), (before, after)


def test_counts_read_naturally():
    from desktop_memory.gui.formatting import counted

    assert counted(1, "document") == "1 document"
    assert counted(0, "document") == "0 documents"
    assert counted(2048, "chunk") == "2,048 chunks"
    assert counted(3, "query", "queries") == "3 queries"
