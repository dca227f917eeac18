"""A result card's snippet drawn straight from its marked text with one QTextLayout, a few lines at most.

Why not rich text: a QTextDocument given HTML for every card at every paint parsed the markup, built a document and
laid it out in full before three lines were drawn; that was most of the results list's paint, the last step between
a search's answer and the frame a person sees (docs/BENCHMARKS.md, "Search in the window"). Here the marks become
format ranges, lines are laid out only up to the last one shown, and the glyphs are drawn once.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QTextCharFormat, QTextLayout, QTextOption

from .formatting import marked_ranges


@dataclass(frozen=True)
class SnippetStyle:
    """How the snippet looks on this card: its font, text colour and the look of a marked run."""

    font: QFont
    line_spacing: int  # the font's (the card keeps its metrics: not measured again for every card)
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
    (more text than lines), so the caller can show an ellipsis. Lines are ``style.line_spacing`` apart."""
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
    spacing = style.line_spacing
    layout.beginLayout()
    lines = 0
    while lines <= max_lines:  # one line more than shown: there, the text goes on (cut)
        line = layout.createLine()
        if not line.isValid():
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
    return lines > max_lines


__all__ = ["SnippetStyle", "draw_snippet"]
