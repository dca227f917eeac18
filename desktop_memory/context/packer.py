"""Pack ranked passages into a prompt block under a token budget, each introduced by a [Source: ...] line.

The [Source: ...] line names the file as ``path_style`` says (context/paths.py): by default relative to the
indexed folder, so a pasted block does not carry ``/home/<user>/…`` into a cloud chat. ``ContextItem.source``
keeps the absolute path for the app's own use (open, reveal, JSON).
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


@dataclass
class _Block:
    """One [Source: ...] block of the packed text: a passage, or overlapping passages of one file merged."""

    source: str
    shown: str
    loc: Location
    body: str

    def render(self) -> str:
        return f"{source_line(self.shown, self.loc)}\n{self.body}"


ADJACENT_GAP = 2  # characters (a newline or two) between passages that still read as one stretch of text


def _spliced(first: str, first_span: int, second: str, second_span: int, overlap: int) -> str | None:
    """``first`` followed by what ``second`` adds beyond the ``overlap`` characters they share, or None when the
    texts do not line up with their character ranges."""
    if len(first) == first_span and len(second) == second_span:
        return first + second[overlap:] if overlap < len(second) else first
    # the bodies were trimmed (whitespace at a passage's ends, a heading line): the shared stretch is the longest
    # end of ``first`` that begins ``second``, about ``overlap`` characters long
    for n in range(min(len(first), len(second), overlap + SLACK), max(0, overlap - SLACK) - 1, -1):
        if n and first.endswith(second[:n]):
            return first + second[n:]
    return first if second in first else None


SLACK = 4  # characters of trimmed whitespace a body may differ from its character range by


def merge_passages(a: Location, a_body: str, b: Location, b_body: str) -> tuple[Location, str] | None:
    """The two passages of one file as one (location spanning both, the shared text once) when they overlap or
    touch, else None. Passages on different pages or slides stay apart (each names its own page)."""
    if (a.page, a.slide) != (b.page, b.slide) or a.char_end <= a.char_start or b.char_end <= b.char_start:
        return None
    first, fb, second, sb = (a, a_body, b, b_body) if a.char_start <= b.char_start else (b, b_body, a, a_body)
    gap = second.char_start - first.char_end
    if gap > ADJACENT_GAP:
        return None
    if second.char_end <= first.char_end:  # inside the first
        body = fb
    elif gap > 0:
        body = fb + "\n" + sb
    else:
        spliced = _spliced(fb, first.char_end - first.char_start, sb, second.char_end - second.char_start, -gap)
        if spliced is None:
            return None
        body = spliced
    lines = [x for x in (first.line_start, second.line_start) if x is not None]
    ends = [x for x in (first.line_end, second.line_end, *lines) if x is not None]
    heading = first.heading_path if first.heading_path == second.heading_path else \
        tuple(h for h, k in zip(first.heading_path, second.heading_path) if h == k)
    loc = Location(heading, first.page, min(lines) if lines else None, max(ends) if ends else None,
                   min(first.char_start, second.char_start), max(first.char_end, second.char_end), slide=first.slide)
    return loc, body


def build_context(results: Sequence[SearchResult], budget: int, roots: Iterable[str] = (),
                  path_style: str = "relative") -> ContextReport:
    """Greedy in rank order: take each passage that still fits, skip (and report) each that does not.

    A passage that overlaps (or directly follows) one already taken from the same file is merged into that block:
    one [Source: ...] line spanning both, the shared sentences once (an abstract on one long line gives two
    overlapping passages). Its item then costs only what it added.
    ``roots`` are the indexed folders (for the relative style); ``path_style`` is relative/absolute/name."""
    roots = tuple(roots)
    budget = max(0, int(budget))
    items: list[ContextItem] = []
    dropped: list[ContextItem] = []
    blocks: list[_Block] = []
    owner: list[_Block] = []  # the block each taken item is in
    used = 0
    sep_tokens = estimate_tokens(SEPARATOR)
    for r in results:
        # a source already shown the caller's way (not absolute, e.g. the MCP server's) is kept as it is
        shown = display_path(r.source, roots, path_style) if _absolute(r.source) else r.source
        if r.remote and r.machine:  # a shared library: another machine's file is named with it (docs/SHARED.md)
            shown = f"{r.machine}: {shown}"
        body = passage_body(r.text, r.location)
        merged = _merge_into(blocks, r.source, r.location, body)
        if merged is not None:
            block, loc, new_body = merged
            grown = _Block(block.source, block.shown, loc, new_body)
            cost = estimate_tokens(grown.render()) - estimate_tokens(block.render())
            item = ContextItem(rank=r.rank, source=r.source, location=r.location, header=source_line(shown, loc),
                               text=body, tokens=max(0, cost), chunk_id=r.chunk_id, shown_source=shown)
            if used + cost <= budget:
                block.loc, block.body = loc, new_body
                items.append(item)
                owner.append(block)
                used += cost
                continue
        header = source_line(shown, r.location)
        block_text = f"{header}\n{body}"
        cost = estimate_tokens(block_text) + (sep_tokens if blocks else 0)
        item = ContextItem(rank=r.rank, source=r.source, location=r.location, header=header, text=body,
                           tokens=estimate_tokens(block_text), chunk_id=r.chunk_id, shown_source=shown)
        if used + cost <= budget:
            blocks.append(_Block(r.source, shown, r.location, body))
            items.append(item)
            owner.append(blocks[-1])
            used += cost
        else:
            dropped.append(item)
    for i, block in enumerate(owner):  # every passage of a merged block names the block's (combined) place
        items[i].header = source_line(block.shown, block.loc)
    text = SEPARATOR.join(b.render() for b in blocks)
    return ContextReport(text=text, tokens_used=estimate_tokens(text), budget=budget, items=items, dropped=dropped)


def _merge_into(blocks: list[_Block], source: str, loc: Location, body: str) -> tuple[_Block, Location, str] | None:
    for block in blocks:
        if block.source == source:
            merged = merge_passages(block.loc, block.body, loc, body)
            if merged is not None:
                return block, *merged
    return None
