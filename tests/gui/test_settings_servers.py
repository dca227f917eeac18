"""The model-server widgets of Settings (gui/settings/servers.py) under pytest-qt, against the real loopback server
(tests.support.openai_server, MiniLM behind the OpenAI and rerank APIs), with the real task runner."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_memory.api_keys import get_key, key_file
from desktop_memory.config import EmbedderSettings, SearchSettings, Settings
from desktop_memory.gui.settings import SettingsDialog
from desktop_memory.gui.settings.editors import ComboTextEditor, RadioEditor
from desktop_memory.gui.settings.servers import ServerPanel
from desktop_memory.gui.tasks import TaskRunner
from desktop_memory.model_servers import prefixes_for
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    with OpenAIStub() as s:
        yield s


@pytest.fixture()
def stub(server: OpenAIStub) -> OpenAIStub:
    server.reset()
    return server


@pytest.fixture()
def runner(qtbot) -> Iterator[TaskRunner]:  # type: ignore[no-untyped-def]
    r = TaskRunner(max_threads=2, inline=True)  # the tests need the answers, not the threads
    yield r
    r.wait(20000)


def test_prefixes_fill_in_for_known_models_but_never_over_a_persons_own() -> None:
    assert prefixes_for("intfloat/e5-base-v2", "", "") == ("query: ", "passage: ")
    assert prefixes_for("nomic-embed-text-v1.5", "query: ", "passage: ") == ("search_query: ", "search_document: ")
    assert prefixes_for("nomic-embed-text-v1.5", "my own: ", "") is None
    assert prefixes_for("all-minilm", "", "") is None
    assert prefixes_for("e5-small", "query: ", "passage: ") is None  # already right


def test_embedder_test_connection_lists_models_and_tries_a_typed_key(qtbot, runner: TaskRunner,  # type: ignore[no-untyped-def]
                                                                     stub: OpenAIStub) -> None:
    stub.api_key = "sk-gui-key-5150"
    stub.models = [MODEL, "other-model"]
    seen: list[list[str]] = []
    es = EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL)
    panel = ServerPanel(runner, "embedder", lambda: es, on_models=seen.append)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.key.status.text() == "Key: not set", timeout=10000)
    panel.tester.test_btn.click()
    qtbot.waitUntil(lambda: panel.tester.result.text().startswith("✗"), timeout=20000)
    assert "needs an API key" in panel.tester.result.text()
    panel.key.field.setText("sk-gui-key-5150")  # typed, not saved: Test uses it
    panel.tester.test_btn.click()
    qtbot.waitUntil(lambda: panel.tester.result.text().startswith("✓"), timeout=20000)
    assert f"model {MODEL} (384-d)" in panel.tester.result.text() and seen == [[MODEL, "other-model"]]
    assert get_key("embedder") == ""  # nothing stored until Save
    panel.key.save_btn.click()
    qtbot.waitUntil(lambda: panel.key.status.text().startswith("Key saved"), timeout=10000)
    assert get_key("embedder") == "sk-gui-key-5150" and panel.key.field.text() == ""
    assert "5150" not in panel.key.status.text()
    panel.key.forget_btn.click()
    qtbot.waitUntil(lambda: "Key: not set" in panel.key.status.text(), timeout=10000)
    assert not key_file().exists()


def test_rerank_test_and_a_down_server(qtbot, runner: TaskRunner, stub: OpenAIStub) -> None:  # type: ignore[no-untyped-def]
    ss = SearchSettings(rerank=True, rerank_url=stub.url, rerank_model=MODEL)
    panel = ServerPanel(runner, "rerank", lambda: ss)
    qtbot.addWidget(panel)
    panel.tester.test_btn.click()
    qtbot.waitUntil(lambda: panel.tester.result.text().startswith("✓"), timeout=20000)
    assert "ranked a test pair as expected" in panel.tester.result.text()
    bad = ServerPanel(runner, "rerank", lambda: "Fix the Search settings marked in red first.")
    qtbot.addWidget(bad)
    bad.tester.test_btn.click()
    assert bad.tester.result.text() == "✗ Fix the Search settings marked in red first."
    stub.rerank_delay_s = 8.0  # slower than the test's 5 s floor: a clear timeout, the UI never blocked
    panel.tester.test_btn.click()
    qtbot.waitUntil(lambda: panel.tester.result.text().startswith("✗"), timeout=20000)
    assert "did not answer within 5 s" in panel.tester.result.text()


# -- inside the generated Settings dialog ---------------------------------------------------------


def _dialog(qtbot, settings: Settings | None = None) -> SettingsDialog:  # type: ignore[no-untyped-def]
    dlg = SettingsDialog(settings or Settings(), TaskRunner(max_threads=1))
    qtbot.addWidget(dlg)
    return dlg


def test_dialog_offers_the_openai_server_and_fills_prefixes_as_a_model_is_picked(qtbot) -> None:  # type: ignore[no-untyped-def]
    dlg = _dialog(qtbot)
    kind = dlg.editor("embedder.kind")
    assert isinstance(kind, RadioEditor) and kind.buttons["openai"].isVisibleTo(dlg) is not None
    assert not dlg.editor("embedder.openai_url").widget.isEnabled()
    kind.buttons["openai"].setChecked(True)
    assert dlg.editor("embedder.openai_url").widget.isEnabled()
    assert dlg.servers.embedder is not None and dlg.servers.rerank is not None
    model = dlg.editor("embedder.openai_model")
    assert isinstance(model, ComboTextEditor)
    qtbot.keyClicks(model.combo, "intfloat/e5-base-v2")  # typed by the person
    assert dlg.editor("embedder.query_prefix").value() == "query: "
    assert dlg.editor("embedder.document_prefix").value() == "passage: "
    model.combo.lineEdit().clear()  # type: ignore[union-attr]
    qtbot.keyClicks(model.combo, "my-own-model")  # unknown: the prefixes filled in for e5 go
    assert (dlg.editor("embedder.query_prefix").value(), dlg.editor("embedder.document_prefix").value()) == ("", "")
    dlg.editor("embedder.query_prefix").set_value("mine: ")
    model.combo.lineEdit().clear()  # type: ignore[union-attr]
    qtbot.keyClicks(model.combo, "nomic-embed-text")
    assert dlg.editor("embedder.query_prefix").value() == "mine: "  # a person's own prefix stays
    s = dlg.result_settings()
    assert s.embedder.kind == "openai" and s.embedder.openai_model == "nomic-embed-text"


def test_loading_saved_settings_never_rewrites_prefixes(qtbot) -> None:  # type: ignore[no-untyped-def]
    saved = Settings(embedder=EmbedderSettings(kind="openai", openai_model="intfloat/e5-base-v2"))
    dlg = _dialog(qtbot, saved)
    assert dlg.result_settings() == saved  # empty prefixes on purpose stay empty


def test_rerank_group_on_the_search_page_and_its_test(qtbot, stub: OpenAIStub) -> None:  # type: ignore[no-untyped-def]
    dlg = _dialog(qtbot)
    on = dlg.editor("search.rerank")
    assert on.value() is False and not dlg.editor("search.rerank_url").widget.isEnabled()
    on.set_value(True)
    dlg.pages[[p.spec.key for p in dlg.pages].index("search")]._apply_conditions()
    assert dlg.editor("search.rerank_url").widget.isEnabled()
    assert dlg.editor("search.rerank_depth").value() == 30 and dlg.editor("search.rerank_timeout_s").value() == 2.0
    dlg.editor("search.rerank_url").set_value(stub.url)
    dlg.editor("search.rerank_model").set_value(MODEL)
    assert dlg.servers.rerank is not None
    dlg.servers.rerank.tester.test_btn.click()
    qtbot.waitUntil(lambda: dlg.servers.rerank.tester.result.text().startswith("✓"), timeout=20000)  # type: ignore[union-attr]
    s = dlg.result_settings()
    assert s.search.rerank and s.search.rerank_url == stub.url and s.search.rerank_model == MODEL
    depth = dlg.editor("search.rerank_depth").input
    assert (depth.minimum(), depth.maximum()) == (1, 1000)  # type: ignore[attr-defined]  # the schema's range


# -- the popup searches through the same service: reranked, or the fused list with a note -------------------


def test_quick_popup_shows_the_rerankers_order_and_falls_back(qtbot, make_window, hash_factory, docs_dir,  # type: ignore[no-untyped-def]
                                                              stub: OpenAIStub) -> None:
    import gc

    from PySide6.QtWidgets import QApplication

    from desktop_memory.gui.desktop_integration import DesktopShell

    from .helpers import drop, wait_job

    search = SearchSettings(rerank=True, rerank_url=stub.url, rerank_model=MODEL, rerank_timeout_s=30)
    w = make_window(hash_factory, Settings(db_path=str(docs_dir.parent / "memory.db"), search=search))
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    popup = shell.show_quick()
    qtbot.waitUntil(popup.isVisible)
    with qtbot.waitSignal(popup.results_shown, timeout=30000, check_params_cb=lambda q: q == "async await"):
        qtbot.keyClicks(popup.box, "async await")
    first = popup.model.result(0)
    assert first.lanes["rerank"].rank == 1 and "rerank #1, score" in first.explain()
    assert any(p == "/v1/rerank" for _, p, _, _ in stub.requests)
    stub.fail_next_n, stub.fail_status = 100, 503  # now failing: the same search shows the fused list
    popup.box.clear()
    with qtbot.waitSignal(popup.results_shown, timeout=30000, check_params_cb=lambda q: q == "async wait"):
        qtbot.keyClicks(popup.box, "async wait")
    assert popup.model.rowCount() > 0 and all("rerank" not in popup.model.result(i).lanes
                                              for i in range(popup.model.rowCount()))
    popup.hide()
    gc.collect()
