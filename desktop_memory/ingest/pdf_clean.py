"""Printer's furniture out of PDF page texts, at ingest, so snippets, the pasted context and embeddings see
only the text a reader sees.

What goes (each rule measured on the eval PDFs, see tests/unit/ingest/test_pdf_clean.py):
* prepress slugs: ``14773_01_1-174_r9jm.qxd 2/10/04 3:51 PM Page 27`` (QuarkXPress/InDesign/PageMaker);
* bar and registration glyphs: ``❚❘❙`` (U+2758–U+275A) and lines made only of box-drawing bars;
* margin line-number columns: 5+ consecutive lines ``1 2 3 … 31 S32 R33`` counting up by one;
* running heads and feet: a short line in the first or last lines of a page that recurs there (page number
  ignored) on at least 25 % of the pages of a document of 4+ pages and about once per page (a table's repeated
  values are not running heads), e.g. ``4TH PASS PAGES``, ``6 FREE CULTURE``; once known it goes wherever it
  sits on a page;
* page numbers and the per-chapter heads that carry them (``“PROPERTY” 109``, ``INTRODUCTION 5``, a bare ``17``):
  a short edge line whose leading or trailing number is the page's printed number, i.e. the PDF page index plus
  an offset that the same kind of line shows on at least PAGE_NUMBER_PAGES pages (so a chapter's head, found on a
  few pages only, goes as well as the book's title); such a head with the page's own number goes from anywhere
  on the page (text order can put it mid-page, above a margin number column);
* a running head glued to the page's last words (``…are “justi128 FREE CULTURE``): cut off, hyphen restored;
* a word hyphenated across a page break (``more and more im-`` | ``portant to``): joined on the first page
  (``important``), as a reader reads it; the page count and order do not change.

Runs in the PDF worker; pure string work, linear in the text.
"""

from __future__ import annotations

import re
from collections import Counter

_SLUG_TAIL = (r"\.(?:qxd|qxp|indd|indb|pmd|p65|fm|sla|ps)\s+\d{1,2}/\d{1,2}/\d{2,4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*"
              r"(?:[AP]M)?\s+Page\s+\S+")
_SLUG_LINE = re.compile(r"^\s*\S+" + _SLUG_TAIL + r"\s*$", re.IGNORECASE)
_SLUG_GLUED = re.compile(r"\d[\w-]*" + _SLUG_TAIL, re.IGNORECASE)  # a job-numbered slug run into a text line
_BAR_GLYPHS = re.compile("[\u2758-\u275a]+")
_BAR_LINE = re.compile("^[\\s\u2500-\u257f\u2580-\u259f\u2758-\u275a|¦]+$")
_LINE_NUMBER = re.compile(r"^[A-Z]?(\d{1,3})[A-Z]?$")
_PAGE_NUMBER = re.compile(r"^\d{1,4}\s+|\s+\d{1,4}$")  # "6 FREE CULTURE", "“PIRACY” 27", "GeoBase® 6"
EDGE_LINES = 4  # running heads/feet live in the first/last lines of a page
MIN_PAGES = 4
RECUR_SHARE = 0.25  # a book alternates two running heads (title / chapter): each is on under half the pages
RUNNING_MAX_CHARS = 60
MIN_RUN = 5
PAGE_NUMBER_PAGES = 3  # pages that must agree on an offset before "number = index + offset" counts as numbering
_NUM = r"\d{1,4}|[ivxlc]{1,7}"  # arabic, or a front matter's lower-case roman numerals
_NUMBERED = re.compile(rf"^({_NUM})(?:\s+(.*))?$|^(.*?)\s+({_NUM})$")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_HYPHEN_END = re.compile(r"(\w\w)-$")
_FRAGMENT_START = re.compile(r"^([a-z]+)([,.;:!?’”)]*)(?:\s+|$)")


def _drop_line_number_runs(lines: list[str]) -> list[str]:
    """Remove runs of MIN_RUN+ lines that are consecutive integers (a proof's margin numbering)."""
    keep = [True] * len(lines)
    i = 0
    while i < len(lines):
        m = _LINE_NUMBER.match(lines[i].strip())
        if not m:
            i += 1
            continue
        j, expect = i + 1, int(m.group(1)) + 1
        while j < len(lines):
            m2 = _LINE_NUMBER.match(lines[j].strip())
            if not m2 or int(m2.group(1)) != expect:
                break
            j, expect = j + 1, expect + 1
        if j - i >= MIN_RUN:
            for k in range(i, j):
                keep[k] = False
        i = max(j, i + 1)
    return [line for line, k in zip(lines, keep, strict=True) if k]


def _strip_page(text: str) -> list[str]:
    lines = []
    for line in text.split("\n"):
        if _SLUG_LINE.match(line) or (line.strip() and _BAR_LINE.match(line)):
            continue
        kept = _SLUG_GLUED.sub("", line) if "Page" in line else line
        lines.append(_BAR_GLYPHS.sub("", kept).rstrip())
    return _drop_line_number_runs(lines)


def _key(line: str) -> str:
    """A line with its page number (a leading or trailing number) taken off, for comparing across pages."""
    return _PAGE_NUMBER.sub("", " ".join(line.split()).lower())


def _edges(lines: list[str]) -> list[int]:
    """Indexes of the first and last EDGE_LINES non-empty lines."""
    idx = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(idx[:EDGE_LINES] + idx[-EDGE_LINES:]))


def place_headings(outline: list[tuple[int, str, int]], pages: list[str]) -> list[tuple[int, str, int, int]]:
    """PDF bookmarks (0-based level, title, 0-based page) → (level, title, page, offset of the title on the page).

    The title is looked for on its page (case and spacing ignored); when it is not there the heading starts at
    the top of the page.
    """
    out = []
    for level, raw, index in outline:
        title = " ".join(raw.replace("›", ">").split())[:120]
        if not title or not 0 <= index < len(pages):
            continue
        page = pages[index]
        offset = _find_loosely(page, title)
        out.append((level + 1, title, index + 1, offset))
    return out


def _find_loosely(page: str, title: str) -> int:
    words = title.lower().split()[:8]
    if not words:
        return 0
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, page.lower())
    if not m:
        return 0
    line_start = page.rfind("\n", 0, m.start()) + 1  # start the section at the heading's line
    return line_start


def _roman(text: str) -> int:
    values = [_ROMAN[c] for c in text]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _printed_number(line: str) -> tuple[str, int] | None:
    """The page number a short edge line carries at its start or end ("“PIRACY” 27", "110 FREE CULTURE", "17",
    "xiv PREFACE"), with its numbering ("arabic" or "roman": each has its own offset)."""
    text = " ".join(line.split())
    if not text or len(text) > RUNNING_MAX_CHARS:
        return None
    m = _NUMBERED.match(text)
    if not m:
        return None
    number = m.group(1) or m.group(4)
    return ("arabic", int(number)) if number.isdigit() else ("roman", _roman(number))


def _drop_page_numbers(split: list[list[str]], running: set[str]) -> None:
    """Remove edge lines carrying the page's printed number (see the module doc), in place."""
    def offset(line: str, index: int) -> tuple[str, int] | None:
        printed = _printed_number(line)
        return (printed[0], printed[1] - index) if printed else None

    offsets: Counter[tuple[str, int]] = Counter()
    for index, lines in enumerate(split):
        offsets.update({off for i in _edges(lines) if (off := offset(lines[i], index)) is not None})
    numbering = {off for off, pages in offsets.items() if pages >= PAGE_NUMBER_PAGES}
    if not numbering:
        return
    # the words of the heads seen carrying the page number at an edge ("“property”"): the same head with this
    # page's own number goes wherever the text order put it (p. 133's "“PROPERTY” 121" sits above a margin
    # number column, mid-page); a bare number has no words and goes only at an edge
    heads = {_key(lines[i]) for index, lines in enumerate(split) for i in _edges(lines)
             if offset(lines[i], index) in numbering} - {""} | running
    for index, page in enumerate(split):
        edges = set(_edges(page))
        lines = [_unglued(line, index, heads, numbering) if i in edges else line for i, line in enumerate(page)]
        split[index] = [line for i, line in enumerate(lines)
                        if offset(line, index) not in numbering or (i not in edges and _key(line) not in heads)]


_GLUED_HEAD = re.compile(r"^(.*[^\W\d_])(\d{1,4}) (\S.{0,58})$")


def _unglued(line: str, index: int, heads: set[str], numbering: set[tuple[str, int]]) -> str:
    """A page's last words with the running head run into them ("…are “justi128 FREE CULTURE": PDFium drops the
    line break after a word hyphenated at the foot of the page) → the words, hyphen restored ("…are “justi-"),
    so the page-break join makes "justified" of it. Only this page's number followed by a known head counts."""
    m = _GLUED_HEAD.match(line.rstrip())
    if m is None or " ".join(m.group(3).split()).lower() not in heads:
        return line
    if ("arabic", int(m.group(2)) - index) not in numbering:
        return line
    words = m.group(1)
    return words + "-" if words[-1].islower() else words


def _join_hyphenated_page_breaks(texts: list[str]) -> list[str]:
    """``…more im-`` + ``portant to…`` on the next page → ``…more important`` + ``to…``."""
    out = list(texts)
    for k in range(len(out) - 1):
        head, nxt = out[k], out[k + 1]
        m, f = _HYPHEN_END.search(head), _FRAGMENT_START.match(nxt)
        if m and f:
            out[k] = head[:-1] + f.group(1) + f.group(2)
            out[k + 1] = nxt[f.end():]
    return out


def clean_pages(pages: list[str]) -> list[str]:
    """The page texts without printer's furniture (page count and order unchanged; each page stripped)."""
    split = [_strip_page(p) if p else [] for p in pages]
    non_empty = sum(1 for lines in split if any(line.strip() for line in lines))
    if non_empty >= MIN_PAGES:
        seen: Counter[str] = Counter()  # pages where the line sits at an edge
        everywhere: Counter[str] = Counter()  # all its occurrences: a table's repeated values are not running heads
        for lines in split:
            seen.update({_key(lines[i]) for i in _edges(lines)})
            everywhere.update(_key(line) for line in lines)
        threshold = max(3, int(RECUR_SHARE * non_empty + 0.999))
        running = {k for k, n in seen.items()
                   if n >= threshold and k and not k.isdigit() and everywhere[k] <= 1.5 * n}
        if running:
            for n, lines in enumerate(split):  # anywhere on the page: text order can put a foot mid-page
                split[n] = [line for line in lines
                            if len(line) > RUNNING_MAX_CHARS or _key(line) not in running]
        _drop_page_numbers(split, running)
    out = []
    for lines in split:
        text = "\n".join(lines).strip()
        out.append(re.sub(r"\n{3,}", "\n\n", text))
    return _join_hyphenated_page_breaks(out)
