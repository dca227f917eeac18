"""Shared chunking primitives: size limits, whitespace trimming, line numbers, and the character windower.

Contract for every chunker (checked by the property tests):

* a chunk's body is exactly ``doc.text[char_start:char_end]`` and is non-empty;
* prose bodies (markdown, text, pdf) are trimmed: ``body == body.strip()``; code bodies keep the indentation
  of their first line (``body == body.rstrip()``, and it starts at a line start or mid-line after a hard split);
* ``len(body) <= max_chars``; Markdown chunk text is ``breadcrumb + "\\n\\n" + body`` with a one-line breadcrumb
  of at most ``BREADCRUMB_MAX_CHARS``, so ``len(text) <= max_chars + BREADCRUMB_MAX_CHARS + 2`` always;
* ``line_start == text.count("\\n", 0, char_start) + 1`` and ``line_end == text.count("\\n", 0, char_end) + 1``.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass

from ..config import ChunkSettings
from ..models import HEADING_SEP

BREADCRUMB_MAX_CHARS = 160

_NONWS = re.compile(r"\S")
_PARA = re.compile(r"\n[^\S\n]*\n")
_NEWLINE = re.compile(r"\n")
_SENTENCE = re.compile(r"[.!?…](?:[\"'”’)\]]*)(?=\s)|[。！？]")
_SPACE = re.compile(r"\s")
_PUNCT = re.compile(r"[;,)}\]>/&|]")


@dataclass(frozen=True)
class Limits:
    """ChunkSettings made safe to compute with (any user-edited values give a working chunker)."""

    target: int
    maxc: int
    overlap: int
    tiny: int  # sections shorter than this are merged into a neighbour when they fit

    @classmethod
    def from_settings(cls, s: ChunkSettings) -> Limits:
        maxc = max(1, int(s.max_chars))
        target = max(1, min(int(s.target_chars), maxc))
        overlap = max(0, min(int(s.overlap_chars), target // 2))
        return cls(target=target, maxc=maxc, overlap=overlap, tiny=max(1, target // 4))


class LineIndex:
    """1-based line numbers for offsets, in O(log n) each (counting from 0 every time is quadratic)."""

    def __init__(self, text: str) -> None:
        self._newlines = [m.start() for m in _NEWLINE.finditer(text)]

    def line_at(self, pos: int) -> int:
        """Number of the line containing ``pos`` = text.count("\\n", 0, pos) + 1."""
        return bisect_left(self._newlines, pos) + 1


def first_nonspace(text: str, start: int, end: int) -> int:
    """Offset of the first non-whitespace char in [start, end), or ``end``."""
    m = _NONWS.search(text, start, end)
    return m.start() if m else end


def rstrip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    s = first_nonspace(text, start, end)
    return s, rstrip_end(text, s, end)


def format_breadcrumb(path: tuple[str, ...] | list[str]) -> str:
    """One line, "A › B › C", cut to BREADCRUMB_MAX_CHARS (with "…") so that headings cannot blow the cap."""
    crumb = HEADING_SEP.join(p for p in path if p)
    crumb = " ".join(crumb.split())
    if len(crumb) > BREADCRUMB_MAX_CHARS:
        crumb = crumb[: BREADCRUMB_MAX_CHARS - 1].rstrip() + "…"
    return crumb


def with_breadcrumb(crumb: str, body: str) -> str:
    return f"{crumb}\n\n{body}" if crumb else body


# -- the windower --------------------------------------------------------------------------------------------


def _last_break(pattern: re.Pattern[str], text: str, lo: int, hi: int, *, use_end: bool) -> int | None:
    """Last boundary position p with lo <= p <= hi (a match's start, or its end when ``use_end``)."""
    best = None
    for m in pattern.finditer(text, lo if not use_end else max(0, lo - 8), min(len(text), hi + 8)):
        p = m.end() if use_end else m.start()
        if p > hi:
            break
        if p >= lo:
            best = p
    return best


_BREAK_LEVELS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (_PARA, False),
    (_NEWLINE, False),
    (_SENTENCE, True),
    (_SPACE, False),
    (_PUNCT, True),
)


def find_break(text: str, lo: int, hi: int) -> int | None:
    """Best place to end a chunk inside [lo, hi]: paragraph > line > sentence > space > punctuation."""
    if lo > hi:
        return None
    for pattern, use_end in _BREAK_LEVELS:
        p = _last_break(pattern, text, lo, hi, use_end=use_end)
        if p is not None:
            return p
    return None


def _overlap_start(text: str, lo: int, ce: int) -> int | None:
    """Where the next chunk should start so that it repeats [lo, ce) from a clean boundary, or None."""
    if lo >= ce:
        return None
    for pattern, _ in _BREAK_LEVELS[:4]:  # content resumes after the boundary, whichever side a break uses
        for m in pattern.finditer(text, lo, ce):
            p = m.end()
            s = first_nonspace(text, p, ce)
            if s < ce:
                return s
            break
    return None


def window_spans(text: str, start: int, end: int, lim: Limits) -> list[tuple[int, int]]:
    """Split text[start:end] into trimmed spans of at most ``lim.maxc`` chars, aiming at ``lim.target``.

    Spans end at the best boundary (see ``find_break``) and the next one starts up to ``lim.overlap`` chars
    earlier at a clean boundary. Window sizes are balanced (1,100 chars → two ~600-char windows, not
    1,000 + 100). Every non-whitespace char of the range lands in at least one span.
    """
    s, end = trim(text, start, end)
    if s >= end:
        return []
    total = end - s
    if total <= lim.target:
        return [(s, end)]
    step = max(1, lim.target - lim.overlap)
    n = max(2, math.ceil(max(1, total - lim.overlap) / step))
    eff = max(1, min(lim.maxc, math.ceil((total + (n - 1) * lim.overlap) / n)))
    ov = min(lim.overlap, eff // 3)
    spans: list[tuple[int, int]] = []
    prev_end = s
    last_fit = max(eff, lim.target)  # the remainder may use the full target: no tiny extra window
    while True:
        if end - s <= last_fit:
            spans.append((s, end))
            return spans
        hi = s + eff
        cut = find_break(text, max(s + eff // 2, prev_end + 1), hi)
        if cut is None:
            cut = find_break(text, max(s + 1, prev_end + 1), hi)
        if cut is None:
            cut = hi
        ce = rstrip_end(text, s, cut)
        spans.append((s, ce))
        ns = _overlap_start(text, max(ce - ov, s + 1), ce) if ov else None
        if ns is None or ns <= s:
            ns = first_nonspace(text, cut, end)
        prev_end, s = ce, ns
        if s >= end:
            return spans
