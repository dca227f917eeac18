"""A result card's snippet (gui/snippet_paint.py): the marked runs, and only they, are painted highlighted; the
text wraps into at most the lines asked for, and a longer text says it was cut."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter

from desktop_memory.gui.formatting import MARK_END, MARK_START
from desktop_memory.gui.snippet_paint import SnippetStyle, draw_snippet

MARK = QColor(255, 230, 0)


def _paint(qapp, text: str, lines: int = 3) -> tuple[QImage, bool]:
    image = QImage(300, 120, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    try:
        style = SnippetStyle(QFont(), QFontMetrics(QFont()).lineSpacing(), QColor("black"), MARK, QFont.Weight.DemiBold)
        cut = draw_snippet(painter, text, style,
                           QPointF(0, 0), 300, lines)
    finally:
        painter.end()
    return image, cut


def _marked_pixels(image: QImage) -> int:
    return sum(image.pixelColor(x, y) == MARK for x in range(0, image.width(), 2) for y in range(image.height()))


def test_only_marked_words_are_highlighted(qapp):
    plain, cut = _paint(qapp, "vitamin D deficiency and sunshine")
    marked, _ = _paint(qapp, f"vitamin D {MARK_START}deficiency{MARK_END} and sunshine")
    assert _marked_pixels(plain) == 0 and _marked_pixels(marked) > 50 and not cut


def test_a_long_text_is_cut_at_the_last_line_and_says_so(qapp):
    words = " ".join(f"word{i}" for i in range(200))
    one, cut_one = _paint(qapp, words, lines=1)
    three, cut_three = _paint(qapp, words, lines=3)
    spacing = QFontMetrics(QFont()).lineSpacing()
    third = range(2 * spacing, 3 * spacing)  # the third line's band: ink only when three lines are drawn
    inked = [sum(img.pixelColor(x, y) != QColor("white") for x in range(0, 300, 2) for y in third)
             for img in (one, three)]
    below = sum(three.pixelColor(x, y) != QColor("white") for x in range(0, 300, 2)
                for y in range(3 * spacing + 1, 120))
    assert cut_one and cut_three and inked[0] == 0 and inked[1] > 0 and below == 0
