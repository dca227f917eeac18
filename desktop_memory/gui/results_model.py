"""Results list: a flat model of SearchResults and a delegate that paints each one as a compact card.

Card layout (three lines + snippet):
  ``#1  file.md                         0.0328``
  ``Heading › Sub · lines 10–24 · ~/notes``
  ``[keyword #3 · semantic #1, cos 0.71]``
  ``… snippet with **query terms** highlighted …``

Why a custom delegate: a QListView with a delegate paints only the visible rows, so even top-k 200 stays
instant, and the row stays one focusable item for keyboard navigation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from ..models import WEAK, SearchResult
from .formatting import human_date, mark_terms, short_path, snippet, strip_markup
from .machine_labels import result_name
from .scores import ordering_score, score_texts
from .snippet_paint import SnippetStyle, draw_snippet
from .style import colors

ResultRole = Qt.ItemDataRole.UserRole + 1
IncludedRole = Qt.ItemDataRole.UserRole + 2
SnippetRole = Qt.ItemDataRole.UserRole + 3
MarkedRole = Qt.ItemDataRole.UserRole + 4  # the full text with highlight marks (formatting.MARK_START/END)
ScoreRole = Qt.ItemDataRole.UserRole + 5  # the score shown: the one that ordered the list (gui/scores.py)

SNIPPET_LINES = 3

# a result not ticked for the prompt context: not "excluded", the Library's word for a path removed from the library
LEFT_OUT = "not in context"
_NO_INDEX = QModelIndex()  # Qt's default "no parent" argument: an invalid index, never modified


def is_checked(value: object) -> bool:
    """A CheckStateRole value as a bool (Qt hands it over as the enum or as its int, depending on the caller)."""
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    return isinstance(value, int) and value == Qt.CheckState.Checked.value


class ResultsModel(QAbstractListModel):
    """Holds the current query's results plus the per-result "include in context" flag.

    The flag lives here only, exposed as Qt's CheckStateRole: the results list, the context panel (a proxy view of
    this model) and the context packer all read and write this one place.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self._included: list[bool] = []
        self._snippets: list[str | None] = []  # made when a row is first drawn or read (see _snippet)
        self._marked: list[str] = []
        self._scores: list[str] = []
        self.terms: list[str] = []
        self.query = ""

    def set_results(self, query: str, terms: list[str], results: list[SearchResult],
                    marked: dict[int, str] | None = None) -> None:
        """``marked``: {chunk id: text with the keyword lane's matches marked} (service.highlights); a result
        absent from it shows no highlight (a semantic-only hit). None = not available: query words are marked."""
        self.beginResetModel()
        self.query = query
        self.terms = terms
        self._results = list(results)
        self._included = [r.strength != WEAK for r in results]  # weak matches stay out of the context
        if marked is None:
            self._marked = [mark_terms(r.text, terms) for r in results]
        else:
            self._marked = [marked.get(r.chunk_id, r.text) for r in results]
        # a snippet is made when its row is first drawn or read: the list shows ~6 of the results at once, and the
        # markup stripping is most of the window's own work per search (docs/BENCHMARKS.md, "Search in the window")
        self._snippets = [None] * len(self._results)
        self._scores = score_texts(results)
        self.endResetModel()

    def _snippet(self, row: int) -> str:
        made = self._snippets[row]
        if made is None:
            made = self._snippets[row] = snippet(strip_markup(self._marked[row], self._results[row].kind), self.terms)
        return made

    def marked_text(self, row: int) -> str:
        return self._marked[row] if 0 <= row < len(self._marked) else ""

    def clear(self) -> None:
        self.set_results("", [], [])

    def results(self) -> list[SearchResult]:
        return list(self._results)

    def included_results(self) -> list[SearchResult]:
        return [r for r, inc in zip(self._results, self._included) if inc]

    def result(self, row: int) -> SearchResult | None:
        return self._results[row] if 0 <= row < len(self._results) else None

    def is_included(self, row: int) -> bool:
        return 0 <= row < len(self._included) and self._included[row]

    def set_included(self, row: int, on: bool) -> None:
        self.setData(self.index(row), Qt.CheckState.Checked if on else Qt.CheckState.Unchecked,
                     Qt.ItemDataRole.CheckStateRole)

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: object,
                role: int = Qt.ItemDataRole.CheckStateRole) -> bool:
        row = index.row()
        if role != Qt.ItemDataRole.CheckStateRole or not index.isValid() or not 0 <= row < len(self._included):
            return False
        on = is_checked(value)
        if self._included[row] != on:
            self._included[row] = on
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole, IncludedRole])
        return True

    def row_of_chunk(self, chunk_id: int) -> int:
        for i, r in enumerate(self._results):
            if r.chunk_id == chunk_id:
                return i
        return -1

    # -- Qt model API ------------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_INDEX) -> int:
        return 0 if parent.isValid() else len(self._results)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        r = self._results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"#{r.rank} {result_name(r)} — {r.location.describe()}"
        if role == Qt.ItemDataRole.ToolTipRole:
            what = ordering_score(r)[1]
            return (f"{r.source}\n{r.location.describe()}\n{r.explain()}\n{what} {self._scores[index.row()]} "
                    f"(the list's order)\nmodified {human_date(r.mtime)}")
        if role == Qt.ItemDataRole.AccessibleTextRole:
            name = result_name(r)
            return f"Result {r.rank}: {name}, {r.location.describe()}. {self._snippet(index.row())}"
        if role == ResultRole:
            return r
        if role == IncludedRole:
            return self._included[index.row()]
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if self._included[index.row()] else Qt.CheckState.Unchecked
        if role == SnippetRole:
            return self._snippet(index.row())
        if role == MarkedRole:
            return self._marked[index.row()]
        if role == ScoreRole:
            return self._scores[index.row()]
        return None


@dataclass(frozen=True)
class _Fonts:
    """A result card's three fonts (derived from the view's) and their metrics."""

    key: str
    base: QFont
    bold: QFont
    small: QFont
    base_m: QFontMetrics
    bold_m: QFontMetrics
    small_m: QFontMetrics

    @classmethod
    def of(cls, font: QFont) -> _Fonts:
        base = QFont(font)
        bold = QFont(base)
        bold.setWeight(QFont.Weight.DemiBold)
        small = QFont(base)
        small.setPointSizeF(max(6.0, base.pointSizeF() * 0.9))
        return cls(font.key(), base, bold, small, QFontMetrics(base), QFontMetrics(bold), QFontMetrics(small))


class ResultDelegate(QStyledItemDelegate):
    """Paints a result card; the snippet shows the keyword lane's matches highlighted (snippet_paint.py)."""

    PAD = 8

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._colors: tuple[int, dict[str, QColor]] | None = None  # (palette cache key, its colours)
        self._font_set: tuple[str, _Fonts] | None = None  # (the view font's key, its derived fonts and metrics)

    def _palette_colors(self, pal: QPalette) -> dict[str, QColor]:
        """style.colors for this palette, computed once per palette, not blended again for every card."""
        key = pal.cacheKey()
        if self._colors is None or self._colors[0] != key:
            self._colors = (key, colors(pal))
        return self._colors[1]

    def _fonts(self, option: QStyleOptionViewItem) -> _Fonts:
        """The card's fonts and their metrics, made once per view font (every card of every paint used to make
        three fonts and four metrics again)."""
        key = option.font.key()
        if self._font_set is None or self._font_set[0] != key:
            self._font_set = (key, _Fonts.of(option.font))
        return self._font_set[1]

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        f = self._fonts(option)
        h = f.bold_m.height() + f.small_m.height() * 2 + f.base_m.lineSpacing() * SNIPPET_LINES
        return QSize(200, h + self.PAD * 2 + 10)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        r: SearchResult = index.data(ResultRole)
        if r is None:
            return super().paint(painter, option, index)
        self._paint_result(painter, option, index, r)

    @staticmethod
    def greyed(r: SearchResult, included: bool) -> bool:
        """A weak match, or a result left out of the context, is drawn in the muted colour (never struck out)."""
        return not included or r.strength == "weak"

    def _paint_result(self, painter: QPainter, option: QStyleOptionViewItem,
                      index: QModelIndex | QPersistentModelIndex, r: SearchResult) -> None:
        included: bool = bool(index.data(IncludedRole))
        pal = option.palette
        cols = self._palette_colors(pal)
        painter.save()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        # background: let the style draw selection/hover so it looks native
        opt = QStyleOptionViewItem(option)
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, opt.widget)
        text_col = pal.color(QPalette.ColorGroup.Active if selected else QPalette.ColorGroup.Normal,
                             QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        muted = text_col if selected else cols["muted"]
        if not included:
            muted = QColor(muted)
            muted.setAlpha(150)
        fonts = self._fonts(option)
        base, bold, small = fonts.base, fonts.bold, fonts.small
        rect = option.rect.adjusted(self.PAD + 2, self.PAD, -self.PAD, -self.PAD)
        y = rect.top()

        # line 1: rank, file name, score
        fm_b = fonts.bold_m
        painter.setFont(bold)
        painter.setPen(text_col)
        rank_txt = f"#{r.rank}"
        rank_w = fm_b.horizontalAdvance("#000")
        painter.drawText(QRect(rect.left(), y, rank_w, fm_b.height()), Qt.AlignmentFlag.AlignLeft, rank_txt)
        score_txt = str(index.data(ScoreRole) or "")
        if not included:
            score_txt = f"{LEFT_OUT} · " + score_txt
        fm_s = fonts.small_m
        score_w = fm_s.horizontalAdvance(score_txt) + 4
        name_rect = QRect(rect.left() + rank_w + 4, y, rect.width() - rank_w - score_w - 8, fm_b.height())
        name = fm_b.elidedText(result_name(r), Qt.TextElideMode.ElideMiddle, name_rect.width())
        greyed = self.greyed(r, included) and not selected
        if greyed:  # greyed, never struck through: a list of weak matches must not look deleted
            painter.setPen(muted)
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        painter.setFont(small)
        painter.setPen(muted)
        painter.drawText(QRect(rect.right() - score_w, y, score_w, fm_b.height()),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, score_txt)
        y += fm_b.height()

        # line 2: location · folder · date
        loc = r.location.describe()
        where = " · ".join(x for x in (loc, short_path(os.path.dirname(r.source), 50), human_date(r.mtime)) if x)
        where_w = rect.width() - rank_w - 4
        painter.drawText(QRect(rect.left() + rank_w + 4, y, where_w, fm_s.height()),
                         Qt.AlignmentFlag.AlignLeft, fm_s.elidedText(where, Qt.TextElideMode.ElideRight, where_w))
        y += fm_s.height() + 2

        # line 3: lane badges
        x = rect.left() + rank_w + 4
        for lane, label in r.badges():
            w = fm_s.horizontalAdvance(label) + 12
            badge = QRectF(x, y, w, fm_s.height() + 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(cols["badge_sem"] if lane == "dense" else cols["badge_kw"])
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.drawRoundedRect(badge, 4, 4)
            painter.setPen(cols["badge_text"])
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
            x += w + 4
        if r.strength == WEAK:  # calibrated by retrieve/: a match that probably does not answer the query
            label = "weak match"
            w = fm_s.horizontalAdvance(label) + 12
            badge = QRectF(x, y, w, fm_s.height() + 2)
            painter.setPen(muted)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(badge, 4, 4)
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
        y += fm_s.height() + 6

        # snippet (its marked runs highlighted, clipped to SNIPPET_LINES): one text layout, no rich text
        snip = index.data(SnippetRole) or ""
        text_w = rect.width() - rank_w - 4
        spacing = fonts.base_m.lineSpacing()
        look = SnippetStyle(base, spacing, muted if greyed else text_col, None if selected else cols["term_bg"],
                            QFont.Weight.Bold if selected else QFont.Weight.DemiBold)
        clip_h = spacing * SNIPPET_LINES
        if draw_snippet(painter, snip, look, QPointF(rect.left() + rank_w + 4, y), text_w, SNIPPET_LINES):
            # cut: say so with an ellipsis on the last visible line
            fm = fonts.base_m
            ell_w = fm.horizontalAdvance(" …") + 2
            last = QRectF(rect.left() + rank_w + 4 + text_w - ell_w, y + clip_h - fm.lineSpacing(), ell_w,
                          fm.lineSpacing())
            alternate = bool(opt.features & QStyleOptionViewItem.ViewItemFeature.Alternate)
            role = (QPalette.ColorRole.Highlight if selected
                    else QPalette.ColorRole.AlternateBase if alternate else QPalette.ColorRole.Base)
            painter.fillRect(last, pal.color(role))
            painter.setPen(muted if greyed else text_col)
            painter.setFont(base)
            painter.drawText(last, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, "…")
        painter.restore()




class ResultsView(QListView):
    """The results list with keyboard actions: Enter opens, Space toggles "include in context", Ctrl+C copies."""

    open_requested = Signal(int)
    toggle_requested = Signal(int)
    copy_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setUniformItemSizes(True)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setAccessibleName("Search results")
        self.doubleClicked.connect(lambda idx: self.open_requested.emit(idx.row()))

    def keyPressEvent(self, e: QKeyEvent) -> None:
        row = self.currentIndex().row()
        if row >= 0:
            if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.open_requested.emit(row)
                return
            if e.key() == Qt.Key.Key_Space:
                self.toggle_requested.emit(row)
                return
            if e.matches(QKeySequence.StandardKey.Copy):
                self.copy_requested.emit(row)
                return
        super().keyPressEvent(e)
