"""Chunkers: ExtractedDoc → list[ChunkDraft], dispatching on the document kind.

``chunk_document`` does not drop duplicates; call ``dedupe_within`` on its result (the pipeline does) and use
``chunk_key``/``dedupe_key`` for cross-file boilerplate detection. Invariants are documented in ``core``.
"""

from __future__ import annotations

from ..config import ChunkSettings
from ..models import ChunkDraft, ExtractedDoc
from .code import chunk_code
from .core import BREADCRUMB_MAX_CHARS, format_breadcrumb
from .dedupe import chunk_key, dedupe_key, dedupe_within
from .markdown import chunk_markdown
from .structured import chunk_structured
from .text import chunk_text

__all__ = [
    "BREADCRUMB_MAX_CHARS",
    "chunk_document",
    "chunk_key",
    "dedupe_key",
    "dedupe_within",
    "format_breadcrumb",
]

_CHUNKERS = {
    "markdown": chunk_markdown, "code": chunk_code, "text": chunk_text,
    # readers that know pages/slides and headings: PDF, Word/ODF/RTF, slides, e-books, web pages
    "pdf": chunk_structured, "document": chunk_structured, "slides": chunk_structured, "ebook": chunk_structured,
    "html": chunk_structured,
}


def chunk_document(doc: ExtractedDoc, settings: ChunkSettings) -> list[ChunkDraft]:
    """Chunks for one document, in document order; deterministic for the same text and settings."""
    chunker = _CHUNKERS.get(doc.kind, chunk_text)
    return chunker(doc, settings)
