"""Small, Qt-free text helpers for the GUI: sizes, durations, dates, snippets with highlighted terms."""

from __future__ import annotations

import html
import os
import re
import time
from datetime import datetime

_FTS_NOISE = re.compile(r'["*^():{}\[\]]|\b(?:AND|OR|NOT|NEAR)\b')
_WORD = re.compile(r"\w[\w\-']*", re.UNICODE)


def human_bytes(n: int | float) -> str:
    n = float(n or 0)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def human_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds < 0:
        return "–"
    s = int(round(seconds))
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
    """The words of a query worth highlighting (FTS operators and 1-letter words removed), longest first."""
    cleaned = _FTS_NOISE.sub(" ", query or "")
    terms = {w.lower() for w in _WORD.findall(cleaned) if len(w) > 1}
    return sorted(terms, key=len, reverse=True)


def _term_regex(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    # match at word starts so "index" highlights "indexing" (stemming) but not "reindex" mid-word
    return re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.IGNORECASE)


def snippet(text: str, terms: list[str], max_chars: int = 320) -> str:
    """A window of ``text`` around the first query term, whitespace collapsed, with … at cut ends."""
    flat = " ".join((text or "").split())
    if len(flat) <= max_chars:
        return flat
    rx = _term_regex(terms)
    start = 0
    if rx:
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


def highlight_html(text: str, terms: list[str], style: str = "font-weight:600;") -> str:
    """HTML-escape ``text`` and wrap query-term matches in ``<span style=...>``."""
    rx = _term_regex(terms)
    if not rx:
        return html.escape(text)
    out: list[str] = []
    pos = 0
    for m in rx.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        out.append(f'<span style="{style}">{html.escape(m.group(0))}</span>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def thousands(n: int) -> str:
    return f"{n:,}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 document", "2,048 documents": a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def now() -> float:
    return time.time()
