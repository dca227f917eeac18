"""The chunker's contract checked on real output: the tests' oracle (handy when debugging odd documents too).

``chunk_problems`` returns human-readable violations (empty list = all good). The contract is stated in
``core``'s docstring; coverage allows exactly two gaps: Markdown front matter and the heading lines (levels
1–3) that open a section, which are represented by breadcrumbs instead.
"""

from __future__ import annotations

from desktop_memory.chunking.core import BREADCRUMB_MAX_CHARS, Limits, LineIndex, format_breadcrumb
from desktop_memory.chunking.markdown import SPLIT_LEVELS
from desktop_memory.chunking.mdparse import front_matter_end, iter_headings
from desktop_memory.config import ChunkSettings
from desktop_memory.models import LINE_KINDS, ChunkDraft, ExtractedDoc


def chunk_body(chunk: ChunkDraft) -> str:
    """The chunk text without its breadcrumb line (what maps back to the document)."""
    crumb = format_breadcrumb(chunk.location.heading_path) if chunk.location.heading_path else ""
    if crumb and chunk.text.startswith(crumb + "\n\n"):
        return chunk.text[len(crumb) + 2:]
    return chunk.text


def allowed_gaps(doc: ExtractedDoc) -> list[tuple[int, int]]:
    """Ranges of doc.text that chunks may leave out."""
    if doc.kind != "markdown":  # structured readers: their heading lines (breadcrumbs carry them)
        return [(h.start, h.end) for h in doc.headings if h.level <= SPLIT_LEVELS and h.end > h.start]
    fm = front_matter_end(doc.text)
    gaps = [(0, fm)] if fm else []
    gaps += [(h.start, h.end) for h in iter_headings(doc.text, fm) if h.level <= SPLIT_LEVELS]
    return gaps


def chunk_problems(doc: ExtractedDoc, chunks: list[ChunkDraft], settings: ChunkSettings) -> list[str]:
    lim = Limits.from_settings(settings)
    text = doc.text
    lines = LineIndex(text)
    problems: list[str] = []
    for i, c in enumerate(chunks):
        problems += [f"chunk {i}: {p}" for p in _one_chunk(doc, c, lim, lines)]
    problems += _coverage(doc, chunks)
    return problems


def _one_chunk(doc: ExtractedDoc, c: ChunkDraft, lim: Limits, lines: LineIndex) -> list[str]:
    text, loc = doc.text, c.location
    out: list[str] = []
    cs, ce = loc.char_start, loc.char_end
    if not (0 <= cs < ce <= len(text)):
        return [f"bad offsets {cs}:{ce}"]
    crumb = format_breadcrumb(loc.heading_path) if loc.heading_path else ""
    if crumb and not c.text.startswith(crumb + "\n\n"):
        out.append("text does not start with its breadcrumb line")
    body = chunk_body(c)
    if body != text[cs:ce]:
        out.append(f"body != text[{cs}:{ce}]")
    if not body.strip():
        out.append("empty body")
    if doc.kind == "code":
        if body != body.rstrip() or body.startswith("\n"):
            out.append("code body not trimmed")
    elif body != body.strip():
        out.append("body not stripped")
    if len(body) > lim.maxc:
        out.append(f"body {len(body)} > max_chars {lim.maxc}")
    if len(c.text) > lim.maxc + BREADCRUMB_MAX_CHARS + 2:
        out.append("text over the cap")
    if doc.kind in LINE_KINDS:
        if loc.line_start != text.count("\n", 0, cs) + 1 or loc.line_end != text.count("\n", 0, ce) + 1:
            out.append(f"lines {loc.line_start}-{loc.line_end} do not match offsets")
    elif loc.line_start is not None or loc.line_end is not None:
        out.append(f"line numbers on a {doc.kind} chunk")
    if doc.pages:
        unit = loc.slide if doc.kind == "slides" else loc.page
        page = next((p for p in doc.pages if p[0] == unit), None)
        if page is None or not (page[1] <= cs and ce <= page[2]):
            out.append(f"chunk not inside page/slide {unit}")
    return out


def _coverage(doc: ExtractedDoc, chunks: list[ChunkDraft]) -> list[str]:
    text = doc.text
    covered = bytearray(len(text) + 1)
    for start, end in [(c.location.char_start, c.location.char_end) for c in chunks] + allowed_gaps(doc):
        covered[start:end] = b"\x01" * max(0, end - start)
    missing = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    if not missing:
        return []
    first = missing[0]
    return [f"{len(missing)} non-space chars not covered, first at {first}: {text[first:first + 40]!r}"]
