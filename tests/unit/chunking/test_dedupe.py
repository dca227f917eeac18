"""Duplicate keys: boilerplate under different headings collapses; real differences (digits) do not."""

from __future__ import annotations

from desktop_memory.chunking import chunk_document, chunk_key, dedupe_key, dedupe_within
from desktop_memory.chunking.dedupe import normalise_for_key
from desktop_memory.config import ChunkSettings
from desktop_memory.models import ChunkDraft, ExtractedDoc, Location

BOILER = "/// note\n\nThis page is part of the docs. Edit it on GitHub.\n\n///"


def test_key_ignores_case_and_whitespace_but_keeps_digits() -> None:
    assert dedupe_key("Hello   World\n") == dedupe_key("hello world")
    assert dedupe_key("version 1.2") != dedupe_key("version 1.3")
    assert dedupe_key("ﬁle") == dedupe_key("file")  # NFKC folds ligatures
    assert len(dedupe_key("x")) == 32


def test_breadcrumb_and_heading_lines_excluded_for_markdown() -> None:
    a = chunk_document(ExtractedDoc(kind="markdown", text=f"# Alpha\n\n## Usage\n\n{BOILER}\n"), ChunkSettings())
    b = chunk_document(ExtractedDoc(kind="markdown", text=f"# Beta\n\n## Notes\n\n{BOILER}\n"), ChunkSettings())
    assert a[0].text != b[0].text  # different breadcrumbs and headings ...
    assert chunk_key(a[0]) == chunk_key(b[0])  # ... same boilerplate key
    assert normalise_for_key(a[0].text, "Alpha › Usage") == normalise_for_key(BOILER)


def test_text_chunks_use_the_whole_text() -> None:
    c = ChunkDraft(text="First line\n\nrest", location=Location(char_start=0, char_end=16))
    assert chunk_key(c) == dedupe_key("First line\n\nrest")
    assert chunk_key(c) != dedupe_key("rest")


def _md_chunk(path: tuple[str, ...], body: str, start: int) -> ChunkDraft:
    crumb = " › ".join(path)
    loc = Location(heading_path=path, char_start=start, char_end=start + len(body))
    return ChunkDraft(text=f"{crumb}\n\n{body}", location=loc)


def test_dedupe_within_drops_repeats_and_counts() -> None:
    chunks = [
        _md_chunk(("Doc", "One"), BOILER, 0),
        _md_chunk(("Doc", "Big"), "x" * 900, 100),
        _md_chunk(("Doc", "Two"), BOILER.replace("\n\n", "\n"), 1000),  # same words, other spacing
        _md_chunk(("Doc", "Three"), "## Three\n\n" + BOILER, 2000),  # heading line inside the body
    ]
    kept, dropped = dedupe_within(chunks)
    assert dropped == 2
    assert kept == chunks[:2]  # order preserved, first occurrence kept
    assert dedupe_within([]) == ([], 0)
