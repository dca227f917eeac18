"""What only a PostgreSQL library has to get right (store/postgres/): writers on several machines take turns under
the library's advisory lock, a read-only connection refuses writes in one sentence, a wrong or unreachable server
is one sentence that never shows the password, and the keyword lane's BM25 is FTS5's formula."""

from __future__ import annotations

import math
import threading
import time

import psycopg
import pytest

from desktop_memory.errors import StoreError, StoreReadOnly
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.store.open import open_store
from desktop_memory.store.postgres.connection import WRITER_LOCK
from tests.support.postgres import pg_server, pg_url  # noqa: F401


def write(store, path, text):
    return store.write_document(path=path, kind="text", language=None, title=None, size=1, mtime=1.0,
                                content_hash=path, chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                                dedupe_keys=[path])


def test_two_writers_take_turns_and_lose_nothing(pg_url):  # noqa: F811
    first, second = open_store(pg_url), open_store(pg_url)
    try:
        # another machine holds the writer lock (a write transaction in progress)
        holder = psycopg.connect(pg_url)
        holder.execute("select pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
        done = threading.Event()

        def blocked_write():
            write(first, "/m1/a.txt", "written by the first machine")
            done.set()

        thread = threading.Thread(target=blocked_write)
        thread.start()
        time.sleep(0.5)
        assert not done.is_set()  # it waits for its turn
        holder.rollback()
        thread.join(10)
        assert done.is_set()
        writers = [threading.Thread(target=lambda s=s, m=m: [write(s, f"/{m}/{i}.txt", f"note {m} {i}")
                                                             for i in range(15)])
                   for s, m in ((first, "m1"), (second, "m2"))]
        for t in writers:
            t.start()
        for t in writers:
            t.join(60)
        assert first.counts()["by_status"]["indexed"] == 31 and first.check_integrity() == []
        holder.close()
    finally:
        first.close()
        second.close()


def test_a_read_only_connection_searches_and_refuses_writes_in_one_sentence(pg_url):  # noqa: F811
    writer = open_store(pg_url)
    write(writer, "/lib/a.txt", "the lighthouse keeper's log")
    writer.close()
    reader = open_store(pg_url, readonly=True)
    try:
        assert [c for c, _ in fts_lane(reader, "lighthouse", 5)]
        with pytest.raises(StoreReadOnly) as caught:
            write(reader, "/lib/b.txt", "more")
        assert "\n" not in str(caught.value) and "writer role" in str(caught.value)
    finally:
        reader.close()


def test_a_wrong_or_unreachable_server_is_one_sentence_without_the_password(pg_url):  # noqa: F811
    with pytest.raises(StoreError) as caught:
        open_store("postgresql://ann:s3cret@127.0.0.1:1/nowhere?connect_timeout=2")
    assert "s3cret" not in str(caught.value) and "ann:***@127.0.0.1:1" in str(caught.value)
    assert "\n" not in str(caught.value)
    with pytest.raises(StoreError, match=r"not a valid PostgreSQL URL|Cannot connect"):
        open_store("postgresql://[broken")


def test_keyword_scores_are_fts5_bm25(pg_url):  # noqa: F811
    store = open_store(pg_url)
    try:
        write(store, "/a.txt", "otter otter river")
        write(store, "/b.txt", "a river runs through the long valley floor")
        write(store, "/c.txt", "mountains only")
        n, avg = 3, (3 + 8 + 2) / 3

        def bm25(tf, length, df):
            idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            return idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))

        got = dict(fts_lane(store, "otter river", 10))
        ids = {store.reads.chunk_rows([c])[c].path: c for c in got}
        assert got[ids["/a.txt"]] == pytest.approx(bm25(2, 3, 1) + bm25(1, 3, 2))
        assert got[ids["/b.txt"]] == pytest.approx(bm25(1, 8, 2))
    finally:
        store.close()


def test_a_large_library_gets_its_hnsw_index_and_finds_the_exact_neighbours(pg_url, monkeypatch):  # noqa: F811
    import numpy as np

    from desktop_memory.store.postgres import dense, vectors

    monkeypatch.setattr(vectors, "INDEX_FROM", 300)  # a "large" library at test size
    monkeypatch.setattr(dense, "EXACT_BELOW", 300)
    store = open_store(pg_url)
    try:
        texts = [f"passage {i}" for i in range(600)]
        store.write_document(path="/lib/big.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                             content_hash="h", chunks=[ChunkDraft(t, Location(char_end=len(t))) for t in texts],
                             dedupe_keys=texts)
        store.ensure_model("m", 16)
        ids = [cid for cid, _ in store.pending_chunks(1000)]
        rng = np.random.default_rng(3)
        vecs = rng.normal(size=(600, 16)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.store_vectors(ids[:200], vecs[:200], texts[:200])
        with psycopg.connect(pg_url) as conn:
            assert not conn.execute("select 1 from pg_indexes where indexname like 'vectors_%_hnsw'").fetchone()
        store.store_vectors(ids[200:], vecs[200:], texts[200:])
        with psycopg.connect(pg_url) as conn:
            conn.execute("analyze")  # the planner's size estimate, as autovacuum would make it
            assert conn.execute("select 1 from pg_indexes where indexname like 'vectors_%_hnsw'").fetchone()
        recall = []
        for q in rng.normal(size=(20, 16)).astype(np.float32):
            q /= np.linalg.norm(q)
            fast = {c for c, _ in store.dense_candidates(q, 10)}
            exact = {c for c, _ in store.dense_exact_candidates(q, 10)}
            recall.append(len(fast & exact) / 10)
        assert np.mean(recall) >= 0.95
    finally:
        store.close()


def test_a_read_only_role_searches_a_current_library_and_is_told_why_it_cannot_write(pg_url):  # noqa: F811
    writer = open_store(pg_url)
    write(writer, "/lib/a.txt", "minutes of the harbour committee")
    writer.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("drop role if exists dm_reader")
        conn.execute("create role dm_reader login")
        conn.execute("grant select on all tables in schema public to dm_reader")
    reader = open_store(pg_url.replace("postgres:@", "dm_reader@"))  # no read-only flag: the role decides
    try:
        assert [c for c, _ in fts_lane(reader, "harbour", 5)]
        with pytest.raises(StoreReadOnly) as caught:
            write(reader, "/lib/b.txt", "more")
        assert "writer role" in str(caught.value) and "\n" not in str(caught.value)
    finally:
        reader.close()


def test_a_connection_lost_mid_write_is_one_sentence_and_writes_nothing_half(pg_url):  # noqa: F811
    store = open_store(pg_url)
    write(store, "/lib/a.txt", "before the outage")
    pid = store.conn.info.backend_pid
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("select pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError) as caught:
        write(store, "/lib/b.txt", "during the outage")
    assert "\n" not in str(caught.value) and "lost" in str(caught.value)
    other = open_store(pg_url)
    assert other.get_document("/lib/b.txt") is None and other.check_integrity() == []  # nothing half-written
    other.close()
    write(store, "/lib/b.txt", "after the outage")  # the next write reconnects
    try:
        assert store.get_document("/lib/a.txt") is not None and store.get_document("/lib/b.txt") is not None
        assert store.check_integrity() == []
    finally:
        store.close()
