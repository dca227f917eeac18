"""Just enough Markdown structure for chunking: front matter, ATX/setext headings, fenced code blocks.

Not a Markdown renderer: it only answers "where are the headings (outside code fences) and what do they say".
Shared by the chunker and by the reader (which takes the document title from here).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(={2,}|-{3,})[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^(?: {4}|\t| {0,3}(?:[-*+>|]|\d{1,9}[.)])(?:\s|$)| {0,3}<)")
_ATTR_BLOCK = re.compile(r"\s*\{\s*[#.:][^{}]*\}\s*$")  # "{ #anchor }", "{#id .class}"
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_FM_TITLE = re.compile(r"^title\s*[:=]\s*(.*?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Heading:
    """A heading outside code fences. ``start:end`` covers its line(s) without the final newline."""

    level: int
    title: str  # cleaned for breadcrumbs (anchors, links, tags, backticks removed)
    start: int
    end: int


def _lines(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(line_start, line_end_without_newline) for each line from ``start``."""
    pos = start
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        yield pos, end
        pos = end + 1


def front_matter_end(text: str) -> int:
    """Offset just past a closed YAML (---) or TOML (+++) front-matter block at the very start, else 0."""
    first = text.split("\n", 1)[0].rstrip()
    if first not in ("---", "+++"):
        return 0
    closers = ("---", "...") if first == "---" else ("+++",)
    nl = text.find("\n")
    if nl < 0:
        return 0
    for ls, le in _lines(text, nl + 1):
        if text[ls:le].rstrip() in closers:
            return min(le + 1, len(text))
    return 0


def front_matter_title(text: str) -> str | None:
    """``title:`` (YAML) or ``title =`` (TOML) from the front matter, unquoted; None when absent or empty."""
    end = front_matter_end(text)
    if not end:
        return None
    m = _FM_TITLE.search(text, 0, end)
    if not m:
        return None
    value = m.group(1).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    value = value.strip()
    if not value or value in ("|", ">", "|-", ">-"):
        return None
    return clean_heading(value) or None


def clean_heading(title: str) -> str:
    """Heading text for a breadcrumb: no ``{ #anchor }``, links reduced to their text, no tags or backticks."""
    t = _ATTR_BLOCK.sub("", title)
    t = _LINK.sub(r"\1", t)
    t = _TAG.sub("", t)
    t = t.replace("`", "").replace("**", "").replace("__", "")
    return " ".join(t.split())


def iter_headings(text: str, start: int = 0) -> list[Heading]:
    """All ATX headings (and conservative setext ones) from ``start`` on, skipping fenced code and comments."""
    out: list[Heading] = []
    fence: str | None = None  # the opening fence run while inside a fenced block
    in_comment = False
    prev: tuple[int, int] | None = None  # previous line if it could be a setext heading's text
    prev_blank = True
    for ls, le in _lines(text, start):
        line = text[ls:le]
        if fence is not None:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
            prev, prev_blank = None, False
            continue
        if in_comment:
            in_comment = "-->" not in line
            prev, prev_blank = None, False
            continue
        stripped = line.strip()
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            prev, prev_blank = None, False
            continue
        if stripped.startswith("<!--") and "-->" not in stripped:
            in_comment = True
            prev, prev_blank = None, False
            continue
        h = _atx(line, ls, le)
        if h is None and prev is not None and _SETEXT.match(line):
            title = clean_heading(text[prev[0]:prev[1]])
            if title:
                h = Heading(1 if line.strip()[0] == "=" else 2, title, prev[0], le)
        if h is not None:
            if out and out[-1].start == h.start:  # cannot happen, but keep headings unique
                out.pop()
            out.append(h)
            prev, prev_blank = None, False
            continue
        candidate = bool(stripped) and prev_blank and not _NOT_PARAGRAPH.match(line)
        prev = (ls, le) if candidate else None
        prev_blank = not stripped
    return out


def _atx(line: str, ls: int, le: int) -> Heading | None:
    m = _ATX.match(line)
    if not m:
        return None
    raw = _ATX_CLOSING.sub("", m.group(2) or "")
    title = clean_heading(raw)
    if not title:
        return None
    return Heading(len(m.group(1)), title, ls, le)


def first_h1(text: str) -> str | None:
    """Title of the first level-1 heading after any front matter."""
    for h in iter_headings(text, front_matter_end(text)):
        if h.level == 1:
            return h.title
    return None
