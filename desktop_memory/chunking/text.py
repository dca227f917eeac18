"""Plain text chunking: paragraph-aware windows with overlap (PDFs and other laid-out formats: ``structured``)."""

from __future__ import annotations

from ..config import ChunkSettings
from ..models import ChunkDraft, ExtractedDoc, Location
from .core import Limits, LineIndex, window_spans


def spans_to_chunks(
    text: str, spans: list[tuple[int, int]], lines: LineIndex, *, page: int | None = None
) -> list[ChunkDraft]:
    out = []
    for cs, ce in spans:
        loc = Location(page=page, line_start=lines.line_at(cs), line_end=lines.line_at(ce), char_start=cs, char_end=ce)
        out.append(ChunkDraft(text=text[cs:ce], location=loc))
    return out


def chunk_text(doc: ExtractedDoc, settings: ChunkSettings) -> list[ChunkDraft]:
    """Windows over the whole text, breaking at paragraphs, then lines, sentences, spaces."""
    lim = Limits.from_settings(settings)
    return spans_to_chunks(doc.text, window_spans(doc.text, 0, len(doc.text), lim), LineIndex(doc.text))
