"""PDF text clean-up (printer's slugs, bar glyphs, margin numbers, running heads) and bookmark headings, on
synthetic pages and on the real eval PDFs that have them (freeculture.pdf: a proof copy with all of them)."""

from __future__ import annotations

import re
from pathlib import Path

from desktop_memory.chunking import chunk_document
from desktop_memory.config import ChunkSettings
from desktop_memory.context.packer import source_line
from desktop_memory.ingest.pdf_clean import clean_pages, place_headings
from tests.conftest import PDFS
from tests.support.chunk_contract import chunk_problems
from tests.support.pdf_in_process import extract_pdf_in_process


def test_slugs_bars_and_margin_numbers_go() -> None:
    page = "\n".join([
        "❚❘❙❚❘❙ ❚❘❙❚❘❙❚❘❙❚",
        "Real text on the page,",
        "and its second line with a bar❘ inside.",
        *[str(n) for n in range(1, 32)], "S32", "R33",
        "14773_01_1-174_r9jm.qxd 2/10/04 3:51 PM Page 5",
    ])
    glued = "the legiti14773_01_1-174_r9jm.qxd 2/10/04 3:51 PM Page 77"
    assert clean_pages([page, glued]) == [
        "Real text on the page,\nand its second line with a bar inside.", "the legiti"]


def test_short_number_lists_and_single_pages_stay() -> None:
    page = "Steps:\n1\n2\n3\nDone"  # fewer than five: a list, not margin numbering
    assert clean_pages([page]) == [page]


def test_running_heads_go_but_table_values_stay() -> None:
    pages = [f"{n} BOOK TITLE\nBody of page {n} with words.\nLayoff Permanent\nLayoff Permanent\n4TH PASS PAGES"
             for n in range(1, 9)]
    cleaned = clean_pages(pages)
    assert cleaned[0] == "Body of page 1 with words.\nLayoff Permanent\nLayoff Permanent"
    assert all("BOOK TITLE" not in p and "PASS" not in p for p in cleaned)


def test_bookmarks_are_placed_on_their_heading_line() -> None:
    pages = ["Cover", "Intro text\nChapter  One:\nThe Start\nbody"]
    assert place_headings([(0, "Chapter One: The Start", 1), (1, "Missing › here", 0), (0, "x", 9)], pages) == [
        (1, "Chapter One: The Start", 2, 11), (2, "Missing > here", 1, 0)]


def test_freeculture_is_clean_and_located_by_chapter(eval_dir: Path) -> None:
    doc = extract_pdf_in_process(str(PDFS / "freeculture.pdf"))
    assert not re.search(r"\.qxd|[❚❘❙]|4TH PASS PAGES|\nS32\n", doc.text)
    assert "Would Japan be better off with more lawyers?" in doc.text
    assert [h.title for h in doc.headings[:5]] == ["COVER", "CONTENTS", "PREFACE", "INTRODUCTION", '"PIRACY"']
    chunks = chunk_document(doc, ChunkSettings())
    assert chunk_problems(doc, chunks, ChunkSettings()) == []
    hit = next(c for c in chunks if "Would Japan be better off with more lawyers?" in c.text)
    assert hit.location.describe() == '"PIRACY" › Chapter 1: Creators · p. 41'
    assert source_line("freeculture.pdf", hit.location) == (
        '[Source: freeculture.pdf § "PIRACY" › Chapter 1: Creators · p. 41]')
    assert hit.text.startswith('"PIRACY" › Chapter 1: Creators\n\n')  # the breadcrumb reaches the embedding


def test_tables_and_other_pdfs_keep_their_text(eval_dir: Path) -> None:
    warn = extract_pdf_in_process(str(PDFS / "WARN-Report-for-7-1-2015-to-03-25-2016.pdf"))
    assert warn.text.count("Layoff Permanent") > 100
    fed = extract_pdf_in_process(str(PDFS / "federal-register-2020-17221.pdf"))
    assert "(2) In the Operating Procedures chapter," in fed.text
    assert "jbell on DSKJLSW7X2PROD with PROPOSALS" not in fed.text  # the printing office's stamp on every page


def test_page_numbers_and_chapter_heads_that_carry_them_go() -> None:
    """Issue 23 §7: a chapter's own head ("“PROPERTY” 109") is on too few pages to be a running head, but it
    carries the page's printed number (index + a fixed offset), as does a bare page number."""
    chapters = ["“PIRACY”", "“PROPERTY”", "PUZZLES", "BALANCES"]  # each heads 2 of 16 pages: not "running"
    pages = [f"Body text of page {i} that is long enough to be prose, not furniture at all.\n"
             + (f"{chapters[i // 4]} {i + 100}" if i % 2 else f"{i + 100}") for i in range(16)]
    pages[0] = "CONTENTS\n“PROPERTY” 81\nINDEX 333"  # a contents page: numbers that are not its own stay
    cleaned = clean_pages(pages)
    assert cleaned[0] == pages[0]
    assert all(p == f"Body text of page {i} that is long enough to be prose, not furniture at all."
               for i, p in enumerate(cleaned[1:], 1))
    front = [f"PREFACE\nText of the preface, page {n}." if n == 1 else f"{r} PREFACE\nMore preface text {n}."
             for n, r in enumerate(["", "i", "ii", "iii", "iv"])]
    assert all("PREFACE" not in p for p in clean_pages(front)[2:])


def test_a_word_hyphenated_across_a_page_break_is_joined() -> None:
    pages = ["it becomes more and more im-", "portant, to maintain it.", "Self-", "Made men"]
    assert clean_pages(pages) == ["it becomes more and more important,", "to maintain it.", "Self-", "Made men"]


def test_freeculture_has_no_page_furniture_in_its_passages(eval_dir: Path) -> None:
    # the test copy holds the book's first 48 pages (tests/data/eval/README.md): running heads with page numbers
    # in the front matter and chapter 1; the word joined across a page break is proven on pages cut the same way
    # (test_a_word_hyphenated_across_a_page_break_is_joined) — the book's own "im-/portant" is on page 109
    doc = extract_pdf_in_process(str(PDFS / "freeculture.pdf"))
    assert not re.search(r"\nINTRODUCTION 5\n|\n“PIRACY” 27\n|\nxiv PREFACE\n", doc.text)
    assert "“PROPERTY” 81" in doc.text  # the contents page keeps its page references


def _freeculture_pages() -> list[str]:
    """Every page of freeculture.pdf as the PDF worker extracts it (pypdfium2 + clean_page_text), before
    clean_pages: tests/data/issue33/freeculture_pages.json.gz (the test copy of the PDF holds 48 pages only)."""
    import gzip
    import json

    path = Path(__file__).parents[2] / "data" / "issue33" / "freeculture_pages.json.gz"
    pages: list[str] = json.loads(gzip.decompress(path.read_bytes()))
    return pages


def test_a_chapter_head_with_its_page_number_goes_from_mid_page_too() -> None:
    """Issue 33: "“PROPERTY” 121" (p. 133) and "“PROPERTY” 141" (p. 153) sat above a margin number column, mid-page
    in text order, and survived; so did "“PIRACY” 77" (p. 91)."""
    raw = _freeculture_pages()
    assert "“PROPERTY” 121" in raw[132] and "“PROPERTY” 141" in raw[152]
    pages = clean_pages(raw)
    assert len(pages) == len(raw) == 352
    for n, head in ((133, "“PROPERTY” 121"), (153, "“PROPERTY” 141"), (91, "“PIRACY” 77")):
        assert head not in pages[n - 1], n
    heads = [(n, line) for n, page in enumerate(pages, start=1) for line in page.split("\n")
             if re.fullmatch(r"“[A-Z]+” \d+|\d+ FREE CULTURE", line.strip())]
    assert heads == [(9, "“PIRACY” 15"), (10, "“PROPERTY” 81")]  # only the contents' page references stay


def test_a_running_head_glued_to_the_last_words_of_a_page_is_cut_off() -> None:
    pages = clean_pages(_freeculture_pages())
    assert not [n for n, page in enumerate(pages, start=1) if re.search(r"\w\d+ FREE CULTURE", page)]
    assert pages[139].endswith("are “justified.”") and pages[140].startswith("My argument is about")
    assert pages[23].endswith("commercial creativity.")
    assert pages[117].endswith("Myers and Dream-")  # "DreamWorks": a capital after the break is not joined
