"""Issue 5 §7: a full disk, a read-only database (immutable file, read-only mount, read-only folder), a corrupt
file, an old schema (migrated after a backup, also when killed mid-migration) and a newer one (refused).
Errors reach the user as one line from the real CLI, never a traceback, and committed data survives."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time

import apsw
import numpy as np
import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import StoreError
from desktop_memory.ingest.pipeline import EMBED_SLICE
from desktop_memory.service import MemoryService
from desktop_memory.store import vec_library_path
from desktop_memory.store.migrations import MIGRATIONS, SCHEMA_VERSION

from .conftest import (
    IS_ROOT,
    MDDOCS,
    audit_db,
    copy_tree,
    kill9,
    mounted_tmpfs,
    remount_ro,
    run_cli,
    spawn_cli,
    wait_for,
)


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr and "apsw." not in proc.stderr, proc.stderr


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# -- disk full -----------------------------------------------------------------------------------------------


def test_disk_full_on_a_real_small_file_system(tmp_path, hash_config, ledger, eval_present):
    small = copy_tree(MDDOCS / "fastapi" / "tutorial", tmp_path / "small", limit=5)
    big = copy_tree(MDDOCS / "hugo", tmp_path / "big")
    ledger.tried(small + big)
    with mounted_tmpfs(tmp_path / "mnt", "1536k") as mnt:
        if mnt is None:
            pytest.skip("cannot mount a tmpfs here (needs root); test_database_full_mid_embed covers the code path")
        ledger.fault("disk full (1.5 MB tmpfs)")
        db = mnt / "x.db"
        assert run_cli(db, "index", tmp_path / "small", config=hash_config).returncode == 0
        before = audit_db(db, ledger)
        assert len(before.indexed_paths()) == 5

        proc = run_cli(db, "index", tmp_path / "big", config=hash_config)
        assert proc.returncode == 1, proc.stdout
        no_traceback(proc)
        assert proc.stderr.strip() == (f"error: The disk holding {db} is full; free some space and index again. "
                                       "Nothing committed was lost.")
        # The full disk still opens and answers, with everything committed before the fault.
        after = audit_db(db, ledger)
        lost = len(before.indexed_paths() - after.indexed_paths())
        ledger.data_lost(lost)
        assert lost == 0 and all(after.vectors[i] == v for i, v in before.vectors.items())
        hits = json.loads(run_cli(db, "search", "path parameters", "--json", config=hash_config).stdout)
        assert hits

        assert subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], check=False).returncode == 0  # freed
        again = run_cli(db, "index", tmp_path / "big", "--json", config=hash_config)
        assert again.returncode == 0, again.stderr
        final = audit_db(db, ledger)
        assert final.pending == set() and before.indexed_paths() <= final.indexed_paths()
        assert {str(p) for p in big} <= set(final.docs)


def test_database_full_mid_embed(tmp_path, ledger, eval_present):
    """The database hits its size limit while vectors are being written (SQLite's max_page_count, the same
    SQLITE_FULL a full disk gives): a clear StoreError, whole batches only, and the queue resumes later."""
    lib = tmp_path / "lib"
    ledger.tried(copy_tree(MDDOCS / "fastapi", lib, limit=30))
    ledger.fault("database full during the embed phase")
    svc = MemoryService(Settings(), db_path=tmp_path / "f.db", embedder=HashEmbedder(384))
    try:
        first = svc.index_paths([lib], embed=False)
        assert first.indexed == 30
        with svc.writing() as writer:  # the page limit is per connection: set it on the one that writes
            pages = writer.conn.execute("pragma page_count").fetchone()[0]
            writer.conn.execute(f"pragma max_page_count = {pages + 60}")  # room for a few batches of 384-d vectors
        with pytest.raises(StoreError, match="is full; free some space and index again"):
            svc.embed_pending()
        state = audit_db(tmp_path / "f.db", ledger)
        assert state.embedded and state.pending, "some batches committed before the limit, none half"
        assert len(state.embedded) % EMBED_SLICE == 0  # whole slices only
        assert svc.search_outcome("dependencies", backend="keyword").results, "keyword search unaffected"
        with svc.writing() as writer:
            writer.conn.execute("pragma max_page_count = 1073741823")
        assert svc.embed_pending().chunks_embedded == len(state.pending)
        assert audit_db(tmp_path / "f.db", ledger).pending == set()
    finally:
        svc.close()


# -- read-only -----------------------------------------------------------------------------------------------


def _indexed_db(tmp_path, config) -> tuple:
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi" / "tutorial", lib, limit=6)
    db = tmp_path / "ro" / "x.db"
    db.parent.mkdir()
    assert run_cli(db, "index", *files[:4], config=config).returncode == 0
    return lib, files, db


def _read_only_behaviour(db, lib, config, ledger) -> None:
    before = sha(db)
    proc = run_cli(db, "index", lib, config=config)
    assert proc.returncode == 1
    no_traceback(proc)
    assert proc.stderr.strip() == f"error: The database {db} is read-only; pick a writable location in Settings."
    search = run_cli(db, "search", "query parameters", "--json", config=config)
    assert search.returncode == 0, search.stderr  # reading still works
    assert json.loads(search.stdout)
    stats = json.loads(run_cli(db, "stats", "--json", config=config).stdout)
    assert stats["documents"] == {"indexed": 4}, "committed data intact"
    assert sha(db) == before


def test_immutable_database_file(tmp_path, hash_config, ledger, eval_present):
    lib, files, db = _indexed_db(tmp_path, hash_config)
    ledger.tried(files)
    if not IS_ROOT or subprocess.run(["chattr", "+i", str(db)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i not available here (needs root and an ext2/3/4-like file system)")
    ledger.fault("read-only database (chattr +i)")
    try:
        _read_only_behaviour(db, lib, hash_config, ledger)
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=False)
    audit_db(db, ledger)


def test_database_on_a_read_only_mount(tmp_path, hash_config, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi" / "tutorial", lib, limit=6)
    ledger.tried(files)
    with mounted_tmpfs(tmp_path / "mnt", "64m") as mnt:
        if mnt is None:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        ledger.fault("read-only file system (remount ro)", 2)
        db = mnt / "x.db"
        assert run_cli(db, "index", *files[:4], config=hash_config).returncode == 0
        assert remount_ro(mnt)
        _read_only_behaviour(db, lib, hash_config, ledger)
        fresh = run_cli(mnt / "new.db", "index", lib, config=hash_config)
        assert fresh.returncode == 1
        no_traceback(fresh)
        assert fresh.stderr.strip() == (f"error: Cannot open the database {mnt / 'new.db'}: "
                                        "check the path and its permissions.")


# -- corrupt ---------------------------------------------------------------------------------------------------


def test_corrupt_database_gives_a_clear_error(tmp_path, hash_config, ledger, eval_present):
    lib = tmp_path / "lib"
    ledger.tried(copy_tree(MDDOCS / "fastapi" / "tutorial", lib, limit=20))
    ledger.fault("corrupt database pages", 2)
    db = tmp_path / "x.db"
    assert run_cli(db, "index", lib, config=hash_config).returncode == 0
    conn = apsw.Connection(str(db))
    conn.execute("pragma wal_checkpoint(truncate)")
    page_size = conn.execute("pragma page_size").fetchone()[0]
    pages = conn.execute("pragma page_count").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    rng = np.random.default_rng(3)
    for page in range(pages // 2, pages):  # the second half of the file: tables, indexes, FTS segments
        data[page * page_size + 8: (page + 1) * page_size] = rng.bytes(page_size - 8)
    db.write_bytes(bytes(data))
    for args in (["search", "query parameters"], ["check"], ["index", str(lib)], ["list"]):
        proc = run_cli(db, *args, config=hash_config)
        no_traceback(proc)
        if args[0] in ("index", "list") and proc.returncode == 0:
            continue  # the pages they need may be intact: `check` is what finds the damage
        assert proc.returncode == 1, (args, proc.stdout)
        assert "corrupt" in (proc.stderr + proc.stdout) or "integrity_check" in proc.stdout, (args, proc.stderr)

    db.write_bytes(bytes(data[: page_size * 3]))  # truncated: a copy cut short
    proc = run_cli(db, "search", "query", config=hash_config)
    no_traceback(proc)
    assert proc.returncode == 1 and "corrupt" in proc.stderr


# -- schema versions -----------------------------------------------------------------------------------------


def build_v1_database(path, n_docs: int = 40, chunks_per_doc: int = 25, dim: int = 64) -> dict:
    """A database as desktop-memory schema 1 wrote it: vectors in a sqlite-vec vec0 table."""
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(vec_library_path())
    emb = HashEmbedder(dim)
    with conn:
        conn.execute(MIGRATIONS[0])
        conn.execute(f"create virtual table chunks_vec using vec0(embedding float[{dim}])")
        conn.execute("insert into meta values('model_id', ?), ('dim', ?)", (emb.model_id, str(dim)))
        cid = 0
        vectors = {}
        for d in range(n_docs):
            conn.execute("insert into documents(id, path, kind, status, n_chunks, size, mtime, content_hash) "
                         "values(?, ?, 'text', 'indexed', ?, 1, 1, 'h')", (d + 1, f"/old/doc{d}.txt", chunks_per_doc))
            for k in range(chunks_per_doc):
                cid += 1
                text = f"old library document {d} passage {k} about migrations and backups"
                conn.execute("insert into chunks(id, doc_id, ord, text, char_start, char_end, dedupe_key, embedded) "
                             "values(?, ?, ?, ?, 0, ?, ?, 1)", (cid, d + 1, k, text, len(text), f"k{cid}"))
                conn.execute("insert into chunks_fts(rowid, text) values(?, ?)", (cid, text))
                vec = emb.embed_documents([text])[0]
                conn.execute("insert into chunks_vec(rowid, embedding) values(?, ?)", (cid, vec.tobytes()))
                vectors[cid] = vec.tobytes()
        conn.execute("pragma user_version = 1")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    return vectors


def test_old_schema_is_backed_up_then_migrated(tmp_path, hash_config, ledger):
    db = tmp_path / "old.db"
    vectors = build_v1_database(db)
    original = sha(db)
    ledger.fault("old schema (v1, vec0 vectors) opened by this version")
    proc = run_cli(db, "search", "migrations and backups", "--backend", "dense", "--json", config=hash_config)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout), "semantic search works on the migrated vectors, nothing re-embedded"
    backup = tmp_path / "old.db.bak-v1"
    assert backup.exists()
    b = apsw.Connection(str(backup), flags=apsw.SQLITE_OPEN_READONLY)
    assert b.execute("pragma user_version").fetchone()[0] == 1
    assert b.execute("select count(*) from chunks").fetchone()[0] == len(vectors)
    assert b.execute("pragma integrity_check").fetchone()[0] == "ok"
    b.close()
    state = audit_db(db, ledger)
    assert state.vectors == vectors, "every vector moved over unchanged"
    conn = apsw.Connection(str(db))
    assert conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("select count(*) from sqlite_master where name = 'chunks_vec'").fetchone()[0] == 0
    conn.close()
    assert original != sha(db)


@pytest.mark.parametrize("phase", ["backup", "migration"])
def test_kill9_during_migration_leaves_the_old_version(tmp_path, hash_config, ledger, phase):
    """Killed while the backup is being written, or while the schema step runs (one transaction): the file is
    still a valid v1 database; the next start backs up and migrates it. A big v1 file makes both take long
    enough to be hit."""
    db = tmp_path / "old.db"
    vectors = build_v1_database(db, n_docs=200, chunks_per_doc=200, dim=384)
    size = db.stat().st_size
    ledger.fault(f"kill -9 during schema migration ({phase})")
    proc = spawn_cli(db, "stats", config=hash_config, logs=tmp_path / "run")
    backup = tmp_path / "old.db.bak-v1"

    def reached() -> bool:
        if proc.poll() is not None:
            raise AssertionError("the CLI finished before it could be killed")
        written = backup.stat().st_size if backup.exists() else 0
        return written > size // 4 if phase == "backup" else written >= size

    try:
        wait_for(reached, 120, interval=0.002, what=f"the {phase} to be under way")
        if phase == "migration":
            time.sleep(0.2)
    finally:
        kill9(proc)
    conn = apsw.Connection(str(db))
    version = conn.execute("pragma user_version").fetchone()[0]
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert version == 1, "killed before the migration committed"
    assert conn.execute("select count(*) from chunks").fetchone()[0] == len(vectors)
    conn.close()
    again = run_cli(db, "stats", "--json", config=hash_config, timeout=300)
    assert again.returncode == 0, again.stderr
    stats = json.loads(again.stdout)
    assert stats["vectors"] == len(vectors) and stats["pending_vectors"] == 0
    state = audit_db(db, ledger)
    ledger.data_lost(len(vectors) - len(state.vectors))
    assert state.vectors == vectors
    b = apsw.Connection(str(backup), flags=apsw.SQLITE_OPEN_READONLY)
    assert b.execute("pragma user_version").fetchone()[0] == 1
    assert b.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert b.execute("select count(*) from chunks").fetchone()[0] == len(vectors)
    b.close()


def test_newer_schema_is_refused_and_left_untouched(tmp_path, hash_config, ledger):
    db = tmp_path / "future.db"
    (tmp_path / "empty").mkdir()
    assert run_cli(db, "index", tmp_path / "empty", config=hash_config).returncode == 0  # a new, empty library
    conn = apsw.Connection(str(db))
    conn.execute(f"pragma user_version = {SCHEMA_VERSION + 7}")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    before = sha(db)
    ledger.fault("newer schema")
    for args in (["stats"], ["index", str(tmp_path)], ["search", "x"]):
        proc = run_cli(db, *args, config=hash_config)
        assert proc.returncode == 1
        no_traceback(proc)
        assert "was written by a newer desktop-memory" in proc.stderr
    with pytest.raises(StoreError, match="newer desktop-memory"):
        MemoryService(Settings(), db_path=db, embedder=HashEmbedder(8))
    assert sha(db) == before and not list(tmp_path.glob("future.db.bak*"))
