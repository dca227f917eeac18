"""The keyword lane's document-frequency sampling on a PostgreSQL library (``window_doc_freq``): a one-word
expression is counted exactly from its segments (past the cap too, the window's end as the last id seen), a
one-phrase expression walks its postings in id order and stops at the cap as the general path over the whole match
set does (store/postgres/reads.py)."""

from __future__ import annotations

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.store.open import open_store
from desktop_memory.store.postgres import reads
from tests.support.postgres import pg_server, pg_url  # noqa: F401

TEXTS = ["blood pressure rises", "the blood bank", "pressure of blood", "t cell counts", "a t cell and a b cell",
         "cells divide", "blood pressure falls again", "nothing here"] * 4


def test_one_word_or_phrase_windows_answer_as_the_general_path(pg_url, monkeypatch):  # noqa: F811
    store = open_store(pg_url)
    try:
        for i, text in enumerate(TEXTS):
            store.write_document(path=f"/d{i}.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                                 content_hash=str(i), chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                                 dedupe_keys=[str(i)])
        lo, hi = store.reads.chunk_id_span()
        cases = [(m, first, last, cap) for m in ('"blood"', '"blood pressure"', '"t cell"', '"cell"', '"absent"')
                 for first, last, cap in ((lo, hi, 100), (lo, hi, 3), (lo + 5, hi - 4, 2), (hi + 1, hi + 9, 5))]
        fast = [store.reads.window_doc_freq(*c) for c in cases]
        assert reads._one_term_window(store.conn, '"blood" OR "cell"', lo, hi, 5) is None  # not one term: general
        monkeypatch.setattr(reads, "_one_term_window", lambda *a: None)
        general = [store.reads.window_doc_freq(*c) for c in cases]
        whole = [store.reads.window_doc_freq(m, first, last, 10 ** 6) for m, first, last, _ in cases]
        for (match, first, last, _), got, capped, exact in zip(cases, fast, general, whole, strict=True):
            if " " in match:  # a phrase: walked and capped as the general path
                assert got == capped
            else:  # a word: its exact count, the whole window seen
                assert got == ((exact[0], last) if exact[0] else (0, first - 1))
        assert any(n > cap for (_, _, _, cap), (n, _) in zip(cases, fast, strict=True))  # counted past the cap
        assert any(n == cap for (m, _, _, cap), (n, _) in zip(cases, fast, strict=True) if " " in m)  # a phrase's
    finally:
        store.close()
