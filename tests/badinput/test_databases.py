"""Real SQLite files that are not ours, damaged, read-only or on a full disk, through the real CLI and service."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import apsw
import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import DatabaseDamaged, StoreError
from desktop_memory.service import MemoryService
from tests.conftest import MDDOCS
from tests.support.cli import run_cli, write_settings
from tests.support.filesystems import IS_ROOT, mounted_tmpfs, remount_ro

DOCS = sorted((MDDOCS / "fastapi" / "tutorial").glob("*.md"))[:3]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_settings(tmp_path / "config", embedder={"kind": "hash"})


def _indexed(db: Path, config: Path, *files: Path) -> None:
    proc = run_cli(db, "index", *map(str, files or DOCS), config=config)
    assert proc.returncode == 0, proc.stderr


# -- another program's SQLite file -------------------------------------------------------------------------------


def test_foreign_sqlite_file_stays_byte_identical(tmp_path: Path, config: Path) -> None:
    db = tmp_path / "other.sqlite"
    conn = apsw.Connection(str(db))
    conn.execute("create table contacts(name text, phone text); insert into contacts values('Ada', '123')")
    conn.close()
    before, listing = sha(db), sorted(os.listdir(tmp_path))
    for args in (["stats"], ["search", "ada"], ["index", str(DOCS[0])], ["check"]):
        proc = run_cli(db, *args, config=config)
        clean(proc)
        assert proc.returncode == 1 and "not a desktop-memory database" in proc.stderr, proc.stderr
    with pytest.raises(StoreError, match="not a desktop-memory database"):
        MemoryService(Settings(), db_path=db, embedder=HashEmbedder(8))
    assert sha(db) == before, "no WAL switch, no change counter bump"
    assert sorted(os.listdir(tmp_path)) == listing, "no -wal/-shm/backup files left beside it"


# -- damaged schema ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["drop table chunk_vector_bits",
                                    # the Library's folder index covers n_chunks: SQLite drops no indexed column
                                    "drop index documents_folder; alter table documents drop column n_chunks",
                                    "pragma user_version = -1"])
def test_damaged_schema_is_reported_by_every_command(tmp_path: Path, config: Path, damage: str) -> None:
    db = tmp_path / "lib.db"
    _indexed(db, config)
    conn = apsw.Connection(str(db))
    conn.execute(damage)
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    before = sha(db)
    for args in (["stats"], ["search", "query"], ["index", str(DOCS[0])], ["list"], ["remove", str(DOCS[0])]):
        proc = run_cli(db, *args, config=config)
        clean(proc)
        assert proc.returncode == 1, (args, proc.stdout)
        assert f"The database {db} is damaged: " in proc.stderr and "desktop-memory check" in proc.stderr
    check = run_cli(db, "check", config=config)
    clean(check)
    assert check.returncode == 1 and "schema: " in check.stdout and "damaged" in check.stdout
    assert sha(db) == before
    assert not [p for p in os.listdir(tmp_path) if ".bak" in p], "no .bak--1 (or any backup) left behind"
    with pytest.raises(DatabaseDamaged):
        MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))


def test_damage_message_names_the_backup_when_there_is_one(tmp_path: Path, config: Path) -> None:
    db = tmp_path / "lib.db"
    _indexed(db, config)
    shutil.copy(db, tmp_path / "lib.db.bak-v2")
    conn = apsw.Connection(str(db))
    conn.execute("drop table roots")
    conn.close()
    proc = run_cli(db, "stats", config=config)
    assert "table roots is missing" in proc.stderr and "restore the backup" in proc.stderr
    assert "lib.db.bak-v2" in proc.stderr


# -- read-only media with changes still in the WAL ---------------------------------------------------------------


def _db_with_uncheckpointed_wal(src: Path, config: Path, dest: Path, with_shm: bool) -> None:
    """Index three files, then a fourth whose rows stay in the -wal; copy db + -wal (+ -shm) while it is open."""
    _indexed(src, config)
    svc = MemoryService(Settings(), db_path=src, embedder=HashEmbedder(64))
    try:
        with svc.writing() as store:
            store.conn.execute("pragma wal_autocheckpoint = 0")
        svc.index_paths([MDDOCS / "fastapi" / "advanced" / "websockets.md"])
        assert Path(f"{src}-wal").stat().st_size > 0
        for suffix in ("", "-wal") + (("-shm",) if with_shm else ()):
            shutil.copyfile(f"{src}{suffix}", f"{dest}{suffix}")
    finally:
        svc.close()


@pytest.mark.parametrize("with_shm", [False, True])
def test_read_only_media_keeps_search_and_wal_content(tmp_path: Path, config: Path, with_shm: bool) -> None:
    if not IS_ROOT:
        pytest.fail("this test mounts a tmpfs and needs root (the CI container runs as root)")
    with mounted_tmpfs(tmp_path / "mnt", "64m") as mnt:
        assert mnt is not None
        db = mnt / "lib.db"
        _db_with_uncheckpointed_wal(tmp_path / "src.db", config, db, with_shm)
        assert remount_ro(mnt)
        search = run_cli(db, "search", "websocket", "--backend", "keyword", "--json", config=config)
        clean(search)
        assert search.returncode == 0, search.stderr
        assert any(r["source"].endswith("websockets.md") for r in json.loads(search.stdout)), "WAL content visible"
        assert search.stderr.count("open read-only") == 1, search.stderr  # said once
        stats = json.loads(run_cli(db, "stats", "--json", config=config).stdout)
        assert stats["documents"] == {"indexed": 4}
        check = run_cli(db, "check", config=config)
        clean(check)
        assert check.returncode == 0 and check.stdout.startswith("ok"), check.stdout + check.stderr
        index = run_cli(db, "index", str(DOCS[0]), "--force", config=config)
        assert index.returncode == 1 and "read-only" in index.stderr
        clean(index)
        before = set(Path(tempfile.gettempdir()).glob("desktop-memory-ro-*"))
        svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
        try:
            assert "open read-only" in svc.read_only_note
            with svc.reading() as a, svc.reading() as b:  # the writer and two readers: one private copy at most
                assert a is not b and a.counts()["chunks"] == b.counts()["chunks"] > 0
            copies = set(Path(tempfile.gettempdir()).glob("desktop-memory-ro-*")) - before
            assert len(copies) == (0 if with_shm else 1)
            with pytest.raises(StoreError, match="read-only"):
                svc.remove_paths([str(DOCS[0])])
        finally:
            svc.close()


# -- a disk that is already full ---------------------------------------------------------------------------------


def test_disk_full_at_start_up_search_works_writes_say_disk_full(tmp_path: Path, config: Path) -> None:
    if not IS_ROOT:
        pytest.fail("this test mounts a tmpfs and needs root (the CI container runs as root)")
    with mounted_tmpfs(tmp_path / "mnt", "4m") as mnt:
        assert mnt is not None
        db = mnt / "lib.db"
        _indexed(db, config)
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:  # fill the disk to the last byte
            for chunk in (65536, 1):
                try:
                    while os.write(fd, b"\0" * chunk):
                        pass
                except OSError:
                    pass
        finally:
            os.close(fd)
        assert shutil.disk_usage(mnt).free < 4096
        search = run_cli(db, "search", "query parameters", "--backend", "keyword", "--json", config=config)
        clean(search)
        assert search.returncode == 0, search.stderr
        assert json.loads(search.stdout), "keyword search works on a full disk"
        assert "disk holding it is full" in search.stderr
        index = run_cli(db, "index", str(DOCS[0]), "--force", config=config)
        clean(index)
        assert index.returncode == 1
        assert index.stderr.strip() == (f"error: The disk holding {db} is full; free some space and index again. "
                                        "Nothing committed was lost.")


def test_database_path_with_undecodable_bytes(tmp_path: Path, config: Path) -> None:
    db = Path(os.fsdecode(bytes(tmp_path) + b"/lib\xff.db"))
    proc = run_cli(db, "stats", config=config)
    clean(proc)
    assert proc.returncode == 1 and "not valid text (undecodable bytes)" in proc.stderr and "lib\\xff.db" in proc.stderr
    assert os.listdir(tmp_path) == ["config"]
