"""A result card's snippet drawn straight from its marked text with one QTextLayout, a few lines at most.

Why not rich text: a QTextDocument given HTML for every card at every paint parsed the markup, built a document and
laid it out in full before three lines were drawn; that was most of the results list's paint, the last step between
a search's answer and the frame a person sees (docs/BENCHMARKS.md, "Search in the window"). Here the marks become
format ranges, lines are laid out only up to the last one shown, and the glyphs are drawn once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QTextCharFormat, QTextLayout, QTextOption

from .formatting import MARK_END, MARK_START

_MARKS = re.compile(f"([{MARK_START}{MARK_END}])")


def marked_ranges(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """(text without marks, [(start, length) of each marked run]); a mark left open at a cut end runs to the end."""
    out: list[str] = []
    ranges: list[tuple[int, int]] = []
    start = -1
    pos = 0
    for piece in _MARKS.split(marked):
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


@dataclass(frozen=True)
class SnippetStyle:
    """How the snippet looks on this card: its font, text colour and the look of a marked run."""

    font: QFont
    color: QColor
    mark_background: QColor | None  # None: a selected card marks by weight and underline instead
    mark_weight: QFont.Weight


def _mark_format(style: SnippetStyle) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setFontWeight(style.mark_weight)
    if style.mark_background is not None:
        fmt.setBackground(QBrush(style.mark_background))
    else:
        fmt.setFontUnderline(True)
    return fmt


def draw_snippet(painter: QPainter, marked: str, style: SnippetStyle, top_left: QPointF, width: float,
                 max_lines: int) -> bool:
    """Draw ``marked`` wrapped to ``width`` in at most ``max_lines`` lines from ``top_left``; True when it was cut
    (more text than lines), so the caller can show an ellipsis. Lines are spaced as the font's line spacing."""
    text, ranges = marked_ranges(marked)
    layout = QTextLayout(text, style.font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    if ranges:
        fmt = _mark_format(style)
        spans = []
        for start, length in ranges:
            span = QTextLayout.FormatRange()
            span.start, span.length, span.format = start, length, fmt
            spans.append(span)
        layout.setFormats(spans)
    spacing = QFontMetrics(style.font).lineSpacing()
    layout.beginLayout()
    lines = 0
    cut = False
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        if lines == max_lines:
            cut = True  # one line more than shown: the text goes on
            line.setLineWidth(width)
            line.setPosition(QPointF(0, lines * spacing))
            break
        line.setLineWidth(width)
        line.setPosition(QPointF(0, lines * spacing))
        lines += 1
    layout.endLayout()
    painter.save()
    painter.setPen(style.color)
    painter.setClipRect(QRectF(top_left.x(), top_left.y(), width, max_lines * spacing), Qt.ClipOperation.IntersectClip)
    layout.draw(painter, top_left)
    painter.restore()
    return cut


__all__ = ["SnippetStyle", "draw_snippet", "marked_ranges"]
