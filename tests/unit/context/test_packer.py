"""Prompt-context packing: rank order, budget, [Source: ...] lines, what was dropped."""

from __future__ import annotations

from desktop_memory.context import build_context, estimate_tokens, source_line
from desktop_memory.models import LaneHit, Location, SearchResult


def _result(rank: int, text: str, **loc) -> SearchResult:
    return SearchResult(rank=rank, score=1.0 / rank, chunk_id=rank, doc_id=1, source=f"/docs/f{rank}.md",
                        kind="markdown", text=text, location=Location(**loc), lanes={"fts": LaneHit(rank, 1.0)})


def test_source_line_formats_all_parts():
    loc = Location(heading_path=("Tutorial", "Query"), line_start=10, line_end=24)
    assert source_line("/a/b.md", loc) == "[Source: /a/b.md § Tutorial › Query · lines 10–24]"
    assert source_line("/a/b.txt", Location()) == "[Source: /a/b.txt]"
    # a page or slide is the location; line numbers (an older index's PDF rows still hold them) are not shown
    pdf = Location(heading_path=("Intro",), page=3, line_start=10, line_end=24)
    assert source_line("/a/b.pdf", pdf) == "[Source: /a/b.pdf § Intro · p. 3]" and pdf.describe() == "Intro · p. 3"
    deck = Location(heading_path=("Results",), slide=4)
    assert source_line("/a/d.pptx", deck) == "[Source: /a/d.pptx § Results · slide 4]"
    assert deck.to_dict()["slide"] == 4 and deck.stored_page == 4
    row = Location.from_stored("slides", heading_path=("Results",), page=4, line_start=None, line_end=None,
                               char_start=0, char_end=9)
    assert (row.slide, row.page) == (4, None)


def test_breadcrumb_is_not_repeated_in_the_passage():
    r = _result(1, "Tutorial › Query\n\nBody text here.", heading_path=("Tutorial", "Query"))
    rep = build_context([r], 500, path_style="absolute")
    assert rep.text == "[Source: /docs/f1.md § Tutorial › Query]\nBody text here."


def test_packs_in_rank_order_skips_what_does_not_fit():
    big = "word " * 400  # ~500 tokens
    results = [_result(1, "first small passage"), _result(2, big), _result(3, "third small passage")]
    rep = build_context(results, 100)
    assert [i.rank for i in rep.items] == [1, 3]
    assert [d.rank for d in rep.dropped] == [2]
    assert rep.tokens_used == estimate_tokens(rep.text) <= 100
    assert rep.text.index("f1.md") < rep.text.index("f3.md")
    d = rep.to_dict()
    assert set(d) == {"text", "tokens_used", "budget", "items", "dropped"} and d["budget"] == 100


def test_zero_budget_and_no_results():
    assert build_context([], 100).text == ""
    rep = build_context([_result(1, "x")], 0)
    assert rep.items == [] and len(rep.dropped) == 1


def test_token_estimate_counts_non_ascii_heavier():
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("日本語") == 2
    assert estimate_tokens("") == 0


def test_source_lines_are_relative_to_the_indexed_folder_by_default():
    r = _result(1, "Body.", heading_path=("Intro",))
    rep = build_context([r], 500, roots=["/docs"])
    assert rep.text.startswith("[Source: docs/f1.md § Intro]")
    assert rep.items[0].source == "/docs/f1.md" and rep.items[0].shown_source == "docs/f1.md"
    assert build_context([r], 500, roots=["/docs"], path_style="name").text.startswith("[Source: f1.md § Intro]")
    assert build_context([r], 500, roots=["/docs"], path_style="absolute").text.startswith("[Source: /docs/f1.md")
