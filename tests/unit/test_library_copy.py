"""`desktop-memory copy` (issue 32 item 6): a library moves to another store without re-embedding — documents,
passages, every model's vectors, folders with their machine, exclusions and skipped files — in slices, resumable
after an interruption, and search on the copy answers as on the source. SQLite → SQLite here (the copy uses only
the stores' public methods; the PostgreSQL pair runs the same code)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_memory import library_copy
from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import Cancelled, UserError
from desktop_memory.library_copy_job import copy_library
from desktop_memory.service import MemoryService
from tests.conftest import MDDOCS

ROOT = Path(__file__).resolve().parents[2]
MACHINE = ("machine-1", "desktop")
QUERIES = ("async await concurrency", "environment variables settings", "benchmarks performance",
           "path parameters types", "deployment docker")


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A library with two folders, duplicates, an exclusion, a skipped file and a second model's vectors."""
    docs = tmp_path / "docs"
    shutil.copytree(MDDOCS / "fastapi", docs, ignore=shutil.ignore_patterns("deployment", "advanced"))
    (docs / "copy-of-async.md").write_bytes((docs / "async.md").read_bytes())  # collapsed duplicates
    (docs / "empty.bin").write_bytes(b"\x00\x01\x02" * 100)  # skipped: not text
    other = tmp_path / "other"
    shutil.copytree(MDDOCS / "fastapi" / "deployment", other)
    db = tmp_path / "source.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        svc.index_paths([docs, other])
        svc.remove_paths([docs / "about"], exclude=True)
        with svc.writing() as store:  # a second model's set beside the active one (a switch under way)
            store.models.ensure_side("other-model", 8, '{"kind": "test"}')
            pending = store.models.side_pending("other-model", 100_000)
            vectors = np.random.default_rng(1).standard_normal((len(pending), 8)).astype(np.float32)
            store.models.store_side("other-model", [i for i, _ in pending], vectors, [t for _, t in pending])
    finally:
        svc.close()
    return db


def _answers(db: Path, backend: str) -> list[list[tuple[str, str, float]]]:
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        outcomes = [svc.search_outcome(q, backend=backend, top_k=10) for q in QUERIES]
        return [[(r.source, r.text, round(r.score, 9)) for r in out.results] for out in outcomes]
    finally:
        svc.close()


def _state(db: Path) -> dict[str, object]:
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        st = svc.stats()
        with svc.reading() as store:
            sets = {s.model_id: s.vectors for s in store.models.sets()}
            outcomes = sorted((d.path, d.status, d.error) for d in store.list_documents() if d.status != "indexed")
        return {"documents": st.documents, "chunks": st.chunks, "vectors": st.vectors, "pending": st.pending_vectors,
                "duplicates": st.duplicates, "model": st.model_id, "sets": sets, "roots": svc.roots(),
                "excluded": svc.exclusions(), "outcomes": outcomes}
    finally:
        svc.close()


def test_a_copy_searches_like_its_source_without_re_embedding(source, tmp_path, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "embed_documents", lambda *a, **k: pytest.fail("the copy embedded"))
    target = tmp_path / "copy.db"
    seen: list[tuple[int, int]] = []
    summary = copy_library(source, target, machine=MACHINE, progress=lambda d, t: seen.append((d, t)),
                           slice_size=7)
    assert seen and seen[-1][0] == seen[-1][1] and len(seen) > 2  # in slices, with progress
    assert summary.documents > 0 and summary.vectors["other-model"] > 0 and summary.exclusions == 1
    assert _state(target) == _state(source)
    for backend in ("keyword", "dense", "hybrid"):
        assert _answers(target, backend) == _answers(source, backend), backend


def test_a_copy_is_a_job_of_the_target_librarys_scheduler(source, tmp_path, monkeypatch):
    """The one write route (issue 31): the target is written by its own service's writer lane, as every other write
    to a library, not by the command's thread holding a store of its own."""
    from desktop_memory.library_writes import LibraryWrites

    ran_on: list[str] = []
    copy_from = LibraryWrites.copy_from

    def watched(self, *args, **kwargs):
        ran_on.append(threading.current_thread().name)
        return copy_from(self, *args, **kwargs)

    monkeypatch.setattr(LibraryWrites, "copy_from", watched)
    summary = copy_library(source, tmp_path / "copy.db", machine=MACHINE)
    assert ran_on == ["desktop-memory-writer"] and summary.documents > 0
    assert threading.current_thread().name != "desktop-memory-writer"


def test_an_interrupted_copy_goes_on_where_it_stopped(source, tmp_path):
    target = tmp_path / "copy.db"
    cancel = threading.Event()
    with pytest.raises(Cancelled, match="run it again"):
        copy_library(source, target, machine=MACHINE, cancel=cancel, slice_size=5,
                     progress=lambda done, total: cancel.set())
    first = _state(target)
    assert 0 < sum(first["documents"].values()) < sum(_state(source)["documents"].values())  # type: ignore[union-attr]
    again = copy_library(source, target, machine=MACHINE, slice_size=5)
    assert again.unchanged == first["documents"]["indexed"]  # type: ignore[index]  # not written again
    assert _state(target) == _state(source)
    assert _answers(target, "hybrid") == _answers(source, "hybrid")


def _dies(*args, **kwargs):
    raise KeyboardInterrupt


def test_a_slices_passages_commit_with_their_vectors(source, tmp_path, monkeypatch):
    """The active model's vectors travel in the write of their passages (``DocumentWrite.vectors``): a copy
    killed right after a slice's write leaves no passage of it waiting to be embedded."""
    target = tmp_path / "copy.db"
    monkeypatch.setattr(library_copy, "_copy_vectors", _dies)
    with pytest.raises(KeyboardInterrupt):
        copy_library(source, target, machine=MACHINE, slice_size=5)
    state = _state(target)
    assert sum(state["documents"].values()) and not state["pending"]  # type: ignore[union-attr]


def test_passages_copied_without_their_vectors_get_them_when_the_copy_goes_on(source, tmp_path, monkeypatch):
    """A target holding passages without their vectors (a copy by an earlier version, killed between a slice's
    passages and its vectors) is completed by the next copy: those documents are not written again, their
    passages get the source's vectors."""
    from desktop_memory.library_copy_reader import SliceReader

    target = tmp_path / "copy.db"
    real_copy, real_init = library_copy._copy_vectors, SliceReader.__init__

    def without_vectors(self, *args, **kwargs):
        real_init(self, *args, **{**kwargs, "active": None})

    monkeypatch.setattr(SliceReader, "__init__", without_vectors)
    monkeypatch.setattr(library_copy, "_copy_vectors", _dies)
    with pytest.raises(KeyboardInterrupt):
        copy_library(source, target, machine=MACHINE, slice_size=5)
    assert _state(target)["pending"]
    monkeypatch.setattr(SliceReader, "__init__", real_init)
    monkeypatch.setattr(library_copy, "_copy_vectors", real_copy)
    again = copy_library(source, target, machine=MACHINE, slice_size=5)
    assert again.unchanged > 0
    assert _state(target) == _state(source)


def test_the_source_is_read_on_a_thread_of_its_own_and_its_errors_stop_the_copy(source, tmp_path, monkeypatch):
    """The source's slices are read ahead by a reader thread (library_copy_reader.py) while the copy's thread
    writes: the target is written only from the copy's thread, a read that fails ends the copy with that error
    after the slices before it were written whole, and no reader thread is left behind either way."""
    from desktop_memory.store.export_reads import ExportReads
    from desktop_memory.store.repository import Store

    read_on: set[str] = set()  # threads that read the source's passages
    written_on: set[str] = set()
    chunks, write = ExportReads.chunks, Store.write_documents

    def reading(self, doc_ids):
        if Path(self.conn.db_filename("main")).name == source.name:  # (the target's are read back by the writer)
            read_on.add(threading.current_thread().name)
        return chunks(self, doc_ids)

    def writing(self, docs):
        written_on.add(threading.current_thread().name)
        return write(self, docs)

    monkeypatch.setattr(ExportReads, "chunks", reading)
    monkeypatch.setattr(Store, "write_documents", writing)
    copy_library(source, tmp_path / "copy.db", machine=MACHINE, slice_size=5)
    assert read_on == {"dm-copy-reader"} and written_on == {"desktop-memory-writer"}
    assert _state(tmp_path / "copy.db") == _state(source)

    calls = {"n": 0}

    def fails_third(self, doc_ids):  # the source's third slice
        mine = Path(self.conn.db_filename("main")).name == source.name
        calls["n"] += mine
        if mine and calls["n"] == 3:
            raise OSError("the disk holding the source went away")
        return chunks(self, doc_ids)

    monkeypatch.setattr(ExportReads, "chunks", fails_third)
    with pytest.raises(Exception, match="went away"):
        copy_library(source, tmp_path / "broken.db", machine=MACHINE, slice_size=5)
    assert 0 < sum(_state(tmp_path / "broken.db")["documents"].values()) < sum(  # type: ignore[union-attr]
        _state(source)["documents"].values())  # type: ignore[union-attr]
    assert not [t for t in threading.enumerate() if t.name == "dm-copy-reader"]
    monkeypatch.setattr(ExportReads, "chunks", chunks)
    copy_library(source, tmp_path / "broken.db", machine=MACHINE, slice_size=5)  # run again: it goes on
    assert _state(tmp_path / "broken.db") == _state(source)


def test_a_library_of_another_model_is_not_mixed_in_unless_asked(source, tmp_path):
    target = tmp_path / "theirs.db"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe harbour bridge opens in spring.\n")
    svc = MemoryService(Settings(), db_path=target, embedder=HashEmbedder(16))
    try:
        svc.index_paths([notes])
    finally:
        svc.close()
    with pytest.raises(UserError, match="--allow-other-model") as err:
        copy_library(source, target, machine=MACHINE)
    assert str(err.value).count(". ") <= 1  # one sentence (two clauses)
    assert _state(target)["roots"] == [str(notes)]  # nothing was written
    copy_library(source, target, machine=MACHINE, allow_other_model=True)
    state = _state(target)
    assert state["model"] == "hash-16" or str(state["model"]).endswith("16")
    assert set(state["sets"]) >= {"other-model", _state(source)["model"]}  # type: ignore[arg-type]


def test_bad_pairs_get_one_sentence(source, tmp_path):
    with pytest.raises(UserError, match="same library"):
        copy_library(source, source, machine=MACHINE)
    with pytest.raises(UserError, match="no library at"):
        copy_library(tmp_path / "missing.db", tmp_path / "x.db", machine=MACHINE)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a library\n" * 500, encoding="utf-8")
    with pytest.raises(UserError, match="not a desktop-memory database"):
        copy_library(notes, tmp_path / "x.db", machine=MACHINE)
    assert notes.read_text(encoding="utf-8") == "not a library\n" * 500  # a file that is not ours is untouched
    assert not (tmp_path / "x.db").exists()


def test_a_library_of_an_older_version_is_not_read_half_way(source, tmp_path):
    """Copy opens its source read-only and never migrates it: a library an older version wrote is refused in one
    sentence that says how to upgrade it (it failed with "no such table: vector_models"), the file unchanged and no
    target made."""
    import hashlib

    import apsw

    from desktop_memory.errors import StoreReadOnly
    from desktop_memory.store.migrations import SCHEMA_VERSION

    old = tmp_path / "old.db"
    shutil.copy(source, old)
    conn = apsw.Connection(str(old))
    conn.execute(f"pragma user_version = {SCHEMA_VERSION - 1}")
    conn.close()
    before = hashlib.sha256(old.read_bytes()).hexdigest()
    with pytest.raises(StoreReadOnly, match=r"older desktop-memory.*upgrade it .*desktop-memory --db .* stats"):
        copy_library(old, tmp_path / "copy.db", machine=MACHINE)
    assert hashlib.sha256(old.read_bytes()).hexdigest() == before
    assert not (tmp_path / "copy.db").exists()


def test_the_command_line(source, tmp_path):
    target = tmp_path / "cli.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "desktop_memory.cli", "copy", "--from", str(source), "--to",
                           str(target), "--json"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["to"] == str(target) and out["documents"] > 0 and out["folders"] == 2
    assert _state(target) == _state(source)


def test_a_copy_takes_each_passages_dedupe_key_as_stored(source, tmp_path, monkeypatch):
    """The source's own keys are written (not worked out again from the text: a tenth of the copy's own work), so
    the copy collapses exactly the duplicates the source did."""
    from desktop_memory import library_copy_reader

    monkeypatch.setattr(library_copy_reader, "chunk_key", lambda draft: pytest.fail("a key was worked out again"))
    target = tmp_path / "copy.db"
    copy_library(source, target, machine=MACHINE)
    assert _state(target) == _state(source)
