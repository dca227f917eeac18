"""Tokenizing ahead on a PostgreSQL library (store/postgres/tokens_ahead.py): a write whose passages were prepared
stores exactly what tokenizing in its own statement stores, a batch that does not match what is written (or a
side connection that fails) only costs time, and nothing tokenized is left behind."""

from __future__ import annotations

import psycopg
import pytest

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.store.doc_writes import DocumentWrite
from desktop_memory.store.open import open_store
from desktop_memory.store.postgres import terms, tokens_ahead
from tests.support.postgres import fresh_database, pg_server, pg_url  # noqa: F401

TEXTS = ["Tides rise twice a day near the harbour wall.", "東京の天気は晴れです", "The harbour wall holds.",
         "Self-driving cars, e-mail and 3.14 values", "Tides rise twice a day near the old harbour wall."]


def _docs(prefix: str) -> list[DocumentWrite]:
    out = []
    for i, text in enumerate(TEXTS):
        drafts = [ChunkDraft(text, Location(char_end=len(text))), ChunkDraft(f"{text} again {i}",
                                                                           Location(char_end=len(text) + 9))]
        out.append(DocumentWrite(path=f"{prefix}/d{i}.txt", kind="text", language=None, title=None, size=1,
                                 mtime=1.0, content_hash=str(i), chunks=drafts,
                                 dedupe_keys=[f"k{text}", f"k{prefix}{text}{i}"]))  # the first: a copy in /b
    solo = "Quokkas smile at 7 wallabies"  # in /b, a copy whose words no other passage of the slice has
    out.append(DocumentWrite(path=f"{prefix}/solo.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                             content_hash="solo", chunks=[ChunkDraft(solo, Location(char_end=len(solo)))],
                             dedupe_keys=["ksolo"]))
    return out


def _stored(url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        chunks = conn.execute("select d.path, c.ord, c.tsv::text, c.n_words, c.n_grams, c.dup_of is null "
                              "from chunks c join documents d on d.id = c.doc_id order by d.path, c.ord").fetchall()
        postings = conn.execute(  # each posting as (lane, term, the passage it names, tf, dl)
            "select t.lane, t.term, d.path, c.ord, (p >> 16) & 511, p & 65535 from term_postings t "
            "cross join unnest(t.postings) p join chunks c on c.id = p >> 25 join documents d on d.id = c.doc_id "
            "order by 1, 2, 3, 4").fetchall()
        bounds = conn.execute("select count(*) from term_postings t where first_id > (select min(p >> 25) from "
                              "unnest(t.postings) p) or last_id < (select max(p >> 25) from unnest(t.postings) p) "
                              "or n <> cardinality(postings)").fetchone()
        left = conn.execute("select (select count(*) from token_stage) + (select count(*) from segment_stage)")\
            .fetchone()
    assert bounds == (0,)  # every segment's bounds and count hold its postings
    assert left == (0,)  # every batch taken over or deleted
    return [*chunks, *postings]


def _written_plainly(server) -> str:
    """A library holding /a then /b, each written without anything prepared."""
    url = fresh_database(server)
    plain = open_store(url)
    try:
        plain.write_documents(_docs("/a"))
        plain.write_documents(_docs("/b"))
    finally:
        plain.close()
    return url


def test_a_prepared_write_stores_what_a_plain_one_does_and_leaves_no_batch(pg_server, pg_url, monkeypatch):  # noqa: F811
    plain_url = _written_plainly(pg_server)
    used: list[str] = []
    original = terms._copy_tokenized
    monkeypatch.setattr(terms, "_copy_tokenized", lambda conn, rows, batch: (used.append(batch),
                                                                             original(conn, rows, batch))[1])
    store = open_store(pg_url)
    try:
        first, second = _docs("/a"), _docs("/b")
        store.prepare_writes(first)
        store.prepare_writes(second)  # two slices ahead, as a copy does
        store.write_documents(first)
        store.write_documents(second)
        assert len(used) == 2  # both statements read the staged tokens (/a's segments too; /b holds copies)
        store.prepare_writes(_docs("/c"))  # tokenized, then never written (a cancelled copy)
    finally:
        store.close()  # deletes that batch
    assert _stored(pg_url) == _stored(plain_url)


def test_a_batch_that_does_not_match_or_fails_falls_back_to_tokenizing_in_the_write(pg_server, pg_url,  # noqa: F811
                                                                                   monkeypatch):
    plain_url = _written_plainly(pg_server)
    store = open_store(pg_url)
    try:
        store.prepare_writes(_docs("/other"))  # not what is written next
        store.write_documents(_docs("/a"))

        def broken(self, texts, number):
            raise psycopg.OperationalError("the side connection went away")

        monkeypatch.setattr(tokens_ahead.TokensAhead, "_tokenize", broken)
        store.prepare_writes(_docs("/b"))
        store.write_documents(_docs("/b"))
    finally:
        store.close()
    assert _stored(pg_url) == _stored(plain_url)


def test_a_read_only_library_prepares_nothing(pg_url):  # noqa: F811
    open_store(pg_url).close()
    reader = open_store(pg_url, readonly=True)
    try:
        reader.prepare_writes(_docs("/a"))
        assert reader._ahead is None  # type: ignore[attr-defined]
    finally:
        reader.close()
    with pytest.raises(AssertionError):  # the helper sees a left-over batch
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("insert into token_stage values ('x', 1, 1, to_tsvector('a'), 1)")
        _stored(pg_url)


def test_batches_tokenized_at_once_take_their_ids_in_the_order_queued_and_a_failed_one_holds_none_up(
        pg_url, monkeypatch):  # noqa: F811
    """``WORKERS`` batches are tokenized at once, each on its own connection; their chunk ids are still taken in
    the order they were queued, a run each (the order the copy writes them), and a batch whose connection fails
    passes its turn on."""
    open_store(pg_url).close()  # the schema
    ahead = tokens_ahead.TokensAhead(pg_url, None)
    real = tokens_ahead.TokensAhead._connection
    calls = {"n": 0}

    def first_fails(self):
        calls["n"] += 1
        if calls["n"] == 1:
            raise psycopg.OperationalError("no connection for the first batch")
        return real(self)

    monkeypatch.setattr(tokens_ahead.TokensAhead, "_connection", first_fails)
    batches = [[f"{text} {n}" for text in TEXTS] * 20 for n in range(3)]
    try:
        for batch in batches:
            ahead.submit(batch)
        futures = [future for _, future in ahead._pending]
        for future in futures[1:]:
            future.result(timeout=60)  # not held up by the first
        assert ahead.take(batches[0]) is None  # the write tokenizes that one itself
        second, third = ahead.take(batches[1]), ahead.take(batches[2])
        assert second is not None and third is not None
        assert second.ids == list(range(second.ids[0], second.ids[0] + len(batches[1])))
        assert third.ids == list(range(second.ids[-1] + 1, second.ids[-1] + 1 + len(batches[2])))
    finally:
        ahead.close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select (select count(*) from token_stage) + (select count(*) from segment_stage)")\
            .fetchone() == (0,)  # taken, never written: deleted at close
