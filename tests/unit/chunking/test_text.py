"""Text and PDF chunker: windows, overlap, caps, offsets, coverage (examples + hypothesis properties)."""

from __future__ import annotations

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.chunking import chunk_document
from desktop_memory.chunking.core import Limits, find_break, window_spans
from desktop_memory.config import ChunkSettings
from desktop_memory.models import ExtractedDoc
from tests.support.chunk_contract import chunk_problems

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "naïve", "日本語", "x", "1234", "end.", "why?", "(a,b)"])


@st.composite
def chunk_settings(draw) -> ChunkSettings:
    target = draw(st.integers(10, 400))
    return ChunkSettings(
        target_chars=target,
        max_chars=draw(st.integers(max(1, target // 2), 600)),  # max < target is clamped, still valid
        overlap_chars=draw(st.integers(0, 150)),
        code_lines=draw(st.integers(1, 40)),
        code_overlap_lines=draw(st.integers(0, 8)),
    )


@st.composite
def prose(draw) -> str:
    """Paragraphs of words, odd whitespace, very long tokens (URLs), Unicode."""
    parts = []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["para", "para", "blank", "token", "ws", "line"]))
        if kind == "para":
            parts.append(" ".join(draw(st.lists(WORDS, min_size=1, max_size=60))))
        elif kind == "token":
            parts.append("https://example.com/" + "a" * draw(st.integers(1, 1500)))
        elif kind == "ws":
            parts.append(draw(st.sampled_from([" \t ", "\n\n\n", "\u00a0", "\u3000 ", "\t\n \n"])))
        elif kind == "line":
            parts.append(draw(st.text(max_size=80)))
        else:
            parts.append("")
    return draw(st.sampled_from(["\n\n", "\n", " "])).join(parts)


def _check(doc: ExtractedDoc, cfg: ChunkSettings):
    chunks = chunk_document(doc, cfg)
    assert chunk_problems(doc, chunks, cfg) == []
    assert chunk_document(doc, cfg) == chunks  # deterministic
    return chunks


FAST = hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(text=st.text(max_size=3000), cfg=chunk_settings())
def test_arbitrary_text_invariants(text: str, cfg: ChunkSettings) -> None:
    _check(ExtractedDoc(kind="text", text=text), cfg)


@FAST
@given(text=prose(), cfg=chunk_settings())
def test_prose_invariants(text: str, cfg: ChunkSettings) -> None:
    _check(ExtractedDoc(kind="text", text=text), cfg)


@FAST
@given(pages=st.lists(prose(), min_size=1, max_size=6), cfg=chunk_settings())
def test_pdf_chunks_stay_on_their_page(pages: list[str], cfg: ChunkSettings) -> None:
    from desktop_memory.ingest.pdf import build_pdf_doc
    from desktop_memory.ingest.pdf_worker import clean_page_text

    pages = [clean_page_text(p) for p in pages]  # as the worker delivers them: no form feeds inside a page
    doc = build_pdf_doc({"ok": True, "pages": pages, "title": None, "warnings": []})
    chunks = _check(doc, cfg)
    for c in chunks:
        _, start, end = doc.pages[c.location.page - 1]
        assert start <= c.location.char_start < c.location.char_end <= end
        assert "\f" not in c.text


def test_short_text_is_one_chunk_with_lines() -> None:
    doc = ExtractedDoc(kind="text", text="\n\n  hello world  \nsecond line\n\n")
    [c] = chunk_document(doc, ChunkSettings())
    assert c.text == "hello world  \nsecond line"
    assert (c.location.line_start, c.location.line_end) == (3, 4)
    assert doc.text[c.location.char_start:c.location.char_end] == c.text


def test_windows_break_at_paragraphs_with_overlap() -> None:
    paras = [f"Paragraph {i} " + "word " * 40 + "end." for i in range(12)]
    doc = ExtractedDoc(kind="text", text="\n\n".join(paras))
    cfg = ChunkSettings(target_chars=600, max_chars=800, overlap_chars=150)
    chunks = _check(doc, cfg)
    assert len(chunks) > 3
    assert all(len(c.text) <= 800 for c in chunks)
    for c in chunks:  # every window starts at a paragraph or sentence start, never mid-word
        start = c.location.char_start
        assert start == 0 or doc.text[start - 1].isspace()
    # consecutive windows overlap (the overlap is at most overlap_chars long)
    overlaps = [a.location.char_end - b.location.char_start for a, b in zip(chunks, chunks[1:])]
    assert any(o > 0 for o in overlaps)
    assert all(o <= 150 for o in overlaps)


def test_balanced_windows_avoid_a_tiny_tail() -> None:
    text = " ".join(["lorem"] * 190)  # 1139 chars: two ~600-char windows, not 1000 + 140
    chunks = _check(ExtractedDoc(kind="text", text=text), ChunkSettings())
    assert len(chunks) == 2
    assert min(len(c.text) for c in chunks) > 400


def test_huge_token_is_hard_split_under_the_cap() -> None:
    text = "start " + "x" * 5000 + " end"
    cfg = ChunkSettings(target_chars=1000, max_chars=1400)
    chunks = _check(ExtractedDoc(kind="text", text=text), cfg)
    assert all(len(c.text) <= 1400 for c in chunks)
    assert "".join(c.text for c in chunks).count("x") >= 5000


def test_find_break_prefers_paragraph_then_sentence() -> None:
    text = "One. Two three.\n\nFour five six. Seven eight"
    assert find_break(text, 1, len(text)) == text.index("\n\n")
    assert find_break(text, 18, len(text)) == text.index("six.") + 4


def test_window_spans_empty_and_whitespace() -> None:
    lim = Limits.from_settings(ChunkSettings())
    assert window_spans("", 0, 0, lim) == []
    assert window_spans(" \n\t ", 0, 4, lim) == []
    assert chunk_document(ExtractedDoc(kind="text", text="   \n\n "), ChunkSettings()) == []


def test_limits_are_clamped() -> None:
    lim = Limits.from_settings(ChunkSettings(target_chars=5000, max_chars=100, overlap_chars=10_000))
    assert lim.target == 100 and lim.maxc == 100 and lim.overlap == 50
    lim = Limits.from_settings(ChunkSettings(target_chars=0, max_chars=0, overlap_chars=-3))
    assert lim.target == 1 and lim.maxc == 1 and lim.overlap == 0
