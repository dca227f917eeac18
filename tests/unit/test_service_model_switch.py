"""Issue 30, item 2: a model switch that loses nothing.

Against real parts: real SQLite + sqlite-vec libraries, the CLI's ``main``, and a real HTTP server speaking the
OpenAI embeddings API (tests/support/openai_server.py) backed by the hashing embedder at another dimension, so the
"new model" really is another model. Each test fails on the code before model sets (which saved a mistyped server,
cleared the vectors, and switched semantic search off in every library).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.cli import main
from desktop_memory.config import EmbedderSettings, Settings, settings_path
from desktop_memory.embed import DEFAULT_MODEL_ID, HashEmbedder
from desktop_memory.errors import Cancelled
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import load_settings, save_settings
from desktop_memory.store import Store
from desktop_memory.store import migrations as mig
from tests.support.openai_server import OpenAIStub

OTHER = "other-48"  # the second model, served over HTTP: 48-d hashing vectors
OLD = "hash-test-64"  # the library's first model (kind = "hash")


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    with OpenAIStub(HashEmbedder(48), models=[OTHER]) as s:  # type: ignore[arg-type]
        yield s


@pytest.fixture()
def stub(server: OpenAIStub) -> OpenAIStub:
    server.reset()
    server.models = [OTHER]
    return server


def other(stub: OpenAIStub, **kw: object) -> EmbedderSettings:
    return EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=OTHER, **kw)  # type: ignore[arg-type]


def notes(folder: Path, n: int = 24) -> Path:
    folder.mkdir(parents=True)
    words = ["cats", "rockets", "bread", "tea", "rivers", "chess", "violins", "ferries"]
    for i in range(n):
        text = f"# Note {i}\n\nNote {i} is about {words[i % 8]} and the {words[(i + 3) % 8]} seen on day {i}.\n"
        (folder / f"n{i:03d}.md").write_text(text, encoding="utf-8")
    return folder


def library(tmp_path: Path, name: str = "m.db", n: int = 24, kind: str = "hash") -> Path:
    db = tmp_path / name
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind=kind)), db_path=db)  # type: ignore[arg-type]
    try:
        svc.index_paths([notes(tmp_path / f"notes-{name}", n)])
        assert svc.stats().vectors == n
    finally:
        svc.close()
    return db


def vector_counts(db: Path) -> dict[str, int]:
    store = Store(db)
    try:
        return {s.model_id: s.vectors for s in store.models.sets()}
    finally:
        store.close()


def test_a_failed_test_saves_nothing_and_keeps_every_vector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = library(tmp_path)
    save_settings(Settings(embedder=EmbedderSettings(kind="hash")))
    saved = settings_path().read_bytes()
    code = main(["--db", str(db), "embedder", "--kind", "openai", "--url", "http://127.0.0.1:9/v1", "--model", "x",
                 "--test"])
    err = capsys.readouterr().err
    assert code != 0
    assert "nothing was saved" in err and err.count("\n") == 1  # one sentence on one line
    assert settings_path().read_bytes() == saved  # the setting is as it was
    assert vector_counts(db) == {OLD: 24}  # and so are the vectors
    svc = MemoryService(load_settings(), db_path=db)
    try:
        found = svc.search_outcome("rockets")
        assert "dense" in found.results[0].lanes and not found.notes  # semantic search as before
    finally:
        svc.close()


def test_a_new_model_is_built_beside_and_switching_back_is_instant(tmp_path: Path, stub: OpenAIStub,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = library(tmp_path, kind="local")  # the bundled model: switched away from, then back to
    save_settings(Settings())
    assert main(["--db", str(db), "embedder", "--kind", "openai", "--url", stub.url, "--model", OTHER,
                 "--test"]) == 0
    out = capsys.readouterr().out
    assert "Connected:" in out and f"keeps searching with its {DEFAULT_MODEL_ID} vectors" in out
    assert load_settings().embedder.kind == "openai"
    assert vector_counts(db) == {DEFAULT_MODEL_ID: 24}  # nothing cleared
    svc = MemoryService(load_settings(), db_path=db)
    try:
        found = svc.search_outcome("rockets")
        assert "dense" in found.results[0].lanes  # semantic search still on, with the old model's queries
        assert any(n.startswith(f"semantic search uses {DEFAULT_MODEL_ID}") for n in found.notes)
    finally:
        svc.close()
    assert main(["--db", str(db), "embed", "-q"]) == 0
    assert vector_counts(db) == {f"openai:{OTHER}": 24, DEFAULT_MODEL_ID: 24}  # switched; the old set kept
    calls = len(stub.embed_inputs())
    t0 = time.perf_counter()
    assert main(["--db", str(db), "embedder", "--kind", "local"]) == 0
    assert "switched at once" in capsys.readouterr().out
    assert time.perf_counter() - t0 < 5 and len(stub.embed_inputs()) == calls  # nothing embedded again
    svc = MemoryService(load_settings(), db_path=db)
    try:
        st = svc.stats()
        assert st.model_id == DEFAULT_MODEL_ID and st.vectors == 24 and not st.model_note
        found = svc.search_outcome("rockets")
        assert "dense" in found.results[0].lanes and not found.notes
        assert svc.check() == []
    finally:
        svc.close()


def test_search_answers_from_the_old_set_throughout_and_cancel_keeps_it(tmp_path: Path, stub: OpenAIStub) -> None:
    db = library(tmp_path, n=40)
    svc = MemoryService(Settings(embedder=other(stub, batch_size=4)), db_path=db)
    try:
        assert svc.choose_configured_model() is True
        stub.delay_s = 0.15  # 40 passages in slices of 16, 4 per request: the build takes a few seconds
        cancel = threading.Event()
        errors: list[BaseException] = []

        def build() -> None:
            try:
                svc.embed_pending(cancel=cancel)
            except Cancelled:
                pass
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        job = threading.Thread(target=build)
        job.start()
        answered, built = 0, 0
        deadline = time.monotonic() + 30
        while job.is_alive() and not built and time.monotonic() < deadline:
            out = svc.search_outcome("rockets")
            st = svc.stats()
            assert "dense" in out.results[0].lanes and st.model_id == OLD  # answered from the old set
            answered += 1
            built = {m.model_id: m.vectors for m in st.models}.get(f"openai:{OTHER}", 0)
        cancel.set()  # as soon as the first slice of the new set is in
        job.join(30)
        assert not errors and answered
        st = svc.stats()
        assert st.model_id == OLD and st.vectors == 40  # Cancel keeps the old set whole
        side = {m.model_id: m for m in st.models}[f"openai:{OTHER}"]
        assert 0 < side.vectors < 40 and side.missing == 40 - side.vectors  # what was built is kept
        stub.delay_s = 0.0
        svc.embed_pending()  # goes on from there, then switches
        st = svc.stats()
        assert st.model_id == f"openai:{OTHER}" and st.vectors == 40 and st.dim == 48
        assert svc.check() == []
    finally:
        svc.close()


def test_changing_the_model_for_one_library_keeps_semantic_search_in_another(tmp_path: Path,
                                                                             stub: OpenAIStub) -> None:
    a, b = library(tmp_path, "a.db"), library(tmp_path, "b.db")
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=a)
    try:
        assert svc.set_embedder_settings(other(stub)) is True
    finally:
        svc.close()
    svc = MemoryService(Settings(embedder=other(stub)), db_path=b)  # b opened under the new global setting
    try:
        out = svc.search_outcome("rockets")
        assert "dense" in out.results[0].lanes  # its own model still embeds the queries
        assert out.notes[0] == (f"semantic search uses {OLD} (this library's vectors); the configured "
                                f"openai:{OTHER} has no vectors here yet — `desktop-memory embed` builds them")
        st = svc.stats()
        assert st.model_id == OLD and st.search_model == OLD and st.configured_model == f"openai:{OTHER}"
        assert st.model_note == out.notes[0]
        svc.embed_pending()  # automatic embedding never switches a library behind the person's back
        assert svc.stats().model_id == OLD and len(stub.embed_inputs()) == 0
    finally:
        svc.close()


def test_a_library_whose_model_is_not_available_says_so(tmp_path: Path, stub: OpenAIStub) -> None:
    db = tmp_path / "m.db"
    svc = MemoryService(Settings(embedder=other(stub)), db_path=db)
    try:
        svc.index_paths([notes(tmp_path / "notes")])
        assert svc.stats().model_id == f"openai:{OTHER}"
    finally:
        svc.close()
    stub.models = ["something-else"]  # the library's model is gone from the server
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        out = svc.search_outcome("rockets")
        assert out.results and "dense" not in out.results[0].lanes  # keyword search answers
        assert out.notes[0].startswith(f"semantic search is off: this library's vectors are from openai:{OTHER}, "
                                       "which is not available here (")
        assert f"the configured {OLD} has no vectors here yet" in out.notes[0]
    finally:
        svc.close()


def test_stats_shows_the_models_and_the_mismatch(tmp_path: Path, stub: OpenAIStub,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = library(tmp_path)
    save_settings(Settings(embedder=other(stub)))
    assert main(["--db", str(db), "stats"]) == 0
    out, err = capsys.readouterr()
    assert f"model      {OLD} (64-d), configured openai:{OTHER}" in out
    assert f"vectors of {OLD} (64-d): 24" in out and "(search uses these)" in out
    assert f"the configured openai:{OTHER} has no vectors here yet" in err
    assert main(["--db", str(db), "stats", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["configured_model"] == f"openai:{OTHER}" and data["search_model"] == OLD
    assert [m["model_id"] for m in data["models"]] == [OLD] and data["models"][0]["bytes"] > 0


def test_other_models_vectors_are_kept_until_dropped_and_follow_removals(tmp_path: Path, stub: OpenAIStub,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    db = library(tmp_path)
    svc = MemoryService(Settings(embedder=other(stub)), db_path=db)
    try:
        svc.choose_configured_model()
        svc.embed_pending()
        assert vector_counts(db) == {f"openai:{OTHER}": 24, OLD: 24}
        svc.remove_paths([tmp_path / "notes-m.db" / "n000.md"])  # removed text leaves every model's set
        assert vector_counts(db) == {f"openai:{OTHER}": 23, OLD: 23}
        assert svc.check() == []
    finally:
        svc.close()
    save_settings(Settings(embedder=other(stub)))
    assert main(["--db", str(db), "embedder", "--drop", f"openai:{OTHER}"]) != 0  # never the set search uses
    assert "switch to another" in capsys.readouterr().err
    assert main(["--db", str(db), "embedder", "--drop", OLD]) == 0
    assert "dropped 23 vectors" in capsys.readouterr().out
    assert vector_counts(db) == {f"openai:{OTHER}": 23}
    assert main(["--db", str(db), "compact"]) == 0


def test_an_existing_library_migrates_keeping_its_vectors_under_its_model(tmp_path: Path) -> None:
    db = library(tmp_path)
    store = Store(db)
    before = store.conn.execute("select count(*) from chunk_vectors").fetchone()[0]
    step = mig.MIGRATIONS.index(mig._migration_model_sets)  # the schema before model sets (no number hard-coded)
    with store.conn:
        store.conn.execute("drop table vector_models")
        store.conn.execute(f"pragma user_version={step}")
    store.close()
    store = Store(db)  # migrates
    try:
        assert mig.current_version(store.conn) == mig.SCHEMA_VERSION
        sets = store.models.sets()
        assert [(s.model_id, s.dim, s.vectors, s.active) for s in sets] == [(OLD, 64, before, True)]
    finally:
        store.close()


def test_check_reports_a_side_vector_that_is_not_its_passages(tmp_path: Path, stub: OpenAIStub) -> None:
    db = library(tmp_path)
    svc = MemoryService(Settings(embedder=other(stub)), db_path=db)
    try:
        svc.choose_configured_model()
        svc.embed_pending()
        svc.set_embedder_settings(EmbedderSettings(kind="hash"))  # back: the 48-d set is now the side set
        assert svc.check() == []
    finally:
        svc.close()
    store = Store(db)
    try:
        with store.conn:
            store.conn.execute("update model_vectors_1 set text_hash = x'00' where id = (select min(id) from "
                               "model_vectors_1)")
        assert any(f"vectors of openai:{OTHER} do not belong" in p for p in store.check_integrity(full=False))
    finally:
        store.close()


def test_a_dead_configured_server_does_not_turn_off_a_librarys_own_model(tmp_path: Path) -> None:
    db = library(tmp_path)
    dead = EmbedderSettings(kind="openai", openai_url="http://127.0.0.1:9/v1", openai_model="x", openai_timeout_s=2)
    svc = MemoryService(Settings(embedder=dead), db_path=db)
    try:
        svc.load_embedder()  # the window's start-up load: the library's own model loads, no error
        out = svc.search_outcome("rockets")
        assert "dense" in out.results[0].lanes and out.notes[0].startswith(f"semantic search uses {OLD}")
    finally:
        svc.close()


def test_asking_for_vectors_keeps_the_loaded_model(tmp_path: Path) -> None:
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=library(tmp_path))
    try:
        loaded = svc.embedder
        assert svc.choose_configured_model() is False  # the library's model is the configured one
        assert svc.embedder is loaded  # Resume / Embed missing vectors do not reload the model
    finally:
        svc.close()
