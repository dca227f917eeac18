"""Keyword search inside text written without spaces: real Japanese (Kusamakura) through the real pipeline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import SearchFilters
from desktop_memory.service import MemoryService
from desktop_memory.store import SCHEMA_VERSION, Store
from desktop_memory.store.cjk import bigrams, grams_text, query_grams
from desktop_memory.store.migrations import MIGRATIONS

DATA = Path(__file__).resolve().parents[2] / "data" / "kusamakura"


@pytest.fixture()
def library(tmp_path):
    root = tmp_path / "ja"
    shutil.copytree(DATA, root)
    (root / "README.md").unlink()
    (root / "notes.md").write_text("# Notes\n\nEnglish text about hot springs and Tokyo.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    svc.index_paths([root])
    yield svc, root
    svc.close()


@pytest.mark.parametrize(("query", "expected"), [
    ("東京", "ch05-tokyo.txt"),  # a two-character word inside 「失礼ですが旦那は、やっぱり東京ですか」
    ("住みにくい", "ch01-yamaji.txt"),  # inside 「とかくに人の世は住みにくい。」
    ("湯槽", "ch07-onsen.txt"),
    ("御影で敷き詰めた", "ch07-onsen.txt"),
])
def test_a_word_inside_a_japanese_sentence_is_found(library, query, expected):
    svc, _root = library
    for backend in ("keyword", "hybrid"):
        out = svc.search_outcome(query, backend=backend, top_k=3)
        assert out.results, (query, backend)
        assert Path(out.results[0].source).name == expected, (query, backend)


def test_japanese_search_respects_filters_and_ignores_unrelated_text(library):
    svc, root = library
    only_notes = SearchFilters(path_glob=str(root / "notes.md"))
    assert svc.search_outcome("東京", backend="keyword", filters=only_notes).results == []
    assert svc.search_outcome("ドイツ", backend="keyword").results == []  # a word none of the files holds


def test_reindexing_and_removing_keeps_the_bigram_index_in_step(library):
    svc, root = library
    (root / "ch05-tokyo.txt").write_text("「大阪ですか」\n", encoding="utf-8")
    svc.index_paths([root])
    assert svc.search_outcome("東京", backend="keyword").results == []
    assert Path(svc.search_outcome("大阪", backend="keyword").results[0].source).name == "ch05-tokyo.txt"
    with svc.reading() as store:
        rows = store.conn.execute("select count(*) from chunks_cjk").fetchone()[0]
        live = sum(1 for (t,) in store.conn.execute("select text from chunks where dup_of is null") if grams_text(t))
    assert rows == live


def test_bigrams_of_runs():
    assert bigrams("東京都") == ["東京", "京都"]
    assert bigrams("湯") == ["湯"]
    assert grams_text("Tokyo 東京 and ｶﾀｶﾅ") == "東京 カタ タカ カナ"  # half-width katakana folded (NFKC)
    assert grams_text("plain English") == ""
    assert query_grams("ภาษาไทย")[:2] == ["ภา", "าษ"]


def test_migration_fills_the_bigram_index_of_an_older_database(tmp_path):
    db = tmp_path / "old.db"
    store = Store(db)
    text = (DATA / "ch05-tokyo.txt").read_text(encoding="utf-8")
    from desktop_memory.models import ChunkDraft, Location

    store.write_document(path="/x/ch05.txt", kind="text", language=None, title=None, size=1, mtime=1,
                         content_hash="h", chunks=[ChunkDraft(text, Location(char_end=len(text)))], dedupe_keys=["k"])
    # the bigram table as if the file came from the version before it: dropped, then the migration step runs
    step = next(m for m in MIGRATIONS if getattr(m, "__name__", "") == "_migration_cjk")
    store.conn.execute("drop table chunks_cjk")
    with store.conn:
        step(store.conn)
    assert store.conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
    hits = store.conn.execute("select rowid from chunks_cjk where chunks_cjk match '\"東京\"'").fetchall()
    assert len(hits) == 1
    store.close()


def test_text_below_thai_is_answered_without_normalising_and_as_normalising_would():
    """``grams_text`` skips NFKC for text whose characters are all below U+0E00; normalising any of them (alone,
    or composed with a combining mark) never yields a character of a run."""
    import unicodedata

    from desktop_memory.store.cjk import _RUN

    below = [chr(cp) for cp in range(0x80, 0x0E00)]
    for text in [*below, *(c + "\u0323" for c in "aeiouAEIOU\u03b1\u0430")]:
        assert not _RUN.search(unicodedata.normalize("NFKC", text)), repr(text)
        assert grams_text(text) == ""
    assert grams_text("caf\u00e9 \u6771\u4eac") == "\u6771\u4eac"  # one character at or above it: cut as before
