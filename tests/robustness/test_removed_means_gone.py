"""Issue 16: removed means gone. The database files (db and -wal) are searched byte by byte for a unique word once
the operation returns: after removing a file, a folder, a file vanishing from an indexed folder, a changed file's
re-index, and "compact" of a database written before secure delete existed."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.service import MemoryService
from desktop_memory.store import erase
from desktop_memory.store.migrations import SCHEMA_VERSION
from tests.support.secret_word import WORD, occurrences

from .conftest import MDDOCS, run_cli

SECRET = f"\n\nThe password hint is {WORD}, written in this note only.\n"


def _settings() -> Settings:
    return Settings(embedder=EmbedderSettings(kind="hash"))


def _library(base: Path, n: int = 6) -> Path:
    """Real notes (the FastAPI tutorial), one of them carrying the secret word."""
    lib = base / "lib"
    (lib / "sub").mkdir(parents=True)
    files = sorted((MDDOCS / "fastapi" / "tutorial").glob("*.md"))[:n]
    for i, src in enumerate(files):
        shutil.copyfile(src, lib / ("sub" if i % 2 else "") / src.name)
    secret = lib / "sub" / "secret-note.md"
    secret.write_text(files[0].read_text(encoding="utf-8") + SECRET, encoding="utf-8")
    return lib


@pytest.fixture()
def svc(tmp_path):
    service = MemoryService(_settings(), db_path=tmp_path / "db" / "m.db")
    yield service
    service.close()


def _indexed_and_flushed(svc: MemoryService, lib: Path) -> None:
    svc.index_paths([lib])
    assert svc.search_outcome(WORD, backend="keyword").results, "the secret is indexed"
    with svc.writing() as store:
        store.checkpoint()  # the text now sits in the main file too, not only in the WAL
    assert occurrences(svc.db_path)["db"] > 0


@pytest.mark.parametrize("what", ["file", "folder", "big folder"])
def test_remove_erases_the_text(svc, tmp_path, what, eval_present, monkeypatch):
    lib = _library(tmp_path)
    _indexed_and_flushed(svc, lib)
    if what == "big folder":  # more documents than BULK_ERASE: one transaction, tombstones, then one 'optimize'
        monkeypatch.setattr(erase, "BULK_ERASE", 3)
    target = lib / "sub" / "secret-note.md" if what == "file" else lib / "sub"
    assert svc.remove_paths([target]) == (1 if what == "file" else 4)
    assert occurrences(svc.db_path) == {"db": 0, "-wal": 0}
    assert svc.search_outcome("path parameters", backend="keyword").results, "the rest of the library is intact"
    assert svc.check() == []
    with svc.reading() as store:
        option = store.conn.execute("select v from chunks_fts_config where k = 'secure-delete'").fetchone()
    assert int(option[0]) == 1, "the bulk path switches FTS5's secure-delete back on"
    with svc.reading() as store:
        assert store.get_meta("fts_optimize_pending") is None


def test_a_vanished_file_is_erased_by_the_next_index_run(svc, tmp_path, eval_present):
    lib = _library(tmp_path)
    _indexed_and_flushed(svc, lib)
    (lib / "sub" / "secret-note.md").unlink()
    summary = svc.index_paths([lib])
    assert summary.removed == 1
    assert occurrences(svc.db_path) == {"db": 0, "-wal": 0}


@pytest.mark.parametrize("bulk", [False, True], ids=["secure-delete", "tombstones+optimize"])
def test_a_changed_files_old_version_is_erased(svc, tmp_path, eval_present, monkeypatch, bulk):
    if bulk:  # as if this were the 26th changed file of the run
        monkeypatch.setattr(erase, "BULK_ERASE", 0)
    lib = _library(tmp_path)
    _indexed_and_flushed(svc, lib)
    note = lib / "sub" / "secret-note.md"
    note.write_text(note.read_text(encoding="utf-8").replace(WORD, "nothing-special-now"), encoding="utf-8")
    summary = svc.index_paths([lib])
    assert summary.indexed == 1
    assert occurrences(svc.db_path) == {"db": 0, "-wal": 0}
    assert svc.search_outcome("nothing-special-now", backend="keyword").results


def test_an_operation_killed_before_its_optimize_is_finished_by_the_next(svc, tmp_path, eval_present, monkeypatch):
    """Tombstoned deletions record (in their own transaction) that the index needs an 'optimize'; if the operation
    never reaches its end, the next one that erases anything runs it."""
    monkeypatch.setattr(erase, "BULK_ERASE", 0)
    lib = _library(tmp_path)
    _indexed_and_flushed(svc, lib)
    with svc.writing() as store:
        store.remove_documents([store.get_document(str(lib / "sub" / "secret-note.md")).id])  # no checkpoint_erased
        store.checkpoint()
        assert store.get_meta("fts_optimize_pending") == "1"
    assert occurrences(svc.db_path)["db"] > 0, "the FTS index still holds the word: tombstoned only"
    svc.remove_paths([tmp_path / "not-indexed.md"])  # any later operation
    assert occurrences(svc.db_path) == {"db": 0, "-wal": 0}
    with svc.reading() as store:
        assert store.get_meta("fts_optimize_pending") is None


@pytest.mark.parametrize("off", ["pragma secure_delete=off",
                                 "insert into chunks_fts(chunks_fts, rank) values('secure-delete', 0)"])
def test_each_half_is_needed(tmp_path, off, eval_present):
    """The tests above can fail: with either SQLite's secure_delete or FTS5's off, the word stays in the file."""
    lib = _library(tmp_path)
    db = tmp_path / "plain.db"
    svc = MemoryService(_settings(), db_path=db)
    try:
        _indexed_and_flushed(svc, lib)
        with svc.writing() as store:  # per-connection pragma: on the connection that removes
            store.conn.execute(off)
        svc.remove_paths([lib / "sub" / "secret-note.md"])
        assert sum(occurrences(db).values()) > 0
    finally:
        svc.close()


def test_compact_erases_what_an_older_version_left_behind(tmp_path, hash_config, eval_present):
    """A database whose removals happened without secure delete (an older desktop-memory): `compact` rebuilds it."""
    lib = _library(tmp_path)
    db = tmp_path / "old.db"
    svc = MemoryService(_settings(), db_path=db)
    try:
        _indexed_and_flushed(svc, lib)
        with svc.writing() as store:
            store.conn.execute("pragma secure_delete=off")
            store.conn.execute("insert into chunks_fts(chunks_fts, rank) values('secure-delete', 0)")
        svc.remove_paths([lib / "sub" / "secret-note.md"])
    finally:
        svc.close()
    assert sum(occurrences(db).values()) > 0
    out = run_cli(db, "compact", config=hash_config)
    assert out.returncode == 0, out.stderr
    assert "compacted" in out.stdout
    assert occurrences(db) == {"db": 0, "-wal": 0}
    check = run_cli(db, "search", "path parameters", "--backend", "keyword", "--json", config=hash_config)
    assert check.returncode == 0 and '"source"' in check.stdout


def test_the_fts_option_is_set_by_a_migration_and_opening_never_writes(tmp_path):
    db = tmp_path / "m.db"
    MemoryService(_settings(), db_path=db).close()
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
        option = conn.execute("select v from chunks_fts_config where k = 'secure-delete'").fetchone()
        assert option is not None and int(option[0]) == 1
    finally:
        conn.close()
    before = db.read_bytes()
    svc = MemoryService(_settings(), db_path=db)  # a second open: no migration, no option to set
    try:
        with svc.reading() as store:
            assert store.conn.execute("pragma secure_delete").fetchone()[0] == 1
        wal = Path(f"{db}-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    finally:
        svc.close()
    assert db.read_bytes() == before
