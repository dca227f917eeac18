"""Overlapping or adjacent passages of one file are one block in the packed context (issue 33, window item 4)."""

from __future__ import annotations

from desktop_memory.context.packer import build_context, merge_passages
from desktop_memory.models import Location, SearchResult

DOC = ("Alpha sentence one. Beta sentence two is here. Gamma sentence three follows. Delta sentence four ends it. "
       "Epsilon five.")


def _r(rank: int, start: int, end: int, source: str = "/lib/a.txt", page: int | None = None) -> SearchResult:
    loc = Location((), page, 1 if page is None else None, 1 if page is None else None, start, end)
    return SearchResult(rank=rank, score=1.0 / rank, chunk_id=rank, doc_id=1, source=source, kind="text",
                        text=DOC[start:end], location=loc, lanes={})


def test_overlapping_passages_merge_with_the_shared_text_once() -> None:
    rep = build_context([_r(1, 40, 100), _r(2, 0, 60)], 10_000, roots=["/lib"])
    assert rep.text.count("[Source: lib/a.txt") == 1
    assert rep.text.endswith(DOC[0:100])  # one stretch, in document order
    assert len(rep.items) == 2 and not rep.dropped
    assert rep.items[0].header == rep.items[1].header  # both name the merged place


def test_contained_adjacent_and_distant_passages() -> None:
    a, b = Location(char_start=0, char_end=50), Location(char_start=10, char_end=30)
    assert merge_passages(a, DOC[0:50], b, DOC[10:30]) == (Location(char_start=0, char_end=50), DOC[0:50])
    merged = merge_passages(Location(char_start=0, char_end=20), DOC[0:20], Location(char_start=21, char_end=47),
                            DOC[21:47])
    assert merged is not None and merged[1] == DOC[0:20] + "\n" + DOC[21:47]  # touching: one block
    assert merge_passages(Location(char_start=0, char_end=20), DOC[0:20], Location(char_start=60, char_end=90),
                          DOC[60:90]) is None  # apart: two blocks


def test_other_files_and_other_pages_stay_apart() -> None:
    rep = build_context([_r(1, 0, 60), _r(2, 40, 100, source="/lib/b.txt")], 10_000, roots=["/lib"])
    assert rep.text.count("[Source: ") == 2
    rep = build_context([_r(1, 0, 60, page=1), _r(2, 40, 100, page=2)], 10_000, roots=["/lib"])
    assert rep.text.count("[Source: ") == 2  # each names its own page


def test_a_merge_costs_only_what_it_adds_and_respects_the_budget() -> None:
    alone = build_context([_r(1, 0, 60)], 10_000)
    both = build_context([_r(1, 0, 60), _r(2, 40, 100)], 10_000)
    assert both.items[1].tokens < alone.items[0].tokens
    tight = build_context([_r(1, 0, 60), _r(2, 40, 100)], alone.tokens_used)
    assert [i.rank for i in tight.items] == [1] and [d.rank for d in tight.dropped] == [2]
