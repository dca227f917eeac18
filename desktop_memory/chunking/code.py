"""Source code chunking: windows of whole lines that prefer to end at top-level definitions.

A window holds at most ``code_lines`` lines and ``max_chars`` characters. Among the allowed end points the
best-scoring one wins (a blank line followed by an unindented ``def``/``class``/``fn``/``func``/... beats a
blank line followed by other unindented code or by a method definition, which beats any blank line, which beats
any line end). Windows that end at such a clean boundary need no overlap; others repeat
``code_overlap_lines`` lines.
A single line longer than ``max_chars`` (minified code, data blobs) is split by characters.
Bodies keep the first line's indentation: ``body == doc.text[char_start:char_end]``, right-stripped.
"""

from __future__ import annotations

import re

from ..config import ChunkSettings
from ..models import ChunkDraft, ExtractedDoc, Location
from .core import Limits, LineIndex, first_nonspace, rstrip_end, window_spans

_DEFINITION = re.compile(
    r"(?:@|#\[|(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?(?:abstract\s+)?"
    r"(?:def|class|func|fn|function|interface|struct|enum|trait|impl|type|module|mod|object|record|protocol|"
    r"extension|namespace|package|sub|proc|macro|const|let|var|val|public|private|protected|internal|"
    r"template|CREATE|create|SELECT|select)\b)"
)
_CLOSER = re.compile(r"[)\]}]|end\b|fi\b|done\b|esac\b")


class _Lines:
    """Line boundaries of a text: start offsets and right-stripped ends."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: list[int] = [0]
        self.starts.extend(m.end() for m in re.finditer(r"\n", text))
        self.n = len(self.starts)

    def span(self, i: int) -> tuple[int, int]:
        """(start, end without newline) of line i (0-based)."""
        start = self.starts[i]
        end = self.starts[i + 1] - 1 if i + 1 < self.n else len(self.text)
        return start, end

    def blank(self, i: int) -> bool:
        s, e = self.span(i)
        return first_nonspace(self.text, s, e) >= e

    def block_len(self, a: int, b: int) -> int:
        """Length of lines [a, b) as a right-stripped body."""
        start = self.starts[a]
        end = self.span(b - 1)[1]
        return rstrip_end(self.text, start, end) - start


def _break_score(lines: _Lines, i: int) -> int:
    """How good it is to start a new chunk at line i (0-based)."""
    if i <= 0 or i >= lines.n or lines.blank(i):
        return 0
    s, e = lines.span(i)
    line = lines.text[s:e]
    unindented = not line[:1].isspace()
    after_blank = lines.blank(i - 1)
    if after_blank and unindented and _DEFINITION.match(line):
        return 4
    if after_blank and unindented and not _CLOSER.match(line):
        return 3
    stripped = line.lstrip()
    indent = len(line) - len(stripped)
    if after_blank and indent <= 4 and _DEFINITION.match(stripped):
        return 3  # a method inside a class/impl block
    if after_blank:
        return 1
    if unindented and _DEFINITION.match(line) and not lines.blank(i - 1):
        prev_s, prev_e = lines.span(i - 1)
        prev = lines.text[prev_s:prev_e].lstrip()
        if not prev.startswith(("@", "#[", "//", "#", "/*", "*", "--", ";")):
            return 2
    return 0


def _line_windows(lines: _Lines, lim: Limits, max_lines: int, overlap: int) -> list[tuple[int, int, bool]]:
    """(first line, end line exclusive, is_long_line) windows; long single lines are split later."""
    out: list[tuple[int, int, bool]] = []
    a = 0
    while a < lines.n:
        while a < lines.n and lines.blank(a):
            a += 1
        if a >= lines.n:
            break
        if lines.block_len(a, a + 1) > lim.maxc:
            out.append((a, a + 1, True))
            a += 1
            continue
        b_max = a + 1
        while b_max < min(lines.n, a + max_lines) and lines.block_len(a, b_max + 1) <= lim.maxc:
            b_max += 1
        if b_max >= lines.n:
            out.append((a, lines.n, False))
            break
        b = _best_end(lines, a, b_max)
        out.append((a, b, False))
        nxt = b if _break_score(lines, b) >= 3 else max(a + 1, b - overlap)
        a = nxt
    return out


def _best_end(lines: _Lines, a: int, b_max: int) -> int:
    """The end line (exclusive) in [a + (b_max - a)/2, b_max] with the best break score; later wins ties."""
    lo = a + max(1, (b_max - a) // 2)  # never shorter than half of what would fit
    best, best_score = b_max, _break_score(lines, b_max)
    for b in range(b_max - 1, lo - 1, -1):
        score = _break_score(lines, b)
        if score > best_score:
            best, best_score = b, score
    return best


def chunk_code(doc: ExtractedDoc, settings: ChunkSettings) -> list[ChunkDraft]:
    text = doc.text
    lim = Limits.from_settings(settings)
    max_lines = max(1, int(settings.code_lines))
    overlap = max(0, min(int(settings.code_overlap_lines), max_lines - 1))
    lines = _Lines(text)
    index = LineIndex(text)
    out: list[ChunkDraft] = []
    for a, b, long_line in _line_windows(lines, lim, max_lines, overlap):
        start = lines.starts[a]
        end = rstrip_end(text, start, lines.span(b - 1)[1])
        spans = _split_long_line(text, start, end, lim) if long_line else [(start, end)]
        for cs, ce in spans:
            loc = Location(line_start=index.line_at(cs), line_end=index.line_at(ce), char_start=cs, char_end=ce)
            out.append(ChunkDraft(text=text[cs:ce], location=loc))
    return out


def _split_long_line(text: str, start: int, end: int, lim: Limits) -> list[tuple[int, int]]:
    """A line over max_chars: character windows (the windower breaks at spaces/punctuation when it can)."""
    spans = window_spans(text, start, end, Limits(target=lim.maxc, maxc=lim.maxc, overlap=0, tiny=lim.tiny))
    if spans and spans[0][1] - start <= lim.maxc:
        spans[0] = (start, spans[0][1])  # keep the line's indentation on its first piece when it fits
    return spans

