"""The OpenAI-compatible embedder and the reranker through the service and the CLI, against the loopback MiniLM
server: switching models re-embeds, search (reranked) keeps working while a long embedding runs, and the CLI
commands set everything up without the key ever reaching settings.toml."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.api_keys import get_key
from desktop_memory.cli import main
from desktop_memory.config import EmbedderSettings, Settings, settings_path
from desktop_memory.embed import LocalOnnxEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import load_settings
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    local = LocalOnnxEmbedder()
    with OpenAIStub(local) as s:
        yield s


@pytest.fixture()
def stub(server: OpenAIStub) -> OpenAIStub:
    server.reset()
    return server


def notes(tmp_path: Path, n: int) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    words = ["cats", "rockets", "bread", "tea", "rivers", "chess", "violins"]
    for i in range(n):
        (folder / f"n{i:03d}.md").write_text(f"# Note {i}\n\nNote {i} talks about topic {i % 7}: {words[i % 7]} "
                                             "and other things worth remembering.\n", encoding="utf-8")
    return folder


def openai_settings(stub: OpenAIStub, **kw: object) -> EmbedderSettings:
    return EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL, **kw)  # type: ignore[arg-type]


def test_switching_to_the_server_builds_beside_and_semantic_search_works_meanwhile(tmp_path: Path,
                                                                                   stub: OpenAIStub) -> None:
    folder = notes(tmp_path, 14)
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=tmp_path / "m.db")
    try:
        svc.index_paths([folder])
        assert svc.stats().vectors == 14
        assert svc.set_embedder_settings(openai_settings(stub, batch_size=5)) is True  # another model: to build
        st = svc.stats()
        assert st.vectors == 14 and st.pending_vectors == 0 and st.model_id == "hash-test-64"  # nothing lost
        out = svc.search_outcome("rockets")  # the old vectors still answer, and a note says so
        assert out.results and "dense" in out.results[0].lanes
        assert any("semantic search uses hash-test-64" in n for n in out.notes)
        assert svc.embed_pending().chunks_embedded == 14
        st = svc.stats()
        assert st.vectors == 14 and st.model_id == f"openai:{MODEL}" and st.dim == 384
        hits = svc.search_outcome("rockets")
        assert not hits.notes and "dense" in hits.results[0].lanes
        assert svc.set_embedder_settings(openai_settings(stub, batch_size=5)) is False  # same model: kept
    finally:
        svc.close()


def test_reranked_search_works_while_a_long_embedding_runs(tmp_path: Path, stub: OpenAIStub) -> None:
    folder = notes(tmp_path, 30)
    settings = Settings(embedder=openai_settings(stub, batch_size=2))
    svc = MemoryService(settings, db_path=tmp_path / "m.db")
    try:
        svc.index_paths([folder], embed=False)
        search = settings.search.__class__(rerank=True, rerank_url=stub.url, rerank_model=MODEL)
        svc.apply_settings(Settings(embedder=settings.embedder, search=search))
        stub.delay_s = 0.1  # embedding: 15 batches of 2, 0.1 s each; rerank answers at once
        job = threading.Thread(target=svc.embed_pending)
        job.start()
        try:
            time.sleep(0.3)
            assert job.is_alive()
            t0 = time.perf_counter()
            out = svc.search_outcome("rockets and engines", top_k=5)
            waited = time.perf_counter() - t0
            assert job.is_alive(), "the embedding job should still be running during the search"
        finally:
            job.join(timeout=60)
        assert out.results and out.results[0].lanes["rerank"].rank == 1
        assert "rockets" in out.results[0].text
        assert waited < 5  # did not wait for the embedding job to finish
        assert svc.stats().vectors == 30
    finally:
        svc.close()


def test_cli_sets_up_the_server_and_the_reranker(tmp_path: Path, stub: OpenAIStub, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    folder = notes(tmp_path, 7)
    db = str(tmp_path / "c.db")
    stub.api_key = "sk-cli-key-31337"
    assert main(["--db", db, "index", str(folder), "--no-embed", "-q"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-cli-key-31337\n"))
    assert main(["api-key", "set", "embedder"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-cli-key-31337\n"))
    assert main(["api-key", "set", "rerank"]) == 0
    assert get_key("embedder") == "sk-cli-key-31337"
    capsys.readouterr()
    assert main(["--db", db, "embedder", "--kind", "openai", "--url", stub.url, "--model", MODEL, "--test"]) == 0
    out = capsys.readouterr().out
    assert "Connected:" in out and f"model {MODEL} (384-d)" in out
    assert main(["--db", db, "embed", "-q"]) == 0
    assert main(["rerank", "--on", "--url", stub.url, "--model", MODEL, "--depth", "5", "--test"]) == 0
    assert "ranked a test pair as expected" in capsys.readouterr().out
    saved = load_settings()
    assert saved.embedder.kind == "openai" and saved.search.rerank and saved.search.rerank_depth == 5
    assert "sk-cli-key" not in settings_path().read_text()
    assert main(["--db", db, "search", "rockets", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    rows = results["results"] if isinstance(results, dict) else results
    assert "rerank #1, score" in rows[0]["why"] and "rockets" in rows[0]["text"]
    assert main(["api-key", "status", "rerank"]) == 0
    status = capsys.readouterr().out
    assert "set (" in status and "31337" not in status


def test_cli_prefills_prefixes_for_known_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.db")
    assert main(["--db", db, "embedder", "--kind", "openai", "--model", "intfloat/e5-small-v2"]) == 0
    e = load_settings().embedder
    assert (e.query_prefix, e.document_prefix) == ("query: ", "passage: ")
    assert main(["--db", db, "embedder", "--model", "nomic-embed-text", "--query-prefix", ""]) == 0
    e = load_settings().embedder
    assert e.openai_model == "nomic-embed-text" and e.query_prefix == ""  # a given prefix wins
    assert main(["--db", db, "embedder", "--kind", "local"]) == 0
    assert load_settings().embedder.kind == "local"


def test_a_server_in_use_needs_an_http_address() -> None:
    from desktop_memory.config import SearchSettings
    from desktop_memory.errors import SettingsError
    from desktop_memory.settings_file import validate_settings

    ok = Settings(embedder=EmbedderSettings(kind="local", openai_url="not a url"))
    assert validate_settings(ok.to_dict()) == ok  # not in use: not checked
    bad = Settings(embedder=EmbedderSettings(kind="openai", openai_url="localhost:8080"))
    with pytest.raises(SettingsError, match=r"\[embedder\] openai_url: 'localhost:8080' is not an http://"):
        validate_settings(bad.to_dict())
    bad = Settings(search=SearchSettings(rerank=True, rerank_url=""))
    with pytest.raises(SettingsError, match=r"\[search\] rerank_url"):
        validate_settings(bad.to_dict())
