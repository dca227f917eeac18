"""`desktop-memory copy` between the two stores (issue 32 item 6) on a real PostgreSQL + pgvector server
(tests/support/postgres.py): a SQLite library goes to PostgreSQL and back without re-embedding a passage, both copies
answer every backend as the source does, and a copy to the server that was interrupted goes on where it stopped.
The source library (two folders, duplicates, an exclusion, a skipped file, a second model's vectors) is
test_library_copy.py's."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import Cancelled
from desktop_memory.library_copy_job import copy_library
from desktop_memory.machine import this_machine
from desktop_memory.service import MemoryService
from desktop_memory.store.open import open_store
from tests.support.postgres import fresh_database, pg_server, pg_url  # noqa: F401
from tests.unit.test_library_copy import QUERIES, _state, source  # noqa: F401


def _answers(db: Path | str, backend: str) -> list[list[tuple[str, str]]]:
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        return [[(r.source, r.text) for r in svc.search_outcome(q, backend=backend, top_k=10).results] for q in QUERIES]
    finally:
        svc.close()


def _scores(db: Path | str, backend: str) -> list[float]:
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        return [r.score for q in QUERIES for r in svc.search_outcome(q, backend=backend, top_k=10).results]
    finally:
        svc.close()


def _indexed_on_the_server(url: str, tmp_path: Path) -> None:
    """The source's folders indexed straight into a server library, as the source fixture indexed them."""
    svc = MemoryService(Settings(), db_path=url, embedder=HashEmbedder(32))
    try:
        svc.index_paths([tmp_path / "docs", tmp_path / "other"])
        svc.remove_paths([tmp_path / "docs" / "about"], exclude=True)
    finally:
        svc.close()


def test_sqlite_to_postgresql_and_back_without_re_embedding(source, tmp_path, monkeypatch, pg_server,  # noqa: F811
                                                            pg_url):  # noqa: F811
    direct = fresh_database(pg_server)
    _indexed_on_the_server(direct, tmp_path)  # what the server's own engines answer for these files
    monkeypatch.setattr(HashEmbedder, "embed_documents", lambda *a, **k: pytest.fail("the copy embedded"))
    machine = this_machine(Settings())  # the copying machine: the source's folders become its own on the server
    there = copy_library(source, pg_url, machine=machine, slice_size=7)
    assert there.documents > 0 and there.vectors["other-model"] > 0 and there.exclusions == 1
    expected = _state(source)
    assert _state(pg_url) == expected
    back = tmp_path / "back.db"
    copy_library(pg_url, back, machine=machine, slice_size=7)
    assert _state(back) == expected
    for backend in ("keyword", "dense", "hybrid"):
        # on the server, the copy answers as the same files indexed there (PostgreSQL's tokenizer is its own,
        # so its keyword ranking is compared with the server's, not with SQLite's); back home, as the source did
        assert _answers(pg_url, backend) == _answers(direct, backend), backend
        assert _scores(pg_url, backend) == pytest.approx(_scores(direct, backend), abs=1e-6), backend
        assert _answers(back, backend) == _answers(source, backend), backend
        assert _scores(back, backend) == pytest.approx(_scores(source, backend), abs=1e-6), backend


def test_folders_copied_to_a_server_belong_to_the_copying_machine(source, pg_url):  # noqa: F811
    copy_library(source, pg_url, machine=("machine-1", "desktop"))
    mine, theirs = open_store(source, readonly=True), open_store(pg_url, readonly=True)
    try:
        assert theirs.root_machines() == [(p, "machine-1", "desktop") for p, _, _ in mine.root_machines()]
        assert len(mine.root_machines()) == 2  # recorded without a machine in the file: a file is one machine's
        assert theirs.exclusion_rows() == mine.exclusion_rows() and len(mine.exclusion_rows()) == 1
    finally:
        mine.close()
        theirs.close()


def test_an_interrupted_copy_to_a_server_goes_on_where_it_stopped(source, pg_server, pg_url):  # noqa: F811
    machine = this_machine(Settings())
    cancel = threading.Event()
    with pytest.raises(Cancelled, match="run it again"):
        copy_library(source, pg_url, machine=machine, cancel=cancel, slice_size=5,
                     progress=lambda done, total: cancel.set())
    first = _state(pg_url)
    assert 0 < sum(first["documents"].values()) < sum(_state(source)["documents"].values())  # type: ignore[union-attr]
    again = copy_library(source, pg_url, machine=machine, slice_size=5)
    assert again.unchanged == first["documents"]["indexed"]  # type: ignore[index]  # not written again
    assert _state(pg_url) == _state(source)
    whole = fresh_database(pg_server)
    copy_library(source, whole, machine=machine)  # the same copy, uninterrupted
    assert _answers(pg_url, "hybrid") == _answers(whole, "hybrid")


def _indexes(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {str(r[0]) for r in conn.execute("select indexname from pg_indexes where schemaname = 'public'")}


def test_a_copy_builds_the_indexes_after_the_rows_and_an_interrupted_one_is_repaired(
        source, pg_server, pg_url, monkeypatch):  # noqa: F811
    """Into an empty server library the vectors go in without their HNSW index, built once at the end
    (store/postgres/bulk.py); an interrupted copy leaves it out, `check` says so, and the copy run again (or
    `compact`) builds it, with the same answers as a copy that never stopped."""
    from desktop_memory.store.postgres import vectors

    monkeypatch.setattr(vectors, "INDEX_FROM", 5)  # the test library is small: an HNSW index from 5 vectors
    machine = this_machine(Settings())
    cancel = threading.Event()
    with pytest.raises(Cancelled):
        copy_library(source, pg_url, machine=machine, cancel=cancel, slice_size=5,
                     progress=lambda done, total: cancel.set())
    table = open_store(pg_url, readonly=True)
    try:
        assert table.vectors.count() >= 5  # type: ignore[attr-defined]
        assert "vectors_1_hnsw" not in _indexes(pg_url)
        assert any("vectors_1 have no HNSW index" in p for p in table.check_integrity())
    finally:
        table.close()
    copy_library(source, pg_url, machine=machine, slice_size=5)
    assert "vectors_1_hnsw" in _indexes(pg_url)
    whole = fresh_database(pg_server)
    copy_library(source, whole, machine=machine)
    assert "vectors_1_hnsw" in _indexes(whole)
    assert _state(pg_url) == _state(whole) == _state(source)
    assert _answers(pg_url, "hybrid") == _answers(whole, "hybrid")
    # interrupted again into another empty library, then repaired by compact instead
    third = fresh_database(pg_server)
    cancel.clear()
    with pytest.raises(Cancelled):
        copy_library(source, third, machine=machine, cancel=cancel, slice_size=5,
                     progress=lambda done, total: cancel.set())
    store = open_store(third)
    try:
        assert store.check_integrity() != []
        store.compact()
        assert store.check_integrity() == []
    finally:
        store.close()
    assert "vectors_1_hnsw" in _indexes(third)


def test_word_segments_hold_each_passages_own_tokens_after_a_copy_a_removal_and_compact(
        source, pg_url):  # noqa: F811
    """A copy writes one segment per word per slice (store/postgres/postings.py): every passage's length and
    postings agree with its own tokens, after a removal too, and `compact` merges the segments without changing a
    posting or an answer."""
    import psycopg

    copy_library(source, pg_url, machine=this_machine(Settings()), slice_size=7)

    def postings_and_segments() -> tuple[list[tuple[int, str, int, int]], int]:
        with psycopg.connect(pg_url) as conn:
            wrong_length = conn.execute(
                "select count(*) from chunks where dup_of is null and n_words <> coalesce((select "
                "sum(coalesce(array_length(x.positions, 1), 1)) from unnest(tsv) x), 0)").fetchone()
            assert wrong_length == (0,)
            held = sorted((int(c), str(t), int(tf), int(dl)) for c, t, tf, dl in conn.execute(
                "select c.id, x.lexeme, coalesce(array_length(x.positions, 1), 1), c.n_words "
                "from chunks c cross join unnest(c.tsv) x where c.dup_of is null"))
            stored = sorted((int(p) >> 25, str(t), (int(p) >> 16) & 511, int(p) & 65535) for t, p in conn.execute(
                "select t.term, p from term_postings t cross join unnest(t.postings) p where t.lane = 0"))
            assert stored == held and held
            segments = conn.execute("select count(*) from term_postings where lane = 0").fetchone()
        return held, int(segments[0])

    postings_and_segments()
    with psycopg.connect(pg_url) as conn:  # the stage tables' pages given back at the copy's end
        assert conn.execute("select pg_relation_size('token_stage') + pg_relation_size('segment_stage')")\
            .fetchone() == (0,)
    store = open_store(pg_url)
    try:
        doc = store.export.documents(0, 1)[0]
        store.remove_documents([doc.id])
        assert store.check_integrity() == []
        after_removal = postings_and_segments()
        answers = _answers(pg_url, "keyword")
        store.compact()
        assert store.check_integrity() == []
    finally:
        store.close()
    merged = postings_and_segments()
    assert merged[0] == after_removal[0] and merged[1] < after_removal[1]  # same postings, fewer segments
    assert _answers(pg_url, "keyword") == answers and any(answers)


def _small_library(tmp_path: Path, name: str) -> Path:
    """A SQLite library of a few passages (a folder of its own), with the source fixture's model."""
    folder = tmp_path / name
    folder.mkdir()
    for i in range(8):  # a passage each
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\n" + "\n\n".join(
            f"Paragraph {j} of {name} note {i} about tides and {name} {i * 10 + j}." for j in range(4)),
            encoding="utf-8")
    db = tmp_path / f"{name}.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        svc.index_paths([folder])
    finally:
        svc.close()
    return db


def _indexes_while_writing(monkeypatch: pytest.MonkeyPatch, url: str) -> list[set[str]]:
    """The library's indexes as each slice of the next copy into it is written."""
    from desktop_memory.store.postgres.store import PgStore

    seen: list[set[str]] = []
    original = PgStore.write_documents

    def watched(self, docs):
        seen.append(_indexes(url))
        return original(self, docs)

    monkeypatch.setattr(PgStore, "write_documents", watched)
    return seen


def test_a_copy_larger_than_the_library_rebuilds_its_indexes_and_a_small_one_keeps_them(
        source, tmp_path, pg_url, monkeypatch):  # noqa: F811
    """A copy bringing more passages than the server library holds writes without the HNSW index the library
    already had (inserting into an existing graph vector by vector is what made a 900,000-passage copy crawl),
    then builds it; a copy of fewer passages than the library holds keeps it, as a rebuild would cost more than
    its rows. Either way the library ends whole: `check` finds nothing
    and every passage of both sources is found."""
    from desktop_memory.store.postgres import vectors

    monkeypatch.setattr(vectors, "INDEX_FROM", 5)
    machine = this_machine(Settings())
    small, tiny = _small_library(tmp_path, "harbour"), _small_library(tmp_path, "lighthouse")
    copy_library(small, pg_url, machine=machine)  # into an empty library: indexes built at the end
    assert "vectors_1_hnsw" in _indexes(pg_url)
    seen = _indexes_while_writing(monkeypatch, pg_url)
    copy_library(source, pg_url, machine=machine, slice_size=7)  # larger than the 8 passages it holds
    assert seen and all(not ({"vectors_1_hnsw", "vectors_2_hnsw"} & s) for s in seen)
    after = _indexes(pg_url)
    assert {"vectors_1_hnsw", "vectors_2_hnsw"} <= after  # the side set's index too
    seen.clear()
    copy_library(tiny, pg_url, machine=machine)  # 8 passages into a library of hundreds: kept
    assert seen and all(after <= s for s in seen)
    assert _indexes(pg_url) == after
    store = open_store(pg_url)
    try:
        assert store.check_integrity() == []
    finally:
        store.close()
    svc = MemoryService(Settings(), db_path=pg_url, embedder=HashEmbedder(32))
    try:
        for words, folder in (("harbour tides", "harbour"), ("lighthouse tides", "lighthouse"),
                              ("dependency injection", "docs")):
            results = svc.search_outcome(words, backend="hybrid", top_k=20).results
            assert any(f"/{folder}/" in r.source for r in results), words
    finally:
        svc.close()


@pytest.mark.parametrize("second", ["The quick brown fox jumps over the lazy dog by the river bank.",
                                    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG BY THE RIVER BANK."])
def test_a_passage_the_server_holds_in_another_file_gets_a_vector_only_of_its_own_text(tmp_path, pg_url,  # noqa: F811
                                                                                      second):
    """In the file library the passage is held by the file whose path sorts first (a.md), on the server by the
    file written first (b.md). b.md's passage then takes a.md's vector only when their texts are the same: a copy
    shares its holder's normalised text, and a vector is the embedding of exactly its own passage's text."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "b.md").write_text("The quick brown fox jumps over the lazy dog by the river bank.\n", encoding="utf-8")
    db = tmp_path / "memory.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        svc.index_paths([notes / "b.md"])
        (notes / "a.md").write_text(second + "\n", encoding="utf-8")
        svc.index_paths([notes])
        assert svc.stats().duplicates == 1
    finally:
        svc.close()
    copy_library(db, pg_url, machine=("machine-1", "desktop"))
    store = open_store(pg_url, readonly=True)
    try:
        held = store.conn.execute("select d.path, c.text, c.embedded from chunks c join documents d on d.id = c.doc_id "
                                  "where c.dup_of is null").fetchall()
        assert [(Path(p).name, bool(e)) for p, _, e in held] == [("b.md", second.startswith("The quick"))]
        vectors = dict(store.export.vectors(HashEmbedder(32).model_id, [int(i) for i, in store.conn.execute(
            "select id from chunks where dup_of is null")]))
        for vector in vectors.values():  # the one there is b.md's own text's
            assert vector == pytest.approx(HashEmbedder(32).embed_documents([held[0][1]])[0], abs=1e-6)
    finally:
        store.close()


def test_a_copy_run_again_after_its_source_grew_keeps_the_index(source, tmp_path, pg_url, monkeypatch):  # noqa: F811
    """What a copy brings is what the target lacks: run again after a few files were added to the source, it
    copies those and keeps the HNSW graph (it used to count the whole source, find the library smaller, and drop
    and rebuild the graph of every vector for a few passages)."""
    import psycopg

    from desktop_memory.store.postgres import vectors

    monkeypatch.setattr(vectors, "INDEX_FROM", 5)
    machine = this_machine(Settings())
    copy_library(source, pg_url, machine=machine)
    with psycopg.connect(pg_url) as conn:
        built = conn.execute("select 'vectors_1_hnsw'::regclass::oid").fetchone()
    extra = tmp_path / "docs" / "late-note.md"
    extra.write_text("# Late\n\nA quokka crossed the harbour at dawn.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=source, embedder=HashEmbedder(32))
    try:
        svc.index_paths([extra])
    finally:
        svc.close()
    again = copy_library(source, pg_url, machine=machine)
    assert again.documents == 1 and again.unchanged > 0
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select 'vectors_1_hnsw'::regclass::oid").fetchone() == built
    assert _state(pg_url) == _state(source)
