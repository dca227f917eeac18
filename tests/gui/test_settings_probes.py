"""The window's Settings dialog asks its service's probes (MemoryApi.servers), never an embedder of its own: the
Ollama and OpenAI-compatible Test buttons and the embedder switch reach ``servers`` on a worker."""

from __future__ import annotations

import threading

from desktop_memory.config import EmbedderSettings, SearchSettings
from desktop_memory.model_servers import ModelServers, ServerAnswer

from .fake_service import FakeService


class RecordingServers(ModelServers):
    """Answers without a network; records what was asked and on which thread."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def _note(self, what: str) -> None:
        self.asked.append((what, threading.current_thread().name))

    def test_ollama(self, es: EmbedderSettings) -> ServerAnswer:
        self._note("ollama")
        return ServerAnswer("Connected: Ollama 9.9, model m (8-d)", ["m:latest", "n:latest"])

    def test_openai(self, es: EmbedderSettings, api_key: str | None = None) -> ServerAnswer:
        self._note("openai")
        return ServerAnswer(f"Connected: {es.openai_url}, model {es.openai_model}", ["served-model"])

    def test_reranker(self, ss: SearchSettings, api_key: str | None = None) -> ServerAnswer:
        self._note("rerank")
        return ServerAnswer("ranked a test pair as expected", [])

    def try_embedder(self, es: EmbedderSettings) -> str:
        self._note(f"try {es.kind}")
        return "answered"


def test_settings_test_buttons_ask_the_services_probes(qtbot, make_window):  # type: ignore[no-untyped-def]
    servers = RecordingServers()

    class Service(FakeService):
        pass

    Service.servers = servers  # type: ignore[assignment]
    w = make_window(Service)
    dlg = w.show_settings()
    dlg.editor("embedder.kind").set_value("ollama")
    dlg.show_page("embedder")
    dlg.ollama.test_connection()
    qtbot.waitUntil(lambda: dlg.ollama.test_result.text().startswith("✓"), timeout=10000)
    assert "Ollama 9.9" in dlg.ollama.test_result.text() and "2 model(s)" in dlg.ollama.test_result.text()
    dlg.editor("embedder.kind").set_value("openai")
    dlg.editor("embedder.openai_model").set_value("served-model")
    dlg.servers.embedder.tester.test_connection()
    qtbot.waitUntil(lambda: dlg.servers.embedder.tester.result.text().startswith("✓"), timeout=10000)
    dlg.servers.rerank.tester.test_connection()
    qtbot.waitUntil(lambda: dlg.servers.rerank.tester.result.text().startswith("✓"), timeout=10000)
    assert [what for what, _ in servers.asked] == ["ollama", "openai", "rerank"]
    assert all(thread != threading.main_thread().name for _, thread in servers.asked)  # never on the UI thread
    dlg.reject()


def test_switching_the_embedder_tries_it_through_the_service_first(qtbot, make_window):  # type: ignore[no-untyped-def]
    servers = RecordingServers()

    class Service(FakeService):
        pass

    Service.servers = servers  # type: ignore[assignment]
    w = make_window(Service)
    w.host.change_embedder(EmbedderSettings(kind="ollama", ollama_model="m"))
    qtbot.waitUntil(lambda: w.settings.embedder.kind == "ollama", timeout=10000)
    assert [what for what, _ in servers.asked] == ["try ollama"]
