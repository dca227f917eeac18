"""The keyword lane's postings budget on a real FTS5 index: frequencies are sampled from a bounded number of rows,
exact for rare terms; where the budget does not bite the lane is exact BM25."""

from __future__ import annotations

import pytest

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.retrieve import keyword
from desktop_memory.retrieve.keyword import FIRST_ROWS, WINDOW_ROWS, WINDOWS, plan_terms, sampled_df
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.store import Store
from desktop_memory.store.search_reads import SearchReads

N = 4000


def _words(i: int) -> str:
    words = ["every"]
    if i % 2 == 0:
        words.append("half")
    if i % 40 == 0:
        words.append("fortieth")
    if i % 10 == 0:
        words.append("tenth")
    if i < 600:
        words.append("early")  # a topic of the first folder indexed only
    if i % 997 == 0:
        words.append("scarce")
    words.append(f"w{i % 500}")
    return " ".join(words)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Store:
    s = Store(tmp_path_factory.mktemp("kw") / "k.db")
    for d in range(N // 100):
        rows = [_words(d * 100 + i) for i in range(100)]
        s.write_document(path=f"/k/{d}.txt", kind="text", language=None, title=None, size=1, mtime=1,
                         content_hash=str(d), chunks=[ChunkDraft(t, Location(char_end=len(t))) for t in rows],
                         dedupe_keys=[f"{d}:{i}" for i in range(len(rows))])
    return s


@pytest.fixture
def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many doclist rows each sampling statement was allowed to read."""
    caps: list[int] = []
    real = SearchReads.window_doc_freq

    def recording(self, match, first, last, cap):
        caps.append(cap)
        return real(self, match, first, last, cap)

    monkeypatch.setattr(SearchReads, "window_doc_freq", recording)
    return caps


def test_rare_terms_are_counted_exactly(big, rows_read):
    assert sampled_df(big, "scarce") == len([i for i in range(N) if i % 997 == 0])
    assert sampled_df(big, "fortieth") == N // 40  # under FIRST_ROWS: one capped count
    assert sampled_df(big, "w7") == N // 500
    assert sampled_df(big, "absent") == 0
    assert len(rows_read) == 4  # one statement each
    assert sampled_df(big, "tenth") == N // 10  # above FIRST_ROWS, but no id range holds WINDOW_ROWS of them


def test_common_terms_are_estimated_from_a_bounded_sample(big, rows_read):
    every, half = sampled_df(big, "every"), sampled_df(big, "half")
    assert every == pytest.approx(N, rel=0.05) and half == pytest.approx(N / 2, rel=0.05)
    assert len(rows_read) == 2 * (1 + WINDOWS) and sum(rows_read) <= 2 * (FIRST_ROWS + WINDOWS * WINDOW_ROWS)
    # a word of one corner of the library is not taken for a library-wide one
    assert 600 <= sampled_df(big, "early") <= N / WINDOWS


def test_plan_keeps_the_rarest_within_the_budget(big):
    terms = ["every", "half", "fortieth", "scarce"]
    assert plan_terms(big, terms, 0) == (terms, [])
    assert plan_terms(big, terms, 10 * N) == (terms, [])
    assert plan_terms(big, terms, N) == (["half", "fortieth", "scarce"], ["every"])
    assert plan_terms(big, terms, 200) == (["fortieth", "scarce"], ["every", "half"])
    assert plan_terms(big, ["every", "half"], 10) == (["half"], ["every"])  # the rarest is always kept


@pytest.mark.parametrize("query", ["fortieth scarce w7", "half fortieth", "every half fortieth scarce w3"])
def test_the_budgeted_lane_is_exact_bm25_where_the_budget_does_not_bite(big, query):
    exact = fts_lane(big, query, 300)
    assert exact
    assert fts_lane(big, query, 300, term_budget=10 * N) == exact


def test_where_the_budget_bites_rare_hits_still_lead(big):
    exact = fts_lane(big, "every half scarce", 10)
    planned = fts_lane(big, "every half scarce", 10, term_budget=100)
    scarce = [cid for cid, _ in exact if cid in {c for c, _ in planned}]
    assert [c for c, _ in planned[:len(scarce)]] == scarce[:len(scarce)] and len(scarce) >= 4


def test_the_id_span_follows_the_content_version(big, tmp_path):
    s = Store(tmp_path / "s.db")
    assert sampled_df(s, "x") == 0.0  # an empty library
    s.write_document(path="/a.txt", kind="text", language=None, title=None, size=1, mtime=1, content_hash="a",
                     chunks=[ChunkDraft("x y", Location(char_end=3))], dedupe_keys=["a"])
    assert sampled_df(s, "x") == 1.0
    assert keyword._id_span(s)[1] >= keyword._id_span(s)[0]


def test_doc_freqs_are_exact_below_the_threshold_and_sampled_above(big, monkeypatch):
    stems = ["everi", "half", "fortieth", "scarc", "w7", "absent"]
    exact = big.reads.doc_freqs(stems)
    assert exact["everi"] == N and exact["half"] == N // 2
    assert keyword.doc_freqs(big, stems) == exact  # a library this size: every stem counted exactly
    counted: list[list[str]] = []
    real = SearchReads.doc_freqs

    def recording(self, asked):
        counted.append(list(asked))
        return real(self, asked)

    monkeypatch.setattr(SearchReads, "doc_freqs", recording)
    monkeypatch.setattr(keyword, "EXACT_DF_ROWS", 1000)
    got = keyword.doc_freqs(big, stems)
    assert got["everi"] == pytest.approx(N, rel=0.05) and got["half"] == pytest.approx(N / 2, rel=0.05)
    assert {k: got[k] for k in ("fortieth", "scarc", "w7")} == {k: exact[k] for k in ("fortieth", "scarc", "w7")}
    assert "absent" not in got
    assert not any("everi" in c or "half" in c for c in counted)  # the common stems' doclists were not walked


def test_remembered_frequencies_follow_the_library(tmp_path, rows_read):
    s = Store(tmp_path / "c.db")

    def add(name: str, n: int) -> None:
        rows = [f"tide {name} {i}" for i in range(n)]
        s.write_document(path=f"/{name}.txt", kind="text", language=None, title=None, size=1, mtime=1,
                         content_hash=name, chunks=[ChunkDraft(t, Location(char_end=len(t))) for t in rows],
                         dedupe_keys=[f"{name}{i}" for i in range(n)])

    add("a", 300)
    first = plan_terms(s, ["tides", "a"], 400)
    reads = len(rows_read)
    assert plan_terms(s, ["tides", "a"], 400) == first and len(rows_read) == reads  # remembered: nothing read
    assert keyword.doc_freqs(s, ["tide"]) == {"tide": 300} and len(rows_read) == reads  # the same stem
    add("b", 300)  # a write: the new content version is sampled afresh
    assert keyword.doc_freqs(s, ["tide"]) == {"tide": 600} and len(rows_read) > reads
