"""The text every document reader lays out: paragraphs, heading lines with levels, pages/slides, notes.

Readers push blocks in reading order; ``result()`` gives the plain dict that crosses the worker's pipe
(see ``office/__init__.py``). Heading titles are cleaned for breadcrumbs (one line, no " › ", capped).
"""

from __future__ import annotations

import re
from typing import Any

_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
TITLE_MAX = 120


class DocumentProblem(Exception):
    """A file we cannot index, with the reason a person reads. ``status``: "failed" (broken) or "skipped"."""

    def __init__(self, reason: str, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def clean_inline(text: str) -> str:
    """One paragraph's text: runs of spaces collapsed, control characters gone, line breaks kept."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n"))
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def clean_title(text: str) -> str:
    """One line for a breadcrumb: no " › " (our separator), no trailing permalink marks ("¶", "#")."""
    title = " ".join(text.replace("›", ">").split()).rstrip(" ¶#§🔗")
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1].rstrip() + "…"


class TextBuilder:
    """Accumulates blocks; paragraphs are separated by blank lines, table rows by single newlines."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._len = 0
        self.headings: list[tuple[int, str, int, int]] = []
        self.units: list[tuple[int, int, int]] = []  # (number, start, end) for pages/slides
        self._unit: tuple[int, int] | None = None
        self._need_sep = False

    @property
    def pos(self) -> int:
        return self._len

    def _emit(self, s: str) -> None:
        self._parts.append(s)
        self._len += len(s)

    def _separate(self, sep: str = "\n\n") -> None:
        if self._need_sep:
            self._emit(sep)
        self._need_sep = False

    def paragraph(self, text: str, *, tight: bool = False) -> None:
        text = clean_inline(text)
        if not text:
            return
        self._separate("\n" if tight else "\n\n")
        self._emit(text)
        self._need_sep = True

    def heading(self, level: int, text: str, *, in_text: bool = True) -> None:
        """A heading line (``in_text``) or a position marker (the title is not in the text, only in breadcrumbs)."""
        title = clean_title(clean_inline(text))
        if not title:
            return
        if not in_text:
            self._separate()
            self.headings.append((level, title, self._len, self._len))
            return
        line = " ".join(clean_inline(text).split())
        self._separate()
        start = self._len
        self._emit(line)
        self.headings.append((level, title, start, self._len))
        self._need_sep = True

    def table_row(self, cells: list[str]) -> None:
        cells = [" ".join(clean_inline(c).split()) for c in cells]
        if not any(cells):
            return
        while cells and not cells[-1]:
            cells.pop()
        self.paragraph(" | ".join(cells), tight=True)

    def start_unit(self, number: int) -> None:
        self.end_unit()
        self._separate()
        self._unit = (number, self._len)

    def end_unit(self) -> None:
        if self._unit is not None:
            number, start = self._unit
            self.units.append((number, start, self._len))
            self._unit = None
            if self._len > start:
                self._need_sep = True

    def text(self) -> str:
        return "".join(self._parts)

    def result(self, kind: str, title: str | None = None, warnings: list[str] | None = None) -> dict[str, Any]:
        self.end_unit()
        text = self.text()
        if not text.strip():
            raise DocumentProblem("no text found in the document", "skipped")
        return {"ok": True, "kind": kind, "text": text, "headings": self.headings,
                "pages": self.units or None, "title": clean_title(title) if title else None,
                "warnings": warnings or []}


def bounded_int(text: str | None, default: int, hi: int) -> int:
    """An XML attribute's number: ASCII digits only, at most ``hi``; else ``default``. A hostile file's
    ``text:c="999999999999"`` would otherwise ask for a terabyte of spaces, and ``"²"`` passes ``isdigit``."""
    if text and len(text) <= 9 and text.isascii() and text.isdigit():
        return min(int(text), hi)
    return default
