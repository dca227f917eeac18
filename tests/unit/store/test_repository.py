"""The store on a real SQLite file with the real sqlite-vec extension."""

from __future__ import annotations

import apsw
import numpy as np
import pytest

from desktop_memory.errors import EmbedderError, StoreError
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.store import SCHEMA_VERSION, Store
from desktop_memory.store.migrations import MIGRATIONS


def _chunks(*texts: str) -> list[ChunkDraft]:
    out, pos = [], 0
    for t in texts:
        loc = Location(char_start=pos, char_end=pos + len(t), line_start=1, line_end=1)
        out.append(ChunkDraft(text=t, location=loc))
        pos += len(t) + 1
    return out


def _write(store: Store, path: str, *texts: str, keys=None):
    chunks = _chunks(*texts)
    return store.write_document(path=path, kind="text", language=None, title=None, size=10, mtime=1.0,
                                content_hash="h-" + path, chunks=chunks,
                                dedupe_keys=keys or [f"{path}:{i}" for i in range(len(texts))])


def _unit(n: int, dim: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_open_creates_wal_db_with_vec(tmp_path):
    s = Store(tmp_path / "a.db")
    assert s.conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert s.conn.execute("select vec_version()").fetchone()[0].startswith("v")
    assert s.conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
    assert s.check_integrity() == []


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.db"
    Store(path).close()
    c = apsw.Connection(str(path))
    c.execute(f"pragma user_version={SCHEMA_VERSION + 5}")
    c.close()
    with pytest.raises(StoreError, match="newer desktop-memory"):
        Store(path)


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.db"
    c = apsw.Connection(str(path))
    c.execute("create table x(a)")
    c.close()
    with pytest.raises(StoreError, match="not a desktop-memory database"):
        Store(path)


def test_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        Store(path)


def test_old_schema_is_backed_up_then_migrated(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    Store(path).close()
    import desktop_memory.store.migrations as mig

    monkeypatch.setattr(mig, "MIGRATIONS", MIGRATIONS + ["CREATE TABLE extra(x INTEGER);"])
    monkeypatch.setattr(mig, "SCHEMA_VERSION", len(MIGRATIONS) + 1)
    s = Store(path)
    assert s.conn.execute("pragma user_version").fetchone()[0] == len(MIGRATIONS) + 1
    assert (tmp_path / f"old.db.bak-v{len(MIGRATIONS)}").exists()
    backup = apsw.Connection(str(tmp_path / f"old.db.bak-v{len(MIGRATIONS)}"))
    assert backup.execute("pragma user_version").fetchone()[0] == len(MIGRATIONS)


def test_write_replace_and_fts_follow_chunks(tmp_path):
    s = Store(tmp_path / "a.db")
    _write(s, "/x/a.txt", "alpha beta", "gamma delta")
    assert s.conn.execute("select count(*) from chunks_fts where chunks_fts match 'gamma'").fetchone()[0] == 1
    _write(s, "/x/a.txt", "epsilon")  # replaced atomically
    assert s.conn.execute("select count(*) from chunks").fetchone()[0] == 1
    assert s.conn.execute("select count(*) from chunks_fts where chunks_fts match 'gamma'").fetchone()[0] == 0
    assert s.get_document("/x/a.txt").n_chunks == 1
    assert s.check_integrity() == []


def test_vectors_queue_and_model_guard(tmp_path):
    s = Store(tmp_path / "a.db")
    _write(s, "/x/a.txt", "one", "two", "three")
    assert s.pending_count() == 3
    s.ensure_model("m1", 8)
    pending = s.pending_chunks(10)
    assert s.store_vectors([cid for cid, _ in pending[:2]], _unit(2, 8)) == 2
    assert s.pending_count() == 1
    assert [cid for cid, _ in s.pending_chunks(10)] == [pending[2][0]]
    with pytest.raises(EmbedderError, match=r"re-embed|Re-embed"):
        s.ensure_model("m2", 8)
    s.reset_vectors()
    assert s.pending_count() == 3 and not s.has_vector_table()
    assert s.check_integrity() == []


def test_store_vectors_ignores_chunks_deleted_meanwhile(tmp_path):
    s = Store(tmp_path / "a.db")
    _write(s, "/x/a.txt", "one", "two")
    s.ensure_model("m", 4)
    ids = [cid for cid, _ in s.pending_chunks(10)]
    _write(s, "/x/a.txt", "replaced")  # the old chunk ids are gone
    assert s.store_vectors(ids, _unit(2, 4)) == 0
    assert s.check_integrity() == []


def test_duplicates_collapse_and_promote_on_delete(tmp_path):
    s = Store(tmp_path / "a.db")
    s.ensure_model("m", 4)
    r1 = _write(s, "/x/a.md", "shared footer", "only a", keys=["K", "A"])
    r2 = _write(s, "/x/b.md", "shared footer", "only b", keys=["K", "B"])
    r3 = _write(s, "/x/c.md", "shared footer", keys=["K"])
    assert (r1.duplicates, r2.duplicates, r3.duplicates) == (0, 1, 1)
    assert s.conn.execute("select count(*) from chunks_fts where chunks_fts match 'footer'").fetchone()[0] == 1
    ids = [cid for cid, _ in s.pending_chunks(10)]
    s.store_vectors(ids, _unit(len(ids), 4))
    s.remove_documents([r1.doc_id])
    # one copy survives, searchable and still with its vector; the third now points at it
    assert s.conn.execute("select count(*) from chunks_fts where chunks_fts match 'footer'").fetchone()[0] == 1
    canon = s.conn.execute("select id, embedded from chunks where dedupe_key='K' and dup_of is null").fetchall()
    assert len(canon) == 1 and canon[0][1] == 1
    dup_of = s.conn.execute("select dup_of from chunks where dedupe_key='K' and dup_of is not null").fetchone()[0]
    assert dup_of == canon[0][0]
    assert s.check_integrity() == []


def test_record_outcome_keeps_previous_version(tmp_path):
    s = Store(tmp_path / "a.db")
    _write(s, "/x/a.txt", "still here")
    s.record_outcome(path="/x/a.txt", status="failed", error="corrupt now", size=3, mtime=2.0)
    doc = s.get_document("/x/a.txt")
    assert doc.error == "corrupt now" and doc.n_chunks == 1
    s.record_outcome(path="/x/b.txt", status="skipped", error="binary file")
    assert s.get_document("/x/b.txt").status == "skipped"
