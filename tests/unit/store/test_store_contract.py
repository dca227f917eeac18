"""The store contract, run against BOTH stores: the SQLite file (store/repository.py) and a PostgreSQL library on a
real server with pgvector (store/postgres/, started once per session by tests/support/postgres.py). Each test
states a behaviour the rest of the app relies on; a store that breaks it fails here, whichever it is."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from desktop_memory.errors import EmbedderError, StoreError
from desktop_memory.models import ChunkDraft, LibraryQuery, Location, SearchFilters
from desktop_memory.retrieve.lanes import dense_lane, dense_lane_exact, fts_lane
from desktop_memory.store.location import is_server_url, redacted
from desktop_memory.store.open import open_store
from tests.support.postgres import fresh_database, pg_server, pg_url  # noqa: F401

DIM = 8


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "library.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(location):
    s = open_store(location)
    yield s
    s.close()


def drafts(*texts):
    return [ChunkDraft(t, Location(char_start=0, char_end=len(t))) for t in texts]


def write(store, path, *texts, keys=None, kind="text"):
    return store.write_document(path=path, kind=kind, language=None, title=None, size=len("".join(texts)),
                                mtime=1.0, content_hash=str(hash(texts)), chunks=drafts(*texts),
                                dedupe_keys=keys if keys is not None else [f"{path}#{i}" for i in range(len(texts))])


def unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_documents_are_written_replaced_and_removed(store):
    first = write(store, "/lib/a.txt", "apples grow on trees", "pears too")
    assert (first.chunks, first.duplicates) == (2, 0)
    write(store, "/lib/sub/b.txt", "bananas are yellow")
    assert store.get_document("/lib/a.txt").n_chunks == 2
    assert [d.path for d in store.documents_under("/lib")] == ["/lib/a.txt", "/lib/sub/b.txt"]
    assert [d.path for d in store.documents_under("/lib/sub")] == ["/lib/sub/b.txt"]
    version = store.content_version()
    again = write(store, "/lib/a.txt", "apples only")  # an edited file replaces its chunks whole
    assert again.doc_id == first.doc_id and store.get_document("/lib/a.txt").n_chunks == 1
    assert store.content_version() > version
    assert store.counts()["chunks"] == 2
    assert [cid for cid, _ in fts_lane(store, "pears", 10)] == []
    assert store.remove_documents([first.doc_id]) == 1
    assert store.get_document("/lib/a.txt") is None and store.counts()["chunks"] == 1
    tokyo = write(store, "/lib/tokyo.txt", "東京都に住んでいます")  # bigrams of text without spaces
    assert [store.reads.chunk_rows([c])[c].path for c, _ in fts_lane(store, "東京", 10)] == ["/lib/tokyo.txt"]
    store.remove_documents([tokyo.doc_id])
    assert fts_lane(store, "東京", 10) == []
    store.record_outcome(path="/lib/c.bin", status="skipped", error="not text")
    assert store.get_document("/lib/c.bin").status == "skipped"
    assert store.check_integrity() == []


def test_a_duplicate_passage_is_held_once_and_handed_over_when_its_holder_goes(store):
    a = write(store, "/lib/a.txt", "the shared paragraph about otters", keys=["k"])
    b = write(store, "/lib/b.txt", "the shared paragraph about otters", keys=["k"])
    assert b.duplicates == 1 and store.counts()["duplicates"] == 1
    hits = fts_lane(store, "otters", 10)
    assert len(hits) == 1  # one canonical passage, found once
    store.remove_documents([a.doc_id])
    hits = fts_lane(store, "otters", 10)
    assert len(hits) == 1 and store.reads.chunk_rows([hits[0][0]])[hits[0][0]].path == "/lib/b.txt"
    assert store.check_integrity() == []


def test_removal_intent_and_exclusions(store):
    store.add_root("/lib")
    write(store, "/lib/keep.txt", "kept")
    write(store, "/lib/drop/x.txt", "dropped one")
    write(store, "/lib/drop/y.txt", "dropped two")
    pending = store.begin_removal(["/lib/drop"], exclude=["/lib/drop"])
    assert pending == ["/lib/drop"] and store.pending_removals() == ["/lib/drop"]
    assert store.excluded() == ["/lib/drop"] and store.roots() == ["/lib"]
    assert store.count_under(["/lib/drop"]) == 2
    ids = store.removal_slice(["/lib/drop"], 1)
    assert len(ids) == 1
    store.remove_documents(ids)
    store.remove_documents(store.removal_slice(["/lib/drop"], 10))
    store.end_removal(["/lib/drop"])
    assert store.pending_removals() == [] and store.count_under(["/lib/drop"]) == 0
    assert [d.path for d in store.documents_under("/lib")] == ["/lib/keep.txt"]
    assert store.lift_exclusions(["/lib/drop"]) == ["/lib/drop"] and store.excluded() == []
    store.begin_removal(["/lib"], exclude=["/lib"])  # a library folder itself: no longer a folder, no exclusion
    assert store.roots() == [] and store.excluded() == []


def test_adding_a_folder_again_calls_off_its_interrupted_removal(store):
    """The rule both stores share (store/folders.py): a folder (re)added takes itself and what is inside it out of
    the pending removals, so finishing an interrupted removal later cannot take what was just added again."""
    store.add_root("/lib")
    store.begin_removal(["/lib/a", "/lib/b/c", "/other"])
    store.add_root("/lib/b")
    assert store.pending_removals() == ["/lib/a", "/other"] and store.roots() == ["/lib", "/lib/b"]
    store.remove_root("/lib/b")
    assert store.roots() == ["/lib"]


def test_the_listing_a_passage_and_a_merge_step_are_methods_of_the_store(store):
    """What callers once reached through store module functions and the eraser part (issue 31 item 6)."""
    write(store, "/lib/a.txt", "one", "two", "three")
    write(store, "/lib/sub/b.txt", "bananas")
    whole = store.listing(LibraryQuery(), {}, eager_limit=10)
    assert whole.complete and whole.total_documents == 2
    assert {k: [d.path for d in v] for k, v in whole.files.items()} == {"/lib/": ["/lib/a.txt"],
                                                                        "/lib/sub/": ["/lib/sub/b.txt"]}
    paged = store.listing(LibraryQuery(), {"/lib/": 1}, eager_limit=1)
    assert not paged.complete and [d.path for d in paged.files["/lib/"]] == ["/lib/a.txt"]
    assert [d.path for d in store.listing_page(LibraryQuery(), "/lib/sub/", 0, 5)] == ["/lib/sub/b.txt"]
    middle = next(c for c, _ in fts_lane(store, "two", 5))
    found = store.passage(middle, 1)
    assert found is not None and found.passage.text == "two" and found.chunks_in_file == 3
    assert [p.text for p in found.before] == ["one"] and [p.text for p in found.after] == ["three"]
    assert store.passage(10**9) is None
    assert store.merge_step() in (True, False)


def test_vectors_are_queued_stored_and_kept_for_unchanged_text(store):
    write(store, "/lib/a.txt", "one", "two", "three")
    store.ensure_model("m", DIM)
    with pytest.raises(EmbedderError):
        store.ensure_model("other", DIM)
    pending = store.pending_chunks(10)
    assert [t for _, t in pending] == ["one", "two", "three"] and store.pending_count() == 3
    ids = [cid for cid, _ in pending]
    vecs = unit(np.random.default_rng(1).normal(size=(3, DIM)))
    # a vector computed from other text than the chunk's is not stored
    assert store.store_vectors(ids, vecs, ["one", "changed meanwhile", "three"]) == 2
    assert store.pending_count() == 1 and store.counts()["vectors"] == 2
    again = write(store, "/lib/a.txt", "one", "two", "four")  # "one" keeps its vector
    assert again.vectors_reused == 1 and store.pending_count() == 2
    got = {int(i): v for ids_, block in store.iter_vectors() for i, v in zip(ids_, block)}
    assert len(got) == 1 and np.allclose(next(iter(got.values())), vecs[0], atol=1e-6)
    assert store.check_integrity() == []


def test_dense_order_is_the_exact_cosine_order(store):
    rng = np.random.default_rng(7)
    texts = [f"passage {i}" for i in range(60)]
    write(store, "/lib/a.txt", *texts[:30])
    write(store, "/lib/b.md", *texts[30:], kind="markdown")
    store.ensure_model("m", DIM)
    ids = [cid for cid, _ in store.pending_chunks(100)]
    vecs = unit(rng.normal(size=(len(ids), DIM)))
    store.store_vectors(ids, vecs, texts)
    query = unit(rng.normal(size=(1, DIM)))[0]
    cosine = vecs @ query
    truth = [ids[i] for i in np.argsort(-cosine, kind="stable")[:10]]
    for lane in (dense_lane, dense_lane_exact):
        ranked = lane(store, query, 10)
        assert [cid for cid, _ in ranked] == truth
        assert np.allclose([s for _, s in ranked], np.sort(cosine)[::-1][:10], atol=1e-5)
    only_md = dense_lane(store, query, 5, SearchFilters(kinds=("markdown",)))  # filtered inside the lane
    md = [i for i in np.argsort(-cosine, kind="stable") if i >= 30][:5]
    assert [cid for cid, _ in only_md] == [ids[i] for i in md]


def test_keyword_search_stems_ranks_and_filters(store):
    write(store, "/lib/notes/run.md", "Running every morning keeps the runner fit", kind="markdown")
    write(store, "/lib/notes/walk.txt", "A short walk after lunch")
    write(store, "/lib/other/run.txt", "run run run: the runs of a program")
    ranked = fts_lane(store, "runs", 10)
    paths = [store.reads.chunk_rows([c])[c].path for c, _ in ranked]
    assert set(paths) == {"/lib/notes/run.md", "/lib/other/run.txt"}
    assert paths[0] == "/lib/other/run.txt"  # more occurrences in a shorter passage rank first (BM25)
    assert all(s > 0 for _, s in ranked)
    only = fts_lane(store, "runs", 10, SearchFilters(path_prefix="/lib/notes"))
    assert [store.reads.chunk_rows([c])[c].path for c, _ in only] == ["/lib/notes/run.md"]
    globbed = fts_lane(store, "runs", 10, SearchFilters(path_glob="*/other/*.txt"))
    assert [store.reads.chunk_rows([c])[c].path for c, _ in globbed] == ["/lib/other/run.txt"]
    assert fts_lane(store, "runs", 10, SearchFilters(kinds=("pdf",))) == []
    marked = store.reads.highlighted('"walk"', [c for c, _ in fts_lane(store, "walk", 10)], "<", ">")
    assert list(marked.values()) == ["A short <walk> after lunch"]


def test_a_library_from_a_newer_version_is_refused_in_one_sentence(location):
    store = open_store(location)
    store.close()
    if is_server_url(location):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("update dm_schema set version = 999")
    else:
        import apsw

        conn = apsw.Connection(location)
        conn.execute("pragma user_version = 999")
        conn.close()
    with pytest.raises(StoreError, match="newer") as caught:
        open_store(location)
    assert "\n" not in str(caught.value)


def test_a_server_without_pgvector_rights_is_refused_in_one_sentence(pg_server):  # noqa: F811
    url = fresh_database(pg_server, vector=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("drop role if exists dm_plain")
        conn.execute("create role dm_plain login")
        conn.execute("grant all on schema public to dm_plain")
    plain = url.replace("postgres:@", "dm_plain@")
    with pytest.raises(StoreError, match="pgvector") as caught:
        open_store(plain)
    assert "CREATE EXTENSION vector" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(StoreError, match="pgvector"):
        open_store(url, readonly=True)


def test_server_urls_are_told_apart_and_shown_without_their_password():
    assert is_server_url("postgresql://ann@host/db") and is_server_url("postgres://h/db")
    assert not is_server_url("/home/ann/memory.db") and not is_server_url("C:\\postgresql\\x.db")
    assert redacted("postgresql://ann:s3cret@host:5432/db?sslmode=verify-full") == \
        "postgresql://ann:***@host:5432/db?sslmode=verify-full"
    assert "s3cret" not in redacted("postgresql://host/db?password=s3cret")
