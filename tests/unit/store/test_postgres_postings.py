"""The PostgreSQL library's word statistics as segments (store/postgres/postings.py): a library of schema 2 (a row
per word and passage) is migrated with the same postings and answers, a CJK bigram lane and a removal keep the
segments exact, and a word's document frequency is a sum over segments."""

from __future__ import annotations

import psycopg

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.store.open import open_store
from desktop_memory.store.postgres import postings
from desktop_memory.store.postgres.schema import SCHEMA_VERSION
from tests.support.postgres import pg_server, pg_url, statistics_as_rows  # noqa: F401

TEXTS = ["blood pressure rises in the morning", "the blood bank opens", "pressure of blood on the walls",
         "t cell counts fall", "a t cell and a b cell", "cells divide slowly", "東京の天気は晴れです",
         "東京タワーの高さ", "blood pressure falls again at night"]


def _write(store, i: int, text: str) -> None:
    store.write_document(path=f"/n{i}.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                         content_hash=str(i), chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                         dedupe_keys=[str(i)])


def _postings(url: str) -> list[tuple[int, str, int, int, int]]:
    with psycopg.connect(url) as conn:
        return sorted((int(lane), str(t), *postings.unpack(int(p))) for lane, t, p in conn.execute(
            "select t.lane, t.term, p from term_postings t cross join unnest(t.postings) p"))


def _answers(store) -> list[list[tuple[int, float]]]:
    return [[(int(cid), round(float(score), 9)) for cid, score in fts_lane(store, q, 10)]
            for q in ("blood pressure", "t cell", "東京", "cells", "morning blood")]


def test_a_schema_2_library_is_migrated_with_the_same_postings_and_answers(pg_url):  # noqa: F811
    store = open_store(pg_url)
    try:
        for i, text in enumerate(TEXTS):
            _write(store, i, text)
        before, answers = _postings(pg_url), _answers(store)
    finally:
        store.close()
    assert {lane for lane, *_ in before} == {0, 1} and answers[0]
    with psycopg.connect(pg_url) as conn:  # the library as desktop-memory wrote it before segments
        statistics_as_rows(conn)
        conn.execute("update dm_schema set version = 2")
    store = open_store(pg_url)
    try:
        assert _postings(pg_url) == before and _answers(store) == answers
        assert store.check_integrity() == []
    finally:
        store.close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select version from dm_schema").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("select to_regclass('chunk_terms')").fetchone() == (None,)


def test_removal_and_a_passage_handed_over_keep_the_segments_exact(pg_url):  # noqa: F811
    store = open_store(pg_url)
    try:
        for i, text in enumerate(TEXTS):
            _write(store, i, text)
        # the same passage in a second file: a copy, with no postings of its own, until its holder goes
        store.write_document(path="/z-copy.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                             content_hash="c", chunks=[ChunkDraft(TEXTS[0], Location(char_end=len(TEXTS[0])))],
                             dedupe_keys=["0"])
        held = store.reads.doc_freqs(["blood", "pressur"])
        holder = store.get_document("/n0.txt")
        assert holder is not None
        store.remove_documents([holder.id])  # the copy becomes the holder: its postings are written
        assert store.reads.doc_freqs(["blood", "pressur"]) == held
        gone = store.get_document("/n6.txt")
        assert gone is not None
        store.remove_documents([gone.id])
        assert store.check_integrity() == []
        with psycopg.connect(pg_url) as conn:
            tokens = sorted((str(t), int(c)) for c, t in conn.execute(
                "select c.id, x.lexeme from chunks c cross join unnest(c.tsv) x where c.dup_of is null"))
        assert sorted((t, c) for lane, t, c, _, _ in _postings(pg_url) if lane == 0) == tokens
        assert not any(t == "天気" for lane, t, *_ in _postings(pg_url) if lane == 1)  # its bigrams went with it
        assert any(t == "東京" for lane, t, *_ in _postings(pg_url) if lane == 1)  # the other file's stayed
        lo, hi = store.reads.chunk_id_span()
        assert postings.count_in(store.conn, "blood", lo, hi) == held["blood"] == 4  # type: ignore[attr-defined]
    finally:
        store.close()


def _segments(url: str) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute("select count(*) from term_postings").fetchone()[0])


def test_small_writes_are_merged_behind_them_without_changing_a_posting(pg_server, pg_url, monkeypatch):  # noqa: F811
    """One passage a write leaves a segment per word a write; once the ids pass a bucket's end the write that passed
    it merges the bucket's small segments into one per word: the same postings, the same answers, fewer rows."""
    from tests.support.postgres import fresh_database

    monkeypatch.setattr(postings, "MERGE_SPAN_BITS", 2)  # buckets of 4 ids
    apart = fresh_database(pg_server)
    answers: list[list[list[tuple[int, float]]]] = []
    for url, merging in ((apart, False), (pg_url, True)):
        store = open_store(url)
        try:
            store.writes.bulk = not merging  # type: ignore[attr-defined]  # (a bulk load only marks buckets)
            for i, text in enumerate(TEXTS * 2):
                _write(store, i, f"{text} {i}")
            answers.append(_answers(store))
            assert store.check_integrity() == []
        finally:
            store.close()
    assert answers[0] == answers[1] and answers[0][0]
    assert _postings(pg_url) == _postings(apart)
    assert _segments(pg_url) < _segments(apart)
    with psycopg.connect(pg_url) as conn:  # every bucket passed holds one segment per word
        assert conn.execute("select count(*) from (select lane, term, first_id >> 2 from term_postings "
                            "where last_id < 16 group by 1, 2, 3 having count(*) > 1) m").fetchone() == (0,)
