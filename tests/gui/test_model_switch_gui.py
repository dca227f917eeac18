"""Issue 30 item 2 in the window, with the real service and real SQLite: a model the Settings dialog names is
tested before anything is switched or saved (a failed test changes nothing), and a working one gets its vectors
built beside the library's own in the background while search keeps answering from them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import load_settings
from tests.support.openai_server import OpenAIStub


def real_factory(settings: Settings) -> MemoryService:
    return MemoryService(settings)  # no injected embedder: the settings choose it, as in the app


def indexed(tmp_path: Path, n: int = 12) -> Settings:
    folder = tmp_path / "notes"
    folder.mkdir()
    words = ["cats", "rockets", "bread", "tea"]
    for i in range(n):
        (folder / f"n{i:02d}.md").write_text(f"# Note {i}\n\nAbout {words[i % 4]} on day {i}.\n", encoding="utf-8")
    settings = Settings(db_path=str(tmp_path / "g.db"), embedder=EmbedderSettings(kind="hash"))
    svc = MemoryService(settings)
    try:
        svc.index_paths([folder])
    finally:
        svc.close()
    return settings


def test_a_model_that_does_not_answer_changes_nothing(qtbot, make_window, tmp_path):
    settings = indexed(tmp_path)
    w = make_window(real_factory, settings)
    w.host.persist()
    before = w.svc.stats()
    assert before.vectors == 12 and before.model_id == "hash-test-64"
    broken = EmbedderSettings(kind="openai", openai_url="http://127.0.0.1:9/v1", openai_model="typo",
                              openai_timeout_s=2.0)
    w.apply_settings(Settings(db_path=settings.db_path, embedder=broken))
    qtbot.waitUntil(lambda: any("was not changed" in t for t in w.banners.texts()), timeout=30000)
    after = w.svc.stats()
    assert (after.vectors, after.model_id) == (12, "hash-test-64")  # not one vector lost
    assert w.settings.embedder.kind == "hash" and load_settings().embedder.kind == "hash"  # nothing saved
    qtbot.waitUntil(lambda: w.embedder_state == "ready", timeout=30000)
    qtbot.wait(300)
    assert any("was not changed" in t for t in w.banners.texts())  # said, and not cleared by the status pill
    out = w.svc.search_outcome("rockets")
    assert "dense" in out.results[0].lanes and not out.notes  # semantic search as before


def test_a_new_model_is_built_in_the_background_while_search_answers(qtbot, make_window, tmp_path):
    settings = indexed(tmp_path)
    with OpenAIStub(HashEmbedder(48), models=["other-48"]) as stub:  # type: ignore[arg-type]
        stub.delay_s = 0.2
        w = make_window(real_factory, settings)
        new = EmbedderSettings(kind="openai", openai_url=stub.url, openai_model="other-48", batch_size=2)
        w.apply_settings(Settings(db_path=settings.db_path, embedder=new))
        qtbot.waitUntil(lambda: any("being built beside" in t for t in w.banners.texts()), timeout=30000)
        searched = 0
        while w.svc.stats().model_id == "hash-test-64" and searched < 200:
            out = w.svc.search_outcome("rockets")
            assert "dense" in out.results[0].lanes  # the old vectors answer throughout
            searched += 1
            qtbot.wait(50)
        qtbot.waitUntil(lambda: w.svc.stats().model_id == "openai:other-48", timeout=60000)
        st = w.svc.stats()
        assert searched and st.vectors == 12 and {m.model_id for m in st.models} == {"openai:other-48",
                                                                                     "hash-test-64"}
        assert load_settings().embedder.kind == "openai"
        w.close()


def test_cancel_during_the_build_keeps_the_old_vectors(qtbot, make_window, tmp_path):
    settings = indexed(tmp_path, n=40)
    with OpenAIStub(HashEmbedder(48), models=["other-48"]) as stub:  # type: ignore[arg-type]
        stub.delay_s = 0.3  # 20 requests of 2 passages: several seconds
        w = make_window(real_factory, settings)
        new = EmbedderSettings(kind="openai", openai_url=stub.url, openai_model="other-48", batch_size=2)
        w.apply_settings(Settings(db_path=settings.db_path, embedder=new))
        # the switch's progress is in the panel, with Cancel
        qtbot.waitUntil(lambda: "building openai:other-48 vectors" in w.progress.current.text(), timeout=30000)
        qtbot.waitUntil(lambda: w.progress.cancel_btn.isVisible() and w.progress.cancel_btn.isEnabled(),
                        timeout=10000)
        qtbot.mouseClick(w.progress.cancel_btn, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not w.index_jobs.is_running(), timeout=30000)
        st = w.svc.stats()
        assert (st.model_id, st.vectors) == ("hash-test-64", 40)  # Cancel keeps the old set whole
        side = {m.model_id: m for m in st.models}["openai:other-48"]
        assert side.vectors < 40 and not side.active  # what was built stays for a later Resume
        out = w.svc.search_outcome("rockets")
        assert "dense" in out.results[0].lanes
        w.close()
