"""Issue 16: the memory is readable by its owner only, whatever the umask (POSIX).

Everything the app creates under umask 022 (data and config folders, database, -wal, -shm, migration backups,
logs, settings.toml) is checked by mode; an older, looser library is tightened on open, once, with a notice."""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path

import apsw
import pytest

from desktop_memory.config import EmbedderSettings, Settings, config_dir, data_dir, settings_path
from desktop_memory.private_files import PrivateRotatingFileHandler, owner_only_umask
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings
from desktop_memory.store import Store
from desktop_memory.store.migrations import SCHEMA_VERSION

from .conftest import MDDOCS, run_cli, write_settings

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes; Windows relies on the profile ACL")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture()
def umask_022():
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _hash_settings() -> Settings:
    return Settings(embedder=EmbedderSettings(kind="hash"))


def _library(base: Path) -> Path:
    lib = base / "lib"
    lib.mkdir()
    for name in ("body.md", "query-params.md"):
        shutil.copyfile(MDDOCS / "fastapi" / "tutorial" / name, lib / name)
    return lib


def test_everything_created_under_umask_022_is_owner_only(tmp_path, umask_022, eval_present):
    settings = _hash_settings()
    save_settings(settings)
    svc = MemoryService(settings)  # the default location: <data dir>/memory.db
    try:
        svc.index_paths([_library(tmp_path)])
        assert svc.take_notices() == []  # nothing existed before: nothing to tighten, nothing to say
        db = svc.db_path
        assert db.parent == data_dir()
        for path in (data_dir(), config_dir()):
            assert mode(path) == 0o700, path
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), settings_path()):
            assert path.exists() and mode(path) == 0o600, (path, oct(mode(path)))
    finally:
        svc.close()

    # the GUI's log (and each file rotated in after it)
    handler = PrivateRotatingFileHandler(data_dir() / "logs" / "gui.log", maxBytes=200, backupCount=2,
                                         encoding="utf-8")
    log = logging.getLogger("test-owner-only")
    log.addHandler(handler)
    try:
        for i in range(30):
            log.warning("line %d of the log", i)
    finally:
        log.removeHandler(handler)
        handler.close()
    logs = sorted((data_dir() / "logs").iterdir())
    assert len(logs) == 3 and mode(data_dir() / "logs") == 0o700
    assert {p.name: mode(p) for p in logs} == {p.name: 0o600 for p in logs}


def test_database_in_a_new_chosen_folder_and_its_migration_backup(tmp_path, umask_022):
    db = tmp_path / "chosen" / "deep" / "m.db"
    # an older desktop-memory database (schema 1) written with the umask's 0644
    conn = apsw.Connection(str(db.parent.mkdir(parents=True) or db))
    from desktop_memory.store.migrations import MIGRATIONS

    with conn:
        conn.execute(MIGRATIONS[0])
        conn.execute("pragma user_version=1")
    conn.close()
    assert mode(db) == 0o644
    store = Store(db)
    try:
        assert int(store.conn.execute("pragma user_version").fetchone()[0]) == SCHEMA_VERSION
        backup = db.with_name("m.db.bak-v1")
        assert backup.is_file() and mode(backup) == 0o600
        assert mode(db) == 0o600 and mode(Path(f"{db}-wal")) == 0o600 and mode(Path(f"{db}-shm")) == 0o600
        assert len(store.notices) == 1 and f"{db} (644 → 600)" in store.notices[0], store.notices
        assert mode(db.parent) == 0o755, "a folder the person chose keeps its mode (it may be shared on purpose)"
    finally:
        store.close()

    fresh = tmp_path / "new-folder" / "inner" / "n.db"
    Store(fresh).close()
    assert mode(fresh.parent) == 0o700 and mode(fresh.parent.parent) == 0o700  # folders we created
    assert mode(fresh) == 0o600


def test_owner_only_umask_is_restored(tmp_path, umask_022):
    with owner_only_umask():
        (tmp_path / "inside").write_text("x")
    (tmp_path / "outside").write_text("x")
    assert mode(tmp_path / "inside") == 0o600 and mode(tmp_path / "outside") == 0o644
    assert os.umask(0o022) == 0o022


def test_an_existing_loose_library_is_tightened_once_with_a_notice(tmp_path):
    svc = MemoryService(_hash_settings())
    svc.close()
    save_settings(_hash_settings())
    db = svc.db_path
    loose = [data_dir(), config_dir(), db, Path(f"{db}-wal"), Path(f"{db}-shm"), settings_path()]
    for path in loose:
        if path.exists():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    svc = MemoryService(_hash_settings())
    try:
        notices = svc.take_notices()
        assert svc.take_notices() == []  # each notice is given once
        assert len(notices) == 1, notices  # one line for everything
        for path in (data_dir(), config_dir(), db, settings_path()):
            assert f"{path} (" in notices[0], (path, notices)
            assert mode(path) == (0o700 if path.is_dir() else 0o600)
    finally:
        svc.close()
    again = MemoryService(_hash_settings())
    try:
        assert again.take_notices() == []  # tightened once: nothing to say the next time
    finally:
        again.close()


def test_cli_prints_one_stderr_line_per_tightened_item(tmp_path, hash_config):
    db = tmp_path / "data" / "c.db"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A note\n\nsome text\n")
    assert run_cli(db, "index", tmp_path / "notes", config=hash_config).returncode == 0  # a new library
    os.chmod(db, 0o644)
    out = run_cli(db, "stats", config=hash_config)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("note: ")]
    assert len(lines) == 1 and f"{db} (644 → 600)" in lines[0] and "private" in lines[0], out.stderr
    assert mode(db) == 0o600
    assert [ln for ln in run_cli(db, "stats", config=hash_config).stderr.splitlines() if "private" in ln] == []


def test_a_foreign_sqlite_file_is_not_chmodded(tmp_path):
    """Not writing to it at all is the open-time check's job (issue "badinput"); its mode is ours to keep."""
    foreign = tmp_path / "other.sqlite"
    conn = apsw.Connection(str(foreign))
    with conn:
        conn.execute("create table photos(id integer primary key, name text)")
    conn.close()
    os.chmod(foreign, 0o644)
    with pytest.raises(Exception, match="not a desktop-memory database"):
        Store(foreign)
    assert mode(foreign) == 0o644


def test_settings_written_0600_even_over_a_loose_file(tmp_path, umask_022):
    path = tmp_path / "cfg" / "settings.toml"
    write_settings(tmp_path / "cfg")  # a plain write: 0644 under umask 022
    assert mode(path) == 0o644
    save_settings(_hash_settings(), path)
    assert mode(path) == 0o600
    assert not path.with_suffix(".toml.tmp").exists()
