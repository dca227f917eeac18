"""Pack ranked passages into a prompt block under a token budget, each introduced by a [Source: ...] line.

The [Source: ...] line names the file as ``path_style`` says (context/paths.py): by default relative to the
indexed folder, so a pasted block does not carry ``/home/<user>/…`` into a cloud chat. ``ContextItem.source``
keeps the absolute path for the app's own use (open, reveal, JSON).
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterable, Sequence

from ..models import HEADING_SEP, ContextItem, ContextReport, Location, SearchResult
from .paths import display_path
from .tokens import estimate_tokens

SEPARATOR = "\n\n"


def _absolute(path: str) -> bool:
    return posixpath.isabs(path) or ntpath.isabs(path)


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


def build_context(results: Sequence[SearchResult], budget: int, roots: Iterable[str] = (),
                  path_style: str = "relative") -> ContextReport:
    """Greedy in rank order: take each passage that still fits, skip (and report) each that does not.

    ``roots`` are the indexed folders (for the relative style); ``path_style`` is relative/absolute/name."""
    roots = tuple(roots)
    budget = max(0, int(budget))
    items: list[ContextItem] = []
    dropped: list[ContextItem] = []
    parts: list[str] = []
    used = 0
    sep_tokens = estimate_tokens(SEPARATOR)
    for r in results:
        # a source already shown the caller's way (not absolute, e.g. the MCP server's) is kept as it is
        shown = display_path(r.source, roots, path_style) if _absolute(r.source) else r.source
        header = source_line(shown, r.location)
        body = passage_body(r.text, r.location)
        block = f"{header}\n{body}"
        cost = estimate_tokens(block) + (sep_tokens if parts else 0)
        item = ContextItem(rank=r.rank, source=r.source, location=r.location, header=header, text=body,
                           tokens=estimate_tokens(block), chunk_id=r.chunk_id, shown_source=shown)
        if used + cost <= budget:
            parts.append(block)
            items.append(item)
            used += cost
        else:
            dropped.append(item)
    text = SEPARATOR.join(parts)
    return ContextReport(text=text, tokens_used=estimate_tokens(text), budget=budget, items=items, dropped=dropped)
