"""The window fits a 1024×600 screen with everything showing (results, the progress panel, banners).

A widget's minimum size hint is what Qt refuses to squeeze it below; the main window's minimum is the sum of its
parts', and when a banner or the progress panel appears Qt *grows the window* past the screen to honour it. The
scrollable parts (lists, text views, the empty-state card) therefore get explicit, small minimums here: they scroll
or show less, and the window stays on the screen. tests/gui/test_window_words_and_layout.py checks the total.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QSizePolicy

from .messages import make_room_for_messages

if TYPE_CHECKING:
    from .main_window import MainWindow

SMALL_SCREEN = (1024, 600)
TITLE_BAR = 40  # a window manager's title bar and frame, on the smallest screens we support
SCROLLED_MIN_HEIGHT = 36  # a list or text view shows at least a line or two, and scrolls


def fit_small_screens(w: MainWindow) -> None:
    make_room_for_messages(w.status, w.status.counts, w.status.semantic)  # a transient message is never cut
    cp, pv = w.context_panel, w.preview
    for view in (cp.items, cp.block, pv.browser, w.results_view, w.library.tree, w.progress.problems):
        view.setMinimumHeight(SCROLLED_MIN_HEIGHT)
    w.results_stack.setMinimumHeight(SCROLLED_MIN_HEIGHT * 2)  # the empty-state card is centred: it may clip
    w.empty_state.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
    # the status bar's texts give way (their tooltips keep the whole) before the window grows past the screen
    for label in (w.status.counts, w.status.semantic, w.status.embedder):
        label.setMinimumWidth(40)
        label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
