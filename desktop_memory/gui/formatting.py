"""Small, Qt-free text helpers for the GUI: sizes, durations, dates, snippets with highlighted terms.

Highlights come marked in the text itself: MARK_START/MARK_END (two private-use characters, the same ones
retrieve/highlight.py asks FTS5 to put around each token the keyword lane matched). Snippets strip Markdown/HTML
markup around them; only what is *shown* is cleaned: the pasted context block keeps the exact text.
"""

from __future__ import annotations

import html
import math
import os
import re
import time
from datetime import datetime

_FTS_NOISE = re.compile(r'["*^():{}\[\]]|\b(?:AND|OR|NOT|NEAR)\b')
_WORD = re.compile(r"\w[\w\-']*", re.UNICODE)

MARK_START = "\ue000"  # == retrieve.highlight.MARK_START (the GUI does not import the core for two constants)
MARK_END = "\ue001"
_MARKS = MARK_START + MARK_END
_MARK_SPLIT = re.compile(f"([{_MARKS}])")
# the query's words a person does not expect to see lit up (FTS5 ignores them too: retrieve/query_text.py)
_STOP_TEXT = (
    "a about above after again against all am an and any are as at be because been before being below between "
    "both but by can could did do does doing down during each few for from further had has have having he her "
    "here hers him his how i if in into is it its just me more most my no nor not now of off on once only or "
    "other our out over own same she should so some such than that the their them then there these they this "
    "those through to too under until up very was we were what when where which while who whom why will with "
    "would you your"
)
STOPWORDS = frozenset(_STOP_TEXT.split())

# Markdown / HTML markup that reads as noise in a one-paragraph snippet
_FENCE = re.compile(r"^\s*(```+|~~~+)[^\n]*$", re.MULTILINE)
_INCLUDE = re.compile(r"\{\*.*?\*\}", re.DOTALL)  # mkdocs/fastapi "{* ../src/file.py hl[3] *}"
_ATTRS = re.compile(r"\{\s*[#.][^{}\n]*\}")  # heading attributes "{ #anchor }"
_ADMONITION = re.compile(r"^\s*///\s*(\w+)?(?:\s*\|\s*([^\n]*))?[^\n]*$", re.MULTILINE)  # "/// tip | Title" … "///"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_QUOTE = re.compile(r"^\s{0,3}>\s?", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")  # "[text][]", "[text][ref]"
_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S+.*$", re.MULTILINE)  # "[ref]: https://…"
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])")
_CODE = re.compile(r"`+")


def human_bytes(n: int | float) -> str:
    n = float(n or 0)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def human_duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "–"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}:{s:02d}"
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}"


def human_date(ts: float | None) -> str:
    """Today → time only; this year → "12 Mar 14:05"; older → "12 Mar 2021"."""
    if not ts:
        return ""
    dt = datetime.fromtimestamp(ts)
    now = datetime.now()
    if dt.date() == now.date():
        return dt.strftime("%H:%M")
    if dt.year == now.year:
        return dt.strftime("%d %b %H:%M")
    return dt.strftime("%d %b %Y")


def short_path(path: str, max_len: int = 60) -> str:
    """Shorten a path in the middle, keeping the file name: ``/home/…/notes/file.md``."""
    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home + os.sep):
        path = "~" + path[len(home):]
    if len(path) <= max_len:
        return path
    head, tail = os.path.split(path)
    keep = max_len - len(tail) - 2
    if keep <= 4:
        return "…" + path[-(max_len - 1):]
    return head[: keep // 2] + "…" + head[-(keep - keep // 2):] + os.sep + tail


def query_terms(query: str) -> list[str]:
    """The words of a query worth highlighting when the keyword lane's own marks are not available (FTS
    operators, 1-letter words and stop words removed), longest first."""
    cleaned = _FTS_NOISE.sub(" ", query or "")
    terms = {w.lower() for w in _WORD.findall(cleaned) if len(w) > 1}
    content = {t for t in terms if t not in STOPWORDS}
    return sorted(content or terms, key=len, reverse=True)


def strip_markup(text: str, kind: str = "markdown") -> str:
    """Markdown/HTML markup removed for display (code keeps every character: it is the content).

    Highlight marks survive. Only for what a snippet shows; never for what gets copied."""
    if kind == "code" or not text:
        return text or ""
    t = _INCLUDE.sub(" ", text)
    t = _ATTRS.sub("", t)
    t = _FENCE.sub("", t)
    t = _ADMONITION.sub(
        lambda m: (m.group(1).capitalize() + ":" + (" " + m.group(2).strip() if m.group(2) else "")) if m.group(1)
        else "", t)
    t = _TABLE_RULE.sub("", t)
    t = _HEADING.sub("", t)
    t = _QUOTE.sub("", t)
    t = _BULLET.sub("", t)
    t = _IMAGE.sub(r"\1", t)
    t = _LINK_DEF.sub("", t)
    t = _LINK.sub(r"\1", t)
    t = _REF_LINK.sub(r"\1", t)
    t = _TAG.sub("", t)
    t = _STRONG.sub(r"\2", t)
    t = _EM.sub(r"\1", t)
    t = _CODE.sub("", t)
    return html.unescape(t)


def mark_terms(text: str, terms: list[str]) -> str:
    """Fallback marking (no keyword-lane marks, e.g. a semantic-only service): whole query words and their
    word-start extensions, stop words never."""
    rx = _term_regex(terms)
    if not rx or MARK_START in text:
        return text
    return rx.sub(lambda m: MARK_START + m.group(0) + MARK_END, text)


def unmark(text: str) -> str:
    return text.translate({ord(MARK_START): None, ord(MARK_END): None})


def marked_ranges(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """(text without marks, [(start, length) of each marked run]); a mark left open at a cut end runs to the end."""
    out: list[str] = []
    ranges: list[tuple[int, int]] = []
    start = -1
    pos = 0
    for piece in _MARK_SPLIT.split(marked):
        if piece == MARK_START:
            start = pos
        elif piece == MARK_END:
            if 0 <= start < pos:
                ranges.append((start, pos - start))
            start = -1
        elif piece:
            out.append(piece)
            pos += len(piece)
    if 0 <= start < pos:
        ranges.append((start, pos - start))
    return "".join(out), ranges


def _term_regex(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    # match at word starts so "index" highlights "indexing" (stemming) but not "reindex" mid-word
    return re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.IGNORECASE)


def snippet(text: str, terms: list[str], max_chars: int = 320) -> str:
    """A window of ``text`` around the first highlight mark (or query term), whitespace collapsed, with … at cut
    ends. Marks do not count towards ``max_chars``."""
    flat = " ".join((text or "").split())
    if len(unmark(flat)) <= max_chars:
        return flat
    max_chars += flat.count(MARK_START) * 2  # roughly: marks are invisible
    rx = _term_regex(terms)
    start = 0
    first = flat.find(MARK_START)
    if first >= 0:
        start = max(0, first - max_chars // 4)
    elif rx:
        m = rx.search(flat)
        if m:
            start = max(0, m.start() - max_chars // 4)
    end = min(len(flat), start + max_chars)
    start = max(0, end - max_chars)
    # cut on word boundaries
    if start > 0:
        sp = flat.find(" ", start)
        start = sp + 1 if 0 <= sp < start + 30 else start
    if end < len(flat):
        sp = flat.rfind(" ", start, end)
        end = sp if sp > end - 30 else end
    return ("… " if start > 0 else "") + flat[start:end] + (" …" if end < len(flat) else "")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 document", "2,048 documents": a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def now() -> float:
    return time.time()
