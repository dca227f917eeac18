"""Duplicate detection for chunks.

``dedupe_key`` hashes a *normalised body*: Unicode NFKC, lower-cased, every run of whitespace collapsed to one
space, digits and punctuation kept. For Markdown chunks the breadcrumb line (the first line, followed by a blank
line) and the ATX heading lines inside the body are left out, so the same boilerplate ("/// note ... ///",
licence footers, "Edit this page on GitHub") placed under different headings in many files still gets one key.
The store collapses a chunk whose key another file already holds (see store/repository.py).

``dedupe_within`` drops exact repeats inside one document (same key; the first occurrence is kept).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ..models import ChunkDraft
from .core import format_breadcrumb

_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)


def normalise_for_key(text: str, breadcrumb: str | None = None) -> str:
    """The text that ``dedupe_key`` hashes (exposed for tests and debugging)."""
    body = text
    if breadcrumb:
        prefix = breadcrumb + "\n\n"
        if body.startswith(prefix):
            body = body[len(prefix):]
        body = _ATX_LINE.sub("", body)
    body = unicodedata.normalize("NFKC", body).lower()
    return " ".join(body.split())


def dedupe_key(text: str, breadcrumb: str | None = None) -> str:
    """blake2b-128 hex of the normalised body. Pass the chunk's breadcrumb for Markdown (or use chunk_key)."""
    norm = normalise_for_key(text, breadcrumb)
    return hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def chunk_key(chunk: ChunkDraft) -> str:
    """``dedupe_key`` for a ChunkDraft: the breadcrumb is rebuilt from ``location.heading_path``."""
    crumb = format_breadcrumb(chunk.location.heading_path) if chunk.location.heading_path else None
    return dedupe_key(chunk.text, crumb)


def dedupe_within(chunks: list[ChunkDraft]) -> tuple[list[ChunkDraft], int]:
    """Drop chunks whose key repeats an earlier chunk of the same document. Returns (kept, dropped count)."""
    seen: set[str] = set()
    kept: list[ChunkDraft] = []
    for c in chunks:
        key = chunk_key(c)
        if key in seen:
            continue
        seen.add(key)
        kept.append(c)
    return kept, len(chunks) - len(kept)
