"""Pack ranked passages into a prompt block under a token budget, each introduced by a [Source: ...] line."""

from __future__ import annotations

from collections.abc import Sequence

from ..models import ContextItem, ContextReport, Location, SearchResult
from .tokens import estimate_tokens

SEPARATOR = "\n\n"
HEADING_SEP = " › "


def source_line(source: str, loc: Location) -> str:
    """``[Source: /path/file.md § Heading › Sub · p. 3 · lines 10–24]`` (parts that apply; "slide 4" for slides)."""
    line = f"[Source: {source}"
    if loc.heading_path:
        line += " § " + HEADING_SEP.join(loc.heading_path)
    for part in (loc.unit_label(), loc.lines_label()):
        if part:
            line += f" · {part}"
    return line + "]"


def passage_body(text: str, loc: Location) -> str:
    """The chunk text without its heading breadcrumb line (the [Source: ...] line already names the heading)."""
    if loc.heading_path:
        crumb = HEADING_SEP.join(loc.heading_path)
        if text.startswith(crumb + "\n"):
            return text[len(crumb) :].lstrip("\n")
    return text.strip()


def build_context(results: Sequence[SearchResult], budget: int) -> ContextReport:
    """Greedy in rank order: take each passage that still fits, skip (and report) each that does not."""
    budget = max(0, int(budget))
    items: list[ContextItem] = []
    dropped: list[ContextItem] = []
    parts: list[str] = []
    used = 0
    sep_tokens = estimate_tokens(SEPARATOR)
    for r in results:
        header = source_line(r.source, r.location)
        body = passage_body(r.text, r.location)
        block = f"{header}\n{body}"
        cost = estimate_tokens(block) + (sep_tokens if parts else 0)
        item = ContextItem(rank=r.rank, source=r.source, location=r.location, header=header, text=body,
                           tokens=estimate_tokens(block), chunk_id=r.chunk_id)
        if used + cost <= budget:
            parts.append(block)
            items.append(item)
            used += cost
        else:
            dropped.append(item)
    text = SEPARATOR.join(parts)
    return ContextReport(text=text, tokens_used=estimate_tokens(text), budget=budget, items=items, dropped=dropped)
