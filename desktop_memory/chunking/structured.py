"""Chunking for documents whose reader knows the structure: PDFs, Word/ODF/RTF, slides, e-books, web pages.

The reader hands over the text plus ``headings`` (level, title, where) and, for PDFs and slides, the span of
each page or slide. Sections run from one heading (levels 1–3) to the next, exactly like Markdown sections, and
are packed or windowed by the same code (``markdown.group_sections``), so a Word file and its Markdown export
chunk alike. Chunks never cross a page or slide; a heading stays in force across pages until the next one.

Locations carry the heading path and the page or slide, never line numbers: lines of text we laid out
ourselves name nothing a person can find in the original file.
"""

from __future__ import annotations

from ..config import ChunkSettings
from ..models import ChunkDraft, DocHeading, ExtractedDoc, Location
from .core import Limits, format_breadcrumb, trim, window_spans, with_breadcrumb
from .markdown import SPLIT_LEVELS, Section, group_sections


def split_sections(text: str, headings: list[DocHeading], start: int, end: int, *,
                   path: tuple[str, ...], levels: dict[int, str]) -> tuple[list[Section], tuple[str, ...]]:
    """Sections of text[start:end]; ``levels`` is the heading state carried in from earlier units (updated)."""
    sections: list[Section] = []
    head_start = body_start = start
    for h in headings:
        if h.level > SPLIT_LEVELS or not (start <= h.start < end):
            continue
        sections.append(Section(path, head_start, body_start, h.start))
        for level in [k for k in levels if k >= h.level]:
            del levels[level]
        levels[h.level] = h.title
        path = tuple(levels[k] for k in sorted(levels))
        head_start, body_start = h.start, min(_line_end(text, h), end)
    sections.append(Section(path, head_start, body_start, end))
    for s in sections:
        a, b = trim(text, s.body_start, s.end)
        s.size = max(0, b - a)
    return sections, path


def _line_end(text: str, h: DocHeading) -> int:
    """Where the body after a heading starts: past its line (and newline), or at it for a position marker."""
    if h.end <= h.start:
        return h.start
    return h.end + 1 if text[h.end:h.end + 1] == "\n" else h.end


def chunk_structured(doc: ExtractedDoc, settings: ChunkSettings) -> list[ChunkDraft]:
    """Chunks per page/slide (or for the whole text) by heading sections, breadcrumbs first."""
    text = doc.text
    lim = Limits.from_settings(settings)
    units: list[tuple[int | None, int, int]] = list(doc.pages) if doc.pages else [(None, 0, len(text))]
    headings = sorted(doc.headings, key=lambda h: h.start)
    slides = doc.kind == "slides"
    levels: dict[int, str] = {}
    path: tuple[str, ...] = ()
    out: list[ChunkDraft] = []
    for number, start, end in units:
        if slides:
            levels, path = {}, ()  # a slide's title belongs to that slide only
        sections, path = split_sections(text, headings, start, end, path=path, levels=levels)
        before = len(out)
        for g in group_sections(text, sections, lim):
            crumb = format_breadcrumb(g.crumb)
            spans = [trim(text, g.start, g.end)] if len(g.members) > 1 else window_spans(text, g.start, g.end, lim)
            for cs, ce in spans:
                if ce <= cs:
                    continue
                loc = Location(heading_path=tuple(g.crumb), char_start=cs, char_end=ce,
                               page=None if slides else number, slide=number if slides else None)
                out.append(ChunkDraft(text=with_breadcrumb(crumb, text[cs:ce]), location=loc))
        if len(out) == before and number is not None and text[start:end].strip():
            # a page or slide of headings only (a title slide): its text is the chunk, under its own path
            crumb = format_breadcrumb(path)
            for cs, ce in window_spans(text, start, end, lim):
                loc = Location(heading_path=path, char_start=cs, char_end=ce,
                               page=None if slides else number, slide=number if slides else None)
                out.append(ChunkDraft(text=with_breadcrumb(crumb, text[cs:ce]), location=loc))
    if not out and text.strip():  # headings only: still findable
        for cs, ce in window_spans(text, 0, len(text), lim):
            out.append(ChunkDraft(text=text[cs:ce], location=Location(char_start=cs, char_end=ce)))
    return out
