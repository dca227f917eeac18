"""kill -9 in the middle of a model switch's build (issue 30): the set search uses is untouched, what the build
committed is kept, ``check`` is clean, and the next ``embed`` finishes the build and switches."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from tests.support.openai_server import OpenAIStub

from .conftest import kill9, run_cli, spawn_cli, wait_for, write_settings


def _sets(db: Path) -> dict[str, int]:
    store = Store(db)
    try:
        return {s.model_id: s.vectors for s in store.models.sets()}
    finally:
        store.close()


def test_kill9_during_the_build_keeps_the_old_set_and_the_next_embed_switches(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    for i in range(60):
        (folder / f"n{i:02d}.md").write_text(f"# Note {i}\n\nAbout rockets and tea, day {i}.\n", encoding="utf-8")
    db = tmp_path / "m.db"
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        svc.index_paths([folder])
    finally:
        svc.close()
    with OpenAIStub(HashEmbedder(48), models=["other-48"]) as stub:  # type: ignore[arg-type]
        stub.delay_s = 0.1
        config = write_settings(tmp_path / "config", embedder={
            "kind": "openai", "openai_url": stub.url, "openai_model": "other-48", "batch_size": 4})
        proc = spawn_cli(db, "embed", "-q", config=config, logs=tmp_path / "logs")
        try:
            wait_for(lambda: _sets(db).get("openai:other-48", 0) >= 16, 120, interval=0.05,
                     what="the first slice of the new set")
        finally:
            kill9(proc)
        sets = _sets(db)
        assert sets["hash-test-64"] == 60 and 16 <= sets["openai:other-48"] < 60
        svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
        try:
            assert svc.check() == [] and svc.stats().model_id == "hash-test-64"
        finally:
            svc.close()
        done = run_cli(db, "embed", "-q", config=config)
        assert done.returncode == 0, done.stderr
        assert _sets(db) == {"openai:other-48": 60, "hash-test-64": 60}
        calls = sum(len(batch) for batch in stub.embed_inputs())
        assert calls <= 60 + 16 + 4  # the rerun embedded only what the killed build had not committed
